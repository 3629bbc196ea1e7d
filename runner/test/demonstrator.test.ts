// The scripted teacher behind `pretrain` digs with its quickest tool: when something slower is in hand (the
// recording noise pressed `equip`, which moves to the next inventory item), it equips its way back before it
// attacks. Before, it went on attacking stone with cobblestone in hand (150 ticks a block against 8 with the
// iron pickaxe, 1.16.5's hand speed for a block that needs a pickaxe) and the foundation learned to do the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GAME_FACTS } from '../src/schema';
import { SimEnv } from '../src/env/sim/sim';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { recordDemonstrations } from '../src/pretrain/pretrain';
import { BUILTIN_TASKS, loadTaskFile, resolveTask, type TaskSpec } from '../src/tasks';
import { hash32 } from '../src/seeds';
import { S, nameIndex, stateSolid, stateToBlock } from '../src/env/game/registry';
import type { PrivilegedView } from '../src/env/privileged';

const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;

test('with a block in hand the teacher equips its pickaxe again before it digs, and digs with it', () => {
  const task = resolveTask('explore-diamond');
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  let s = hash32(3, 0x7ea);
  const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
  env.reset(3, features, 0);
  teacher.reset(env);
  // What the recording noise does: cobblestone picked up, then an `equip` that puts it in hand.
  env.inventory.set('cobblestone', 5);
  env.step(A.equip, features, 0);
  assert.equal(env.heldItem, 'cobblestone');
  let equips = 0,
    attacks = 0;
  for (let t = 0; t < 400 && attacks < 20; t++) {
    const action = teacher.act(env);
    if (action === A.equip) equips++;
    if (action === A.attack) {
      attacks++;
      assert.equal(env.heldItem, 'iron_pickaxe', `step ${t}: the teacher attacks a block with ${env.heldItem} in hand`);
    }
    if (env.step(action, features, 0).info.done) break;
  }
  assert.ok(equips >= 1, 'it equips the pickaxe back');
  assert.ok(attacks >= 1, 'and then digs');
});

test("explore-diamond's demonstrations: no attack with a block in hand where the pickaxe is quicker", () => {
  const demos = recordDemonstrations(resolveTask('explore-diamond'), 2, 7);
  assert.ok(demos.episodes.every((e) => e.success));
  const attacks = demos.actions.filter((a) => a === A.attack).length;
  const equips = demos.actions.filter((a) => a === A.equip).length;
  // The noise presses equip about once in 93 steps; each time the labels show the way back.
  assert.ok(equips > 0, 'the demonstrations hold equip labels');
  assert.ok(attacks < 0.75 * demos.actions.length, `attack is ${attacks} of ${demos.actions.length} labels`);
});

// The sighted teacher (a task's `teacher: 'sight'`) chooses from what the agent sees (the view), its pose and
// inventory, and the blocks within reach of its body. The planner with world access walks straight to ore the
// student cannot see (both tests below fail on it: it reads whole chunk columns, and moving ore moves it).
const DIAMOND = nameIndex('diamond_ore');
const sighted = (): TaskSpec => ({ ...resolveTask('explore-diamond'), teacher: 'sight' });

/** The env as the teacher gets it, with every block read checked to lie within `reach` of the eyes and no column or mob read. */
function withinReach(env: SimEnv, reach: number, far: string[]): PrivilegedView {
  const world = {
    minY: env.world.minY,
    maxY: env.world.maxY,
    stateAt: (x: number, y: number, z: number) => {
      const e = env.entity.pos;
      const d = Math.hypot(x + 0.5 - e.x, y + 0.5 - (e.y + 1.62), z + 0.5 - e.z);
      if (d > reach) far.push(`(${x}, ${y}, ${z}) at ${d.toFixed(1)} m`);
      return env.world.stateAt(x, y, z);
    },
    column: () => {
      far.push('a whole chunk column');
      return env.world.column(0, 0);
    },
  };
  return {
    entity: env.entity,
    get mobs() {
      far.push('the mobs');
      return env.mobs;
    },
    world,
    inventory: env.inventory,
    get heldItem() {
      return env.heldItem;
    },
    view: env.view,
    ticksToBreak: (item, x, y, z) => env.ticksToBreak(item, x, y, z),
  };
}

