// The simulator's world: lazily generated 16×16 chunk columns of block state ids (Uint16Array) over the
// kind's height band, plus the `getBlock` view prismarine-physics needs. Block objects are cached per state
// id; only the cached object's position is updated per query, so physics allocates no blocks.
import { Vec3 } from 'vec3';
import prismarineBlock from 'prismarine-block';
import type { Block } from 'prismarine-block';
import { DEFAULT_GAME_VERSION } from '../../schema';
import type { WorldKind } from '../../tasks';
import { LAVA_BLOCK, STATE_COUNT, WATER_BLOCK, stateToBlock, stateVisible } from './registry';
import { CHUNK_CELLS, WORLD_BANDS, generateChunk } from './worldgen';
import type { BlockAccess, ColumnStore } from './observe';

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

interface Chunk {
  cells: Uint16Array;
  /** Per x/z column (index (z & 15) << 4 | (x & 15)): at least the highest y holding a visible block (the view
   * skips the air above it); 1e9 where the band's `above` fill is visible (underground). */
  heights: Float64Array;
}

export class SimWorld implements BlockAccess, ColumnStore {
  readonly minY: number;
  readonly maxY: number; // exclusive
  readonly below: number;
  readonly above: number;
  readonly columnStore: ColumnStore = this;
  private readonly chunks = new Map<number, Chunk>();
  private lastKey = Number.NaN;
  private lastChunk: Chunk | null = null;
  /** How many chunk columns were generated (for tests and benchmarks). */
  generated = 0;

  constructor(
    readonly kind: WorldKind,
    readonly seed: number,
  ) {
    const band = WORLD_BANDS[kind];
    this.minY = band.minY;
    this.maxY = band.minY + band.height;
    this.below = band.below;
    this.above = band.above;
  }

  column(cx: number, cz: number): Chunk {
    const key = (cx + 32768) * 65536 + (cz + 32768);
    if (key === this.lastKey) return this.lastChunk!;
    let c = this.chunks.get(key);
    if (!c) {
      const cells = generateChunk(this.kind, this.seed, cx, cz, new Uint16Array(CHUNK_CELLS(this.kind)));
      const heights = new Float64Array(256).fill(visible[this.above] === 1 ? 1e9 : this.minY - 1);
      if (visible[this.above] === 0) {
        for (let xz = 0; xz < 256; xz++) {
          for (let i = cells.length - 256 + xz; i >= 0; i -= 256) {
            if (visible[cells[i]!] === 1) {
              heights[xz] = this.minY + (i >> 8);
              break;
            }
          }
        }
      }
      c = { cells, heights };
      this.chunks.set(key, c);
      this.generated++;
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

  setState(x: number, y: number, z: number, state: number): void {
    if (y < this.minY || y >= this.maxY) return;
    const c = this.column(x >> 4, z >> 4);
    c.cells[((y - this.minY) << 8) | ((z & 15) << 4) | (x & 15)] = state;
    const xz = ((z & 15) << 4) | (x & 15);
    if (visible[state] === 1 && y > c.heights[xz]!) c.heights[xz] = y;
  }

  /** prismarine-physics' world interface. */
  getBlock(pos: Vec3): Block {
    const x = Math.floor(pos.x), y = Math.floor(pos.y), z = Math.floor(pos.z);
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
