// The simulator's world: lazily generated 16×16 chunk columns of block state ids (Uint16Array) over the
// kind's height band, plus the `getBlock` view prismarine-physics needs. Block objects are cached per state
// id; only the cached object's position is updated per query, so physics allocates no blocks.
import { Vec3 } from 'vec3';
import prismarineBlock from 'prismarine-block';
import type { Block } from 'prismarine-block';
import { DEFAULT_GAME_VERSION } from '../../schema';
import type { WorldKind } from '../../tasks';
import { LAVA_BLOCK, S, STATE_COUNT, WATER_BLOCK, stateSolid, stateToBlock, stateVisible } from '../game/registry';
import { CHUNK_CELLS, ChunkFeatureCache, WORLD_BANDS, chunkKey, generateChunk } from '../game/worldgen';
import { VANILLA_WORLD, type WorldOptions } from '../../tasks';
import { allocChunkColumn, type BlockAccess, type ChunkColumnMemory, type ColumnStore, freeChunkColumn, HEIGHT_UNBOUNDED } from '../game/observe';

const BlockCtor = prismarineBlock(DEFAULT_GAME_VERSION);
const PLAINS_BIOME = 1;
const blockCache: (Block | undefined)[] = new Array(STATE_COUNT);
/** The prismarine-block Block of a state id (shared; never mutate anything but `position`). */
export function blockOfState(state: number): Block {
  let b = blockCache[state];
  if (!b) {
    b = BlockCtor.fromStateId(state, PLAINS_BIOME);
    b.position = new Vec3(0, 0, 0);
    blockCache[state] = b;
  }
  return b;
}

// Module-local aliases: imported bindings compile to getter calls under tsx, too slow for the hot loop.
const toBlock = stateToBlock;
const visible = stateVisible;
const solid = stateSolid;

// Fluids (FlowingFluid, WaterFluid, LavaFluid in 1.16.5): state = base + level, level 0 a source, 1..7 flowing
// (amount 8 − level), 8 falling. Water loses 1 per block and ticks every 5 game ticks; overworld lava loses 2
// (it runs 3 blocks) and ticks every 30.
const WATER_BASE = S.water,
  LAVA_BASE = S.lava;
/** A cell a new chunk's source can flow into at once (scheduleSprings). */
const openAir = (state: number) => state === S.air || state === S.cave_air;
const FLUID = {
  water: { base: WATER_BASE, drop: 1, delay: 5 },
  lava: { base: LAVA_BASE, drop: 2, delay: 30 },
} as const;
/** Fluid ticks farther than this from the agent (horizontally) wait: the game ticks only chunks near players. */
const FLUID_TICK_RANGE = 64;
const HORIZONTAL: readonly (readonly [number, number])[] = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
];

/** A chunk column, in the view walk's memory of this thread (the view reads it in place: `walkAt`). */
interface Chunk extends ChunkColumnMemory {
  cells: Uint16Array;
  /** Per x/z column (index (z & 15) << 4 | (x & 15)): at least the highest y holding a visible block (the view
   * skips the air above it); HEIGHT_UNBOUNDED where the band's `above` fill is visible (underground). 16-bit: the
   * view reads one per cell column it crosses, and 512 bytes a chunk stay in cache better than 2 KiB did. */
  heights: Int16Array;
  /** At least every value of `heights`: the chunk's highest visible block (planes passing above it skip it). */
  top: number;
}

/** Gives a world's chunk columns' memory back (once: the map is emptied). */
function releaseChunks(chunks: Map<number, Chunk>): void {
  for (const c of chunks.values()) freeChunkColumn(c);
  chunks.clear();
}
/** The memory of a world dropped without `release()` (tests, tools), given back once the world is collected. */
const worldsCollected = new FinalizationRegistry<Map<number, Chunk>>(releaseChunks);