test('the sighted teacher reads no block beyond reach of its body, no chunk column and no mob', () => {
  const task = sighted();
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  let s = hash32(11, 0x7ea);
  const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
  env.reset(11, features, 0);
  const far: string[] = [];
  const view = withinReach(env, 5, far);
  teacher.reset(view);
  for (let t = 0; t < 3000; t++) {
    const action = teacher.act(view);
    assert.deepEqual(far, [], `step ${t}: the teacher read ${far.slice(0, 3).join(', ')}`);
    if (env.step(action, features, 0).info.done) break;
  }
});

/** Every diamond ore of the chunks generated so far turned to stone, and as many stone cells elsewhere in them turned to diamond ore. */
function moveDiamonds(env: SimEnv): number {
  const w = env.world;
  const e = env.entity.pos;
  const cx = Math.floor(e.x / 16),
    cz = Math.floor(e.z / 16);
  const ores: [number, number, number][] = [];
  for (let x = cx * 16 - 32; x < cx * 16 + 48; x++)
    for (let z = cz * 16 - 32; z < cz * 16 + 48; z++)
      for (let y = w.minY; y < w.maxY; y++) if (stateToBlock[w.stateAt(x, y, z)] === DIAMOND) ores.push([x, y, z]);
  let moved = 0;
  for (const [x, y, z] of ores) {
    // Its new place: mirrored through the start, wherever that is buried stone (no air around it, so unseen).
    const nx = 2 * Math.floor(e.x) - x,
      nz = 2 * Math.floor(e.z) - z;
    const buried = [
      [0, 0, 0],
      [1, 0, 0],
      [-1, 0, 0],
      [0, 1, 0],
      [0, -1, 0],
      [0, 0, 1],
      [0, 0, -1],
    ].every(([dx, dy, dz]) => stateSolid[w.stateAt(nx + dx!, y + dy!, nz + dz!)] === 1);
    w.setState(x, y, z, S.stone);
    if (buried && w.stateAt(nx, y, nz) === S.stone) {
      w.setState(nx, y, nz, S.diamond_ore);
      moved++;
    }
  }
  return ores.length + moved;
}

test('the sighted teacher chooses the same actions wherever the diamond ore it has not seen lies', () => {
  const task = sighted();
  const seed = 5;
  const play = (move: boolean) => {
    const env = new SimEnv(task);
    const features = new Float32Array(env.featureSize);
    let s = hash32(seed, 0x7ea);
    const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
    env.reset(seed, features, 0);
    const changed = move ? moveDiamonds(env) : 0;
    teacher.reset(env);
    return { env, features, teacher, changed };
  };
  const a = play(false),
    b = play(true);
  assert.ok(b.changed > 10, `only ${b.changed} diamond ore cells changed`);
  let compared = 0;
  for (let t = 0; t < 2500; t++) {
    if (a.env.view.dist[DIAMOND] !== Infinity || b.env.view.dist[DIAMOND] !== Infinity) break; // seen: from here it may differ
    const actA = a.teacher.act(a.env),
      actB = b.teacher.act(b.env);
    assert.equal(actB, actA, `step ${t}: moving unseen diamond ore changed the teacher's action`);
    compared++;
    if (a.env.step(actA, a.features, 0).info.done || b.env.step(actB, b.features, 0).info.done) break;
  }
  assert.ok(compared >= 1000, `only ${compared} steps before diamond ore came into view`);
});

