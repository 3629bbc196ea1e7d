// The observation rule, on staged worlds: the nearest visible instance of each block type and mob inside the
// field of view, up to 64 m, by a line of sight to any part of it — found at every facing for a trunk in plain
// view (the old 5° × 4° ray grid missed a trunk at 20 m 28 % of the time), hidden by occluders, the same with
// and without the simulator's column store (the mineflayer backend reads blocks one by one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_TASKS } from '../src/tasks';
import { S, mobNameIndex, nameIndex } from '../src/env/game/registry';
import {
  DEG,
  EYE_HEIGHT,
  LIDAR_COUNT,
  ViewResult,
  allocChunkColumn,
  freeChunkColumn,
  nearestDict,
  observeView,
  type BlockAccess,
  type ChunkColumnMemory,
  type ColumnStore,
  type ViewEntity,
} from '../src/env/game/observe';
import { SimWorld } from '../src/env/sim/world';

const GROUND = 63; // grass_block top layer; the agent's feet at y 64
const FEET = GROUND + 1;

/** A flat world (grass over stone) plus placed blocks, readable with or without a column store. */
class FlatWorld implements BlockAccess, ColumnStore {
  readonly minY = 0;
  readonly maxY = 128;
  readonly below = S.bedrock;
  readonly above = S.air;
  private readonly placed = new Map<string, number>();
  private readonly columns = new Map<string, ChunkColumnMemory>();
  constructor(readonly useStore: boolean) {}
  get columnStore(): ColumnStore | undefined {
    return this.useStore ? this : undefined;
  }
  set(x: number, y: number, z: number, s: number): void {
    this.placed.set(`${x},${y},${z}`, s);
    for (const c of this.columns.values()) freeChunkColumn(c);
    this.columns.clear();
  }
  stateAt(x: number, y: number, z: number): number {
    const p = this.placed.get(`${x},${y},${z}`);
    if (p !== undefined) return p;
    return y < GROUND ? S.stone : y === GROUND ? S.grass_block : S.air;
  }
  column(cx: number, cz: number): ChunkColumnMemory {
    const key = `${cx},${cz}`;
    let c = this.columns.get(key);
    if (!c) {
      c = allocChunkColumn(128 * 256);
      const { cells, heights } = c;
      heights.fill(-1);
      for (let y = 0; y < 128; y++)
        for (let lz = 0; lz < 16; lz++)
          for (let lx = 0; lx < 16; lx++) {
            const s = this.stateAt(cx * 16 + lx, y, cz * 16 + lz);
            cells[(y << 8) | (lz << 4) | lx] = s;
            if (s !== S.air) heights[(lz << 4) | lx] = y;
          }
      this.columns.set(key, c);
    }
    return c;
  }
}

const view = (w: BlockAccess, yawDeg: number, pitchDeg = 0, mobs: ViewEntity[] = [], at = { x: 0.5, z: 0.5 }) => {
  const out = new ViewResult();
  observeView(w, { x: at.x, y: FEET, z: at.z, yaw: yawDeg * DEG, pitch: pitchDeg * DEG }, mobs, out);
  return out;
};
const LOG = nameIndex('oak_log');

for (const distance of [20, 40, 62]) {
  test(`a 2-block trunk in plain view ${distance} m ahead is seen at every facing that keeps it inside the field of view`, () => {
    const w = new FlatWorld(true);
    w.set(0, FEET, -distance, S.oak_log);
    w.set(0, FEET + 1, -distance, S.oak_log);
    // Bearing of the trunk's centre from the eyes: straight ahead at yaw 0. Turn in 0.1° steps across ±34°
    // (relative yaw positive = right: facing yaw +a turns left, so the trunk appears at relative yaw +a).
    let missed = 0,
      total = 0;
    for (let a = -34; a <= 34; a += 0.1) {
      const v = view(w, a);
      total++;
      if (v.dist[LOG] === Infinity) missed++;
      else assert.ok(Math.abs(v.yaw[LOG]! - a * DEG) < 2 * DEG, `relative yaw ${v.yaw[LOG]! / DEG}° for the trunk at ${a}°`);
    }
    assert.equal(missed, 0, `missed the trunk at ${missed} of ${total} facings`);
  });
}