export class SimWorld implements BlockAccess, ColumnStore {
  readonly minY: number;
  readonly maxY: number; // exclusive
  readonly below: number;
  readonly above: number;
  readonly columnStore: ColumnStore = this;
  private readonly chunks = new Map<number, Chunk>();
  private released = false;
  private lastKey = Number.NaN;
  private lastChunk: Chunk | null = null;
  /** How many chunk columns were generated (for tests and benchmarks). */
  generated = 0;
  /** `chunkKey`s of the generated chunk columns, in generation order. */
  readonly generatedKeys: number[] = [];
  /** Changes with every block state set (the view reuses what it saw from an unchanged pose until it does). */
  blockVersion = 0;
  /** Game ticks this world has run (fluid ticks are scheduled on it). */
  time = 0;
  /** Scheduled fluid ticks: due tick → packed cell positions. */
  private readonly fluidTicks = new Map<number, number[]>();
  private readonly fluidScheduled = new Set<number>();
  /** What this world's chunks share in generation (each origin chunk's plants and trees, drawn once). */
  private readonly features: ChunkFeatureCache;

  constructor(
    readonly kind: WorldKind,
    readonly seed: number,
    readonly options: WorldOptions = VANILLA_WORLD,
  ) {
    const band = WORLD_BANDS[kind];
    this.minY = band.minY;
    this.maxY = band.minY + band.height;
    this.below = band.below;
    this.above = band.above;
    this.features = new ChunkFeatureCache(seed, options);
    worldsCollected.register(this, this.chunks);
  }

  /**
   * Gives this world's chunk columns' memory back (the view walk's memory, which never shrinks) for the next world's.
   * An env calls it when it leaves the world; a world dropped without it gives its memory back when it is collected.
   * Nothing may use the world after.
   */
  release(): void {
    releaseChunks(this.chunks);
    this.released = true;
    this.lastKey = Number.NaN;
    this.lastChunk = null;
  }

  column(cx: number, cz: number): Chunk {
    const key = chunkKey(cx, cz);
    if (key === this.lastKey) return this.lastChunk!;
    let c = this.chunks.get(key);
    if (!c) {
      if (this.released) throw new Error(`world ${this.seed}: a chunk asked for after the world was released`);
      const memory = allocChunkColumn(CHUNK_CELLS(this.kind));
      const cells = generateChunk(this.kind, this.seed, cx, cz, memory.cells, this.options, this.features);
      const heights = memory.heights.fill(visible[this.above] === 1 ? HEIGHT_UNBOUNDED : this.minY - 1);
      if (visible[this.above] === 0) {
        // Layer by layer from the top (a layer's 256 cells lie together in memory), two cells at a time where
        // both are the band's invisible `above` fill (most of a plains chunk is the air above the ground), until
        // every column has met its highest visible block; a column with none keeps minY − 1.
        const pairs = new Int32Array(cells.buffer, cells.byteOffset, cells.length >> 1);
        const abovePair = this.above | (this.above << 16);
        let open = 256;
        for (let base = cells.length - 256; base >= 0 && open > 0; base -= 256) {
          const y = this.minY + (base >> 8);
          for (let xz = 0; xz < 256; xz += 2) {
            if (pairs[(base + xz) >> 1] === abovePair) continue;
            if (heights[xz]! < this.minY && visible[cells[base + xz]!] === 1) {
              heights[xz] = y;
              open--;
            }
            if (heights[xz + 1]! < this.minY && visible[cells[base + xz + 1]!] === 1) {
              heights[xz + 1] = y;
              open--;
            }
          }
        }
      }
      let top = -Infinity;
      for (let xz = 0; xz < 256; xz++) if (heights[xz]! > top) top = heights[xz]!;
      c = { walkAt: memory.walkAt, cells, heights, top };
      this.chunks.set(key, c);
      this.generated++;
      this.generatedKeys.push(key);
      if (this.kind === 'underground') this.scheduleSprings(cx, cz, cells);
    }
    this.lastKey = key;
    this.lastChunk = c;
    return c;
  }

  /** Block state id at integer (x, y, z). */
  stateAt(x: number, y: number, z: number): number {
    if (y < this.minY) return this.below;
    if (y >= this.maxY) return this.above;
    return this.column(x >> 4, z >> 4).cells[((y - this.minY) << 8) | ((z & 15) << 4) | (x & 15)]!;
  }

  /** The chunk column if it has been generated, else undefined (generates nothing: playback's frames read through it). */
  peekColumn(cx: number, cz: number): Chunk | undefined {
    return this.chunks.get(chunkKey(cx, cz));
  }