test('the sighted teacher goes to diamond ore once it is in view', () => {
  const task = sighted();
  const seed = 5;
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  env.reset(seed, features, 0);
  // A corridor from the start along its facing, 7 cells long, and diamond ore at its end, at eye height.
  const e = env.entity;
  const dx = Math.round(-Math.sin(e.yaw)),
    dz = dx === 0 ? Math.round(-Math.cos(e.yaw)) : 0;
  const x0 = Math.floor(e.pos.x),
    y0 = Math.floor(e.pos.y + 0.01),
    z0 = Math.floor(e.pos.z);
  for (let k = 1; k <= 7; k++) {
    env.world.setState(x0 + k * dx, y0, z0 + k * dz, S.cave_air);
    env.world.setState(x0 + k * dx, y0 + 1, z0 + k * dz, S.cave_air);
    env.world.setState(x0 + k * dx, y0 - 1, z0 + k * dz, S.stone);
  }
  env.world.setState(x0 + 8 * dx, y0 + 1, z0 + 8 * dz, S.diamond_ore);
  env.step(A.no_op, features, 0); // the view with the corridor
  assert.ok(env.view.dist[DIAMOND]! > 5, `diamond ore at ${env.view.dist[DIAMOND]} m at the start`);
  let s = hash32(seed, 0x7ea);
  const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
  teacher.reset(env);
  let steps = 0;
  for (; steps < 400; steps++) {
    const info = env.step(teacher.act(env), features, 0).info;
    if (info.done) {
      assert.ok(info.success, `the episode ended without success (died: ${info.died})`);
      break;
    }
  }
  assert.ok(steps < 400, 'the teacher did not reach the diamond ore in view within 400 steps');
  // It succeeded beside the ore, at the corridor's end.
  assert.ok(Math.hypot(e.pos.x - (x0 + 8 * dx + 0.5), e.pos.z - (z0 + 8 * dz + 0.5)) < 3);
});

test("a task file's teacher field: 'sight' for an underground block target, refused where it cannot see one", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'teacher-task-'));
  try {
    const file = path.join(dir, 'task.yaml');
    writeFileSync(file, 'id: deep\nextends: explore-diamond\n');
    assert.equal(loadTaskFile(file).teacher, undefined, 'the planner with world access by default');
    writeFileSync(file, 'id: deep\nextends: explore-diamond\nteacher: sight\n');
    assert.equal(loadTaskFile(file).teacher, 'sight');
    writeFileSync(file, 'id: trees\nextends: approach-tree\nteacher: sight\n');
    assert.throws(() => loadTaskFile(file), /task\.yaml:3:\d+.*teacher.*underground/);
    writeFileSync(file, 'id: deep\nextends: explore-diamond\nteacher: psychic\n');
    assert.throws(() => loadTaskFile(file), /task\.yaml:3:\d+.*teacher: must be "world" or "sight"/);
    for (const task of Object.values(BUILTIN_TASKS)) assert.equal(task.teacher, undefined, `${task.id}: the planner with world access`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a pickaxe the sighted teacher stands still and its demonstration ends there, recording nothing more', () => {
  const task = sighted();
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  env.reset(5, features, 0);
  const teacher = new Demonstrator(task, () => 0.5);
  teacher.reset(env);
  assert.notEqual(teacher.act(env), A.no_op);
  assert.equal(teacher.spent, false);
  env.inventory.delete('iron_pickaxe'); // worn out
  assert.equal(teacher.act(env), A.no_op);
  assert.equal(teacher.spent, true);
  // Hand-digging (150 ticks a block of stone) made 2/3 of a sighted demonstration's labels; none are recorded.
  const demos = recordDemonstrations({ ...task, inventory: { cobblestone: 1 }, maxSteps: 50 }, 1, 7);
  assert.equal(demos.actions.length, 0);
  // Not played on (with no_op) to the step limit: spent from its first step, a failed demonstration of 0 steps.
  assert.deepEqual(demos.episodes, [{ seed: demos.episodes[0]?.seed, success: false, steps: 0 }]);
});