test('beyond 64 m nothing is seen; the reported distance is to the nearest point of the block', () => {
  const w = new FlatWorld(true);
  w.set(0, FEET + 1, -40, S.oak_log); // eye level: nearest point straight ahead, 39.5 m from the eyes at z 0.5
  w.set(0, FEET + 1, -70, S.diamond_ore);
  const v = view(w, 0);
  assert.ok(Math.abs(v.dist[LOG]! - 39.5) < 1e-9, `log at ${v.dist[LOG]}`);
  assert.equal(v.dist[nameIndex('diamond_ore')], Infinity);
});

test('a block whose lower part is behind a wall is seen by its visible top; one entirely behind the wall is not', () => {
  const w = new FlatWorld(true);
  for (let x = -3; x <= 3; x++) {
    w.set(x, FEET, -5, S.stone);
    w.set(x, FEET + 1, -5, S.stone);
  }
  // A 4-high trunk 10 m out: its top two blocks rise above the 2-high wall's sight line.
  for (let y = FEET; y < FEET + 4; y++) w.set(0, y, -10, S.oak_log);
  // A diamond ore at the trunk's foot is hidden.
  w.set(1, FEET, -10, S.diamond_ore);
  const v = view(w, 0);
  assert.ok(v.dist[LOG]! < 64, 'log top visible');
  assert.ok(v.dist[LOG]! > 9, 'the visible part is the far trunk');
  assert.equal(v.dist[nameIndex('diamond_ore')], Infinity);
  // Without the wall the nearest log block (at eye level) is nearer than the visible top was.
  const open = new FlatWorld(true);
  for (let y = FEET; y < FEET + 4; y++) open.set(0, y, -10, S.oak_log);
  assert.ok(view(open, 0).dist[LOG]! < v.dist[LOG]!);
});

test('mobs: an occluded cow is not seen, a cow whose head shows above a wall is, and one at 63 m in plain view is', () => {
  const w = new FlatWorld(true);
  const cow = (x: number, z: number): ViewEntity => ({ nameIndex: mobNameIndex('cow'), x, y: FEET, z, width: 0.9, height: 1.4 });
  const COW = mobNameIndex('cow');
  for (let x = -3; x <= 3; x++) for (let y = FEET; y < FEET + 3; y++) w.set(x, y, -5, S.stone); // 3-high wall
  assert.equal(view(w, 0, 0, [cow(0.5, -8.5)]).dist[COW], Infinity, 'behind a 3-high wall');
  const low = new FlatWorld(true);
  for (let x = -3; x <= 3; x++) low.set(x, FEET, -5, S.stone); // 1-high wall: the cow's back and head show
  assert.ok(view(low, 0, 0, [cow(0.5, -8.5)]).dist[COW]! < 64, 'above a 1-high wall');
  const far = view(new FlatWorld(true), 0, 0, [cow(0.5, -62.5)]);
  assert.ok(Math.abs(far.dist[COW]! - 62.55) < 0.01, `cow at ${far.dist[COW]}`);
  assert.equal(view(new FlatWorld(true), 0, 0, [cow(0.5, -66)]).dist[COW], Infinity, 'beyond 64 m');
  assert.equal(view(new FlatWorld(true), 180, 0, [cow(0.5, -10)]).dist[COW], Infinity, 'behind the agent');
});

test('the observation is the same with the column store and block by block (the mineflayer backend has no store)', () => {
  const task = BUILTIN_TASKS['approach-tree']!;
  let compared = 0;
  for (let seed = 1; seed <= 4; seed++) {
    const store = new SimWorld(task.world, seed);
    const plain: BlockAccess = { stateAt: (x, y, z) => store.stateAt(x, y, z) };
    for (let k = 0; k < 6; k++) {
      const x = ((k * 37) % 50) - 25 + 0.3,
        z = ((k * 53) % 50) - 25 + 0.7;
      let y = 100;
      while (store.stateAt(Math.floor(x), y - 1, Math.floor(z)) === S.air) y--;
      const pose = { x, y, z, yaw: ((k * 61) % 360) * DEG, pitch: ((k % 5) - 2) * 15 * DEG };
      const a = new ViewResult(),
        b = new ViewResult();
      observeView(store, pose, [], a);
      observeView(plain, pose, [], b);
      assert.deepEqual(nearestDict(b), nearestDict(a), `seed ${seed} pose ${JSON.stringify(pose)}`);
      assert.deepEqual(Array.from(b.lidarDist), Array.from(a.lidarDist));
      assert.equal(a.lidarDist.length, LIDAR_COUNT);
      compared++;
    }
  }
  assert.equal(compared, 24);
  assert.ok(EYE_HEIGHT > 1.6);
});