  setState(x: number, y: number, z: number, state: number): void {
    if (y < this.minY || y >= this.maxY) return;
    this.blockVersion++;
    const c = this.column(x >> 4, z >> 4);
    c.cells[((y - this.minY) << 8) | ((z & 15) << 4) | (x & 15)] = state;
    const xz = ((z & 15) << 4) | (x & 15);
    if (visible[state] === 1 && y > c.heights[xz]!) {
      c.heights[xz] = y;
      if (y > c.top) c.top = y;
    }
    // Gravel above a cell that opened falls (FallingBlock: air, fluids and plants let it through).
    if (solid[state] === 0 && y + 1 < this.maxY && this.stateAt(x, y + 1, z) === S.gravel) this.dropGravel(x, y + 1, z);
    // A changed cell wakes the fluids around it (digging next to lava lets it in).
    this.wakeFluid(x, y, z);
    this.wakeFluid(x + 1, y, z);
    this.wakeFluid(x - 1, y, z);
    this.wakeFluid(x, y + 1, z);
    this.wakeFluid(x, y, z + 1);
    this.wakeFluid(x, y, z - 1);
  }

  /** Gravel at (x, y, z) falls to the first solid block below (at once; the game animates a falling block). */
  private dropGravel(x: number, y: number, z: number): void {
    let landing = y;
    while (landing - 1 >= this.minY && solid[this.stateAt(x, landing - 1, z)] === 0) landing--;
    if (landing === y) return;
    this.setState(x, landing, z, S.gravel);
    this.setState(x, y, z, S.cave_air); // then the gravel above it falls in turn, onto this one
  }

  // ---- fluids ----

  private fluidOf(state: number) {
    const b = toBlock[state];
    return b === WATER_BLOCK ? FLUID.water : b === LAVA_BLOCK ? FLUID.lava : null;
  }

  private wakeFluid(x: number, y: number, z: number): void {
    if (y < this.minY || y >= this.maxY) return;
    const f = this.fluidOf(this.stateAt(x, y, z));
    if (f) this.scheduleFluid(x, y, z, f.delay);
  }

  private scheduleFluid(x: number, y: number, z: number, delay: number): void {
    const key = ((x + 32768) * 65536 + (z + 32768)) * 512 + (y + 256);
    if (this.fluidScheduled.has(key)) return;
    this.fluidScheduled.add(key);
    const due = this.time + delay;
    let list = this.fluidTicks.get(due);
    if (!list) this.fluidTicks.set(due, (list = []));
    list.push(x, y, z);
  }

  /** Sources in a new chunk with an open side or an open cell below start flowing (springs). */
  private scheduleSprings(cx: number, cz: number, cells: Uint16Array): void {
    for (let i = 0; i < cells.length; i++) {
      const s = cells[i]!;
      if (s !== WATER_BASE && s !== LAVA_BASE) continue;
      const lx = i & 15,
        lz = (i >> 4) & 15,
        y = this.minY + (i >> 8);
      if (lx === 0 || lx === 15 || lz === 0 || lz === 15) continue; // springs sit inside their chunk
      // Open: air at x + 1, x − 1, z + 1, z − 1 (all in this chunk, the source is not on its edge) or below.
      if (openAir(cells[i + 1]!) || openAir(cells[i - 1]!) || openAir(cells[i + 16]!) || openAir(cells[i - 16]!) || (i >= 256 && openAir(cells[i - 256]!))) {
        this.scheduleFluid(cx * 16 + lx, y, cz * 16 + lz, s === WATER_BASE ? FLUID.water.delay : FLUID.lava.delay);
      }
    }
  }

  /** Whether fluid may flow into `state`: airs and non-solid plants (not other fluids, not solid blocks). */
  private static flowsInto(state: number): boolean {
    const b = toBlock[state];
    return solid[state] === 0 && b !== WATER_BLOCK && b !== LAVA_BLOCK && state !== S.bee_nest;
  }

  /**
   * Advances the world one game tick: runs the fluid ticks due now within FLUID_TICK_RANGE of (nearX, nearZ)
   * (farther ones wait). `settle` runs everything due (used before an episode starts).
   */
  tick(nearX: number, nearZ: number, settle = false): void {
    this.time++;
    const due = this.fluidTicks.get(this.time);
    if (!due) return;
    this.fluidTicks.delete(this.time);
    for (let k = 0; k < due.length; k += 3) {
      const x = due[k]!,
        y = due[k + 1]!,
        z = due[k + 2]!;
      this.fluidScheduled.delete(((x + 32768) * 65536 + (z + 32768)) * 512 + (y + 256));
      if (!settle && (Math.abs(x - nearX) > FLUID_TICK_RANGE || Math.abs(z - nearZ) > FLUID_TICK_RANGE)) {
        this.scheduleFluid(x, y, z, 100);
        continue;
      }
      this.fluidTick(x, y, z);
    }
  }

  /** Pending fluid ticks (for tests and the pre-episode settle). */
  get pendingFluidTicks(): number {
    return this.fluidScheduled.size;
  }

  private fluidTick(x: number, y: number, z: number): void {
    const s = this.stateAt(x, y, z);
    const f = this.fluidOf(s);
    if (!f) return;
    let level = s - f.base;
    if (level !== 0) {
      // A flowing cell is fed from above (falling) or by the strongest neighbour, less the drop-off.
      let amount = 0;
      if (this.fluidOf(this.stateAt(x, y + 1, z)) === f) amount = 8;
      else {
        for (const [dx, dz] of HORIZONTAL) {
          const n = this.stateAt(x + dx, y, z + dz);
          if (this.fluidOf(n) !== f) continue;
          const nl = n - f.base;
          amount = Math.max(amount, (nl === 0 || nl >= 8 ? 8 : 8 - nl) - f.drop);
        }
      }
      if (amount <= 0) {
        this.setState(x, y, z, S.cave_air);
        return;
      }
      const next = amount === 8 && this.fluidOf(this.stateAt(x, y + 1, z)) === f ? 8 : 8 - amount;
      if (next !== level) {
        this.setState(x, y, z, f.base + next);
        level = next;
      }
    }
    const below = this.stateAt(x, y - 1, z);
    if (y - 1 >= this.minY && SimWorld.flowsInto(below)) {
      this.setState(x, y - 1, z, f.base + 8);
      return;
    }
    const other = this.fluidOf(below);
    if (other && other !== f) {
      // Lava falling onto water makes stone; water falling onto lava makes obsidian (source) or cobblestone.
      if (f === FLUID.lava) this.setState(x, y - 1, z, S.stone);
      else this.setState(x, y - 1, z, below === LAVA_BASE ? S.obsidian : S.cobblestone);
      return;
    }
    if (other === f && level !== 0) return; // falling onto its own fluid: no sideways spread
    const side = (level === 0 || level >= 8 ? 8 : 8 - level) - f.drop;
    if (side <= 0) return;
    for (const [dx, dz] of HORIZONTAL) {
      const n = this.stateAt(x + dx, y, z + dz);
      const nf = this.fluidOf(n);
      if (SimWorld.flowsInto(n)) this.setState(x + dx, y, z + dz, f.base + 8 - side);
      else if (nf === f) {
        const nl = n - f.base;
        if (nl !== 0 && nl < 8 && 8 - nl < side) this.setState(x + dx, y, z + dz, f.base + 8 - side);
      } else if (nf && f === FLUID.water) this.setState(x + dx, y, z + dz, n === LAVA_BASE ? S.obsidian : S.cobblestone);
      else if (nf && f === FLUID.lava) this.setState(x + dx, y, z + dz, S.cobblestone);
    }
  }

  /** prismarine-physics' world interface. */
  getBlock(pos: Vec3): Block {
    const x = Math.floor(pos.x),
      y = Math.floor(pos.y),
      z = Math.floor(pos.z);
    const state = this.stateAt(x, y, z);
    const block = blockOfState(state);
    const type = toBlock[state];
    if (type === WATER_BLOCK || type === LAVA_BLOCK) {
      // Physics' water-flow code holds a fluid block while querying its neighbours: give it its own object.
      const own = Object.create(block) as Block;
      own.position = new Vec3(x, y, z);
      return own;
    }
    block.position.x = x;
    block.position.y = y;
    block.position.z = z;
    return block;
  }
}
