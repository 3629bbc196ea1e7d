// The observation: what is visible in the field of view, computed against a small accessor interface so the
// simulator and the mineflayer backend run the SAME code (mineflayer passes its bot's world, entities and
// pose). The rule, for blocks and mobs alike: the nearest visible instance of each type inside the field of
// view (relative yaw within ±35°, relative pitch within ±30°), at most 64 m away, visible when there is a
// line of sight from the eyes to any part of it.
// Blocks: the field of view is cut into 81 vertical planes (one per 0.875° of yaw, so every block face-on
// at 64 m, 0.895° wide, is cut by at least one), and each plane is walked cell column by cell column (2D
// DDA over x/z) from the eyes outwards. In a plane the visibility is exact: each block is a rectangle
// whose pitch span is tested against the set of pitches still unoccluded, and an occluding block removes its
// span from the set. A plane stops when its whole pitch window is occluded or at 64 m. The walk itself is
// WebAssembly (runner/wasm/view-walk.ts: the same float64 arithmetic, about half the CPU of the same walk in
// JavaScript); this module gives it the trigonometry, the chunks and the pose, and takes back what it saw.
// Mobs: line of sight to any of 9 points of the bounding box (centre and 8 corners pulled 5 % inwards).
// The same pass fills the LiDAR grid of the policy features (the first occluding block or water surface
// along 9 × 5 directions). Results go into typed arrays indexed by observable-name index; the reward's
// `{name: [d, yaw, pitch]}` dict is built from them once per step (`nearestDict`).
import { GAME_FACTS } from '../../schema';
import type { NearestBlocks } from '../types';
import { NAME_COUNT, observableNames, stateOccludes, stateToBlock, stateVisible, WATER_BLOCK } from './registry';
import { lineOfSight, sightSegment } from './sight';
import type { BlockAccess, ChunkColumn, ColumnStore, ViewEntity, ViewPose, ViewResult } from './view';
import * as view from './view';
import { VIEW_WALK_WASM } from './view-walk.wasm';

// The interfaces and the result type are view.ts's; importers keep taking them from here, beside observeView.
export {
  type BlockAccess,
  type ChunkColumn,
  type ColumnStore,
  HEIGHT_UNBOUNDED,
  LIDAR_COLUMNS,
  LIDAR_COUNT,
  LIDAR_ROWS,
  type ViewEntity,
  VIEW_COLUMNS,
  type ViewPose,
  ViewResult,
} from './view';

// Module-local copies of view.ts's constants: imported bindings compile to getter calls under tsx (the tests and
// benches), too slow for the hot loop.
const HEIGHT_UNBOUNDED = view.HEIGHT_UNBOUNDED;
const LIDAR_COLUMNS = view.LIDAR_COLUMNS;
const LIDAR_ROWS = view.LIDAR_ROWS;
const LIDAR_COUNT = view.LIDAR_COUNT;
const VIEW_COLUMNS = view.VIEW_COLUMNS;
const CHUNK_SPAN = view.CHUNK_SPAN;

export const EYE_HEIGHT = 1.62;
export const DEG = Math.PI / 180;
const FOV_YAW = GAME_FACTS.fovYawDeg * DEG;
const FOV_PITCH = GAME_FACTS.fovPitchDeg * DEG;
const VIEW = GAME_FACTS.viewDistance;

const columnYaw = new Float64Array(VIEW_COLUMNS);
for (let c = 0; c < VIEW_COLUMNS; c++) columnYaw[c] = -FOV_YAW + (2 * FOV_YAW * c) / (VIEW_COLUMNS - 1);
const LIDAR_EVERY = (VIEW_COLUMNS - 1) / (LIDAR_COLUMNS - 1);
/** Relative yaw of each LiDAR column and relative pitch of each LiDAR row (radians; positive = right / below). */
export const lidarYaw = Array.from({ length: LIDAR_COLUMNS }, (_, c) => columnYaw[c * LIDAR_EVERY]!);
export const lidarPitch = Array.from({ length: LIDAR_ROWS }, (_, r) => -FOV_PITCH + (2 * FOV_PITCH * r) / (LIDAR_ROWS - 1));
/** Pitches within a degree of straight up or down are treated as that far from vertical (slopes stay finite). */
const MAX_ELEVATION = 89 * DEG;

// Module-local aliases of the tables the walk is given (and the inside-a-block test reads).
const visible = stateVisible;
const occludes = stateOccludes;
const toBlock = stateToBlock;
/** Where a LiDAR ray stops: occluding blocks and water. */
const lidarStops = new Uint8Array(stateOccludes.length);
for (let s = 0; s < lidarStops.length; s++) lidarStops[s] = stateOccludes[s] === 1 || stateToBlock[s] === WATER_BLOCK ? 1 : 0;

/** `a` radians brought into [-π, π). */
export const wrapAngle = (a: number) => a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));
const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

// The eyes and the facing of the view being taken.
let stepEx = 0,
  stepEy = 0,
  stepEz = 0,
  stepYaw = 0,
  stepPitch = 0;

// ---- the block walk, in WebAssembly (runner/wasm/view-walk.ts, compiled into view-walk.wasm.ts) ----
// It walks the planes over chunk columns in its own memory, one memory per thread: a ColumnStore makes its columns
// there (`allocChunkColumn`) and the walk reads them in place. The memory is a shared WebAssembly.Memory so that
// growing it leaves every typed array over it valid: a column's `cells` and `heights` stay the store's arrays.

interface WalkExports {
  memory: WebAssembly.Memory;
  MAX_STATES: WebAssembly.Global;
  MAX_NAMES: WebAssembly.Global;
  VISIBLE: WebAssembly.Global;
  OCCLUDES: WebAssembly.Global;
  LIDAR_STOPS: WebAssembly.Global;
  TO_NAME: WebAssembly.Global;
  VIEW_IN: WebAssembly.Global;
  CHUNK_TABLE: WebAssembly.Global;
  DIST: WebAssembly.Global;
  SEEN: WebAssembly.Global;
  SIGHT: WebAssembly.Global;
  LIDAR_DIST: WebAssembly.Global;
  LIDAR_STATE: WebAssembly.Global;
  heapBase(): number;
  clearDistances(): void;
  seenTotal(): number;
  blocksLookedAt(): number;
  walkView(ex: number, ey: number, ez: number, baseX: number, baseZ: number, minY: number, maxY: number, below: number, above: number, withStore: number): void;
}

/** What a chunk column holds before its cells: the x/z columns' heights (256 × i16). */
const COLUMN_HEIGHTS_BYTES = 512;
const PAGE = 65536;
const GROW_MIN_PAGES = 64;
/** The walk's memory's bound (4 GiB, all a 32-bit address reaches): a shared memory reserves it when made, uncommitted. */
const MAX_PAGES = 65536;

let walk: WalkExports | null = null;
// Views of the walk's memory, made again whenever it grows.
let memF64 = new Float64Array(0);
let memI32 = new Int32Array(0);
let memU16 = new Uint16Array(0);
// Addresses (in elements of the view that reads them) of the walk's arrays.
let viewInAt = 0,
  tableAt = 0,
  distAt = 0,
  seenAt = 0,
  sightAt = 0,
  lidarDistAt = 0,
  lidarStateAt = 0;
/** The end of the memory handed out to chunk columns, from the walk's heap base. */
let memoryEnd = 0;
/** Chunk columns' memory given back (`freeChunkColumn`), by size in bytes: addresses to hand out again. */
const freeColumns = new Map<number, number[]>();

// The view being walked, for the imports.
let walkWorld: BlockAccess | null = null;
let walkStore: ColumnStore | null = null;
let walkOut: ViewResult | null = null;

function walkMemoryViews(w: WalkExports): void {
  const b = w.memory.buffer;
  memF64 = new Float64Array(b);
  memI32 = new Int32Array(b);
  memU16 = new Uint16Array(b);
}

function blockWalk(): WalkExports {
  if (walk !== null) return walk;
  const imports = {
    env: { memory: new WebAssembly.Memory({ initial: GROW_MIN_PAGES, maximum: MAX_PAGES, shared: true }) },
    view: {
      chunkAt: (k: number) => chunkInTable(k),
      stateAt: (x: number, y: number, z: number) => walkWorld!.stateAt(x, y, z),
    },
  };
  const w = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(VIEW_WALK_WASM, 'base64')), imports).exports as unknown as WalkExports;
  if (occludes.length > w.MAX_STATES.value || NAME_COUNT > w.MAX_NAMES.value) throw new Error('view walk: more block states or names than it has room for');
  walkMemoryViews(w);
  const u8 = new Uint8Array(w.memory.buffer);
  u8.set(visible, w.VISIBLE.value);
  u8.set(occludes, w.OCCLUDES.value);
  u8.set(lidarStops, w.LIDAR_STOPS.value);
  memU16.set(toBlock, w.TO_NAME.value >> 1);
  viewInAt = w.VIEW_IN.value >> 3;
  tableAt = w.CHUNK_TABLE.value >> 2;
  distAt = w.DIST.value >> 3;
  seenAt = w.SEEN.value >> 2;
  sightAt = w.SIGHT.value >> 2;
  lidarDistAt = w.LIDAR_DIST.value >> 3;
  lidarStateAt = w.LIDAR_STATE.value >> 2;
  memoryEnd = (w.heapBase() + 15) & ~15;
  w.clearDistances();
  walk = w;
  return w;
}

/** `bytes` of the walk's memory not yet handed out (16-byte aligned), grown into where needed. */
function reserve(w: WalkExports, bytes: number): number {
  const at = memoryEnd;
  const end = at + bytes;
  const have = w.memory.buffer.byteLength;
  if (end > have) {
    // By half of what it has at least (4 MiB at first): each growth costs V8 a full garbage collection, and growing a
    // page per chunk made training's GC threads busier than the walk saved.
    w.memory.grow(Math.max(Math.ceil((end - have) / PAGE), Math.ceil(have / PAGE / 2), GROW_MIN_PAGES));
    walkMemoryViews(w);
  }
  memoryEnd = (end + 15) & ~15;
  return at;
}

/** A chunk column's storage in the walk's memory of this thread: its heights, then its cells. */
export interface ChunkColumnMemory {
  walkAt: number;
  heights: Int16Array;
  cells: Uint16Array;
}

/**
 * Storage for a chunk column of `cellCount` cells, all zero, in the view walk's memory of this thread, where views read
 * it in place: for a ColumnStore whose columns are viewed on the thread that makes them. `freeChunkColumn` gives it
 * back; the memory itself never shrinks.
 */
export function allocChunkColumn(cellCount: number): ChunkColumnMemory {
  const w = blockWalk();
  const bytes = COLUMN_HEIGHTS_BYTES + 2 * cellCount;
  const walkAt = freeColumns.get(bytes)?.pop() ?? reserve(w, bytes);
  const buffer = w.memory.buffer;
  const column = { walkAt, heights: new Int16Array(buffer, walkAt, 256), cells: new Uint16Array(buffer, walkAt + COLUMN_HEIGHTS_BYTES, cellCount) };
  column.heights.fill(0);
  column.cells.fill(0);
  return column;
}

/** Gives a chunk column's storage back for another column: nothing may read or write its arrays after this. */
export function freeChunkColumn(column: ChunkColumnMemory): void {
  const bytes = COLUMN_HEIGHTS_BYTES + 2 * column.cells.length;
  let free = freeColumns.get(bytes);
  if (!free) freeColumns.set(bytes, (free = []));
  free.push(column.walkAt);
}

/** Puts chunk `k` of the table around the eyes (where it lies and its top) in the table; returns where it lies. */
function putInTable(k: number, chunk: ChunkColumn): number {
  memI32[tableAt + 2 * k] = chunk.walkAt;
  // No top: unbounded, which the walk (like a top at or above HEIGHT_UNBOUNDED) never passes above.
  memI32[tableAt + 2 * k + 1] = chunk.top ?? HEIGHT_UNBOUNDED;
  return chunk.walkAt;
}

/** The walk's `chunkAt` import: chunk k of the table around the eyes, first read in this view. */
function chunkInTable(k: number): number {
  const out = walkOut!;
  const cx = out.chunksBaseX + Math.floor(k / CHUNK_SPAN),
    cz = out.chunksBaseZ + (k % CHUNK_SPAN);
  const chunk = walkStore!.column(cx, cz);
  out.chunks[k] = chunk;
  return putInTable(k, chunk);
}

// The 9 points of a bounding box a line of sight is tried to: centre first, then the corners pulled 5 % in.
const BOX_POINTS: number[] = [0, 0.5, 0];
for (const sx of [-0.45, 0.45]) for (const sy of [0.05, 0.95]) for (const sz of [-0.45, 0.45]) BOX_POINTS.push(sx, sy, sz);
/** The farthest a box point lies from the box's vertical axis, in box widths. */
let BOX_POINT_REACH = 0;
for (let p = 0; p < BOX_POINTS.length; p += 3) BOX_POINT_REACH = Math.max(BOX_POINT_REACH, Math.hypot(BOX_POINTS[p]!, BOX_POINTS[p + 2]!));

/**
 * The block part of a view (planes walked from the eyes at stepEx, stepEy, stepEz), kept in `out` for the next
 * view from the same pose. Returns whether the eyes are inside a solid block.
 */
function observeBlocks(world: BlockAccess, pose: ViewPose, out: ViewResult): boolean {
  out.clear();
  const baseX = (Math.floor(stepEx) >> 4) - 5,
    baseZ = (Math.floor(stepEz) >> 4) - 5;
  const store = world.columnStore ?? null;
  if (out.chunksStore !== store || out.chunksBaseX !== baseX || out.chunksBaseZ !== baseZ) {
    out.chunks.fill(undefined);
    out.chunksStore = store;
    out.chunksBaseX = baseX;
    out.chunksBaseZ = baseZ;
  }
  const start = world.stateAt(Math.floor(stepEx), Math.floor(stepEy), Math.floor(stepEz));
  if (occludes[start] === 1) {
    // Eyes inside a solid block see that block and nothing else.
    out.note(toBlock[start]!, 0, 0, 0);
    out.lidarDist.fill(0);
    out.lidarState.fill(start);
    out.keepBlocks(world, pose, true);
    return true;
  }
  const w = blockWalk();
  // The walk's inputs: the pitch window's slopes, the LiDAR rows' slopes, the planes' directions.
  const vin = viewInAt;
  memF64[vin] = Math.tan(Math.max(-MAX_ELEVATION, pose.pitch - FOV_PITCH));
  memF64[vin + 1] = Math.tan(Math.min(MAX_ELEVATION, pose.pitch + FOV_PITCH));
  for (let r = 0; r < LIDAR_ROWS; r++) memF64[vin + 2 + r] = Math.tan(clamp(pose.pitch - lidarPitch[r]!, -MAX_ELEVATION, MAX_ELEVATION));
  if (out.planesYaw !== pose.yaw) {
    for (let c = 0; c < VIEW_COLUMNS; c++) {
      const yaw = pose.yaw - columnYaw[c]!;
      out.planesHx[c] = -Math.sin(yaw);
      out.planesHz[c] = -Math.cos(yaw);
    }
    out.planesYaw = pose.yaw;
  }
  memF64.set(out.planesHx, vin + 2 + LIDAR_ROWS);
  memF64.set(out.planesHz, vin + 2 + LIDAR_ROWS + VIEW_COLUMNS);
  // The chunks this env's views have read around the eyes, in the table.
  walkWorld = world;
  walkStore = store;
  walkOut = out;
  if (store !== null) {
    for (let k = 0; k < CHUNK_SPAN * CHUNK_SPAN; k++) {
      const chunk = out.chunks[k];
      if (chunk === undefined) memI32[tableAt + 2 * k] = 0;
      else putInTable(k, chunk);
    }
    w.walkView(stepEx, stepEy, stepEz, baseX, baseZ, store.minY, store.maxY, store.below, store.above, 1);
  } else w.walkView(stepEx, stepEy, stepEz, baseX, baseZ, -64, 320, 0, 0, 0);
  walkWorld = walkStore = walkOut = null;
  // What it saw: each name's nearest sighting (its angles those of the block's centre), in first-seen order; the LiDAR
  // rays that stopped; how many blocks it looked at.
  const seen = w.seenTotal();
  for (let k = 0; k < seen; k++) {
    const name = memI32[seenAt + k]!;
    const at = sightAt + 3 * name;
    const cx = memI32[at]! + 0.5 - stepEx,
      cy = memI32[at + 1]! + 0.5 - stepEy,
      cz = memI32[at + 2]! + 0.5 - stepEz;
    const relYaw = clamp(wrapAngle(stepYaw - Math.atan2(-cx, -cz)), -FOV_YAW, FOV_YAW);
    const relPitch = clamp(stepPitch - Math.atan2(cy, Math.sqrt(cx * cx + cz * cz)), -FOV_PITCH, FOV_PITCH);
    out.note(name, memF64[distAt + name]!, relYaw, relPitch);
  }
  for (let i = 0; i < LIDAR_COUNT; i++) {
    const d = memF64[lidarDistAt + i]!;
    out.lidarDist[i] = d;
    if (d !== Infinity) out.lidarState[i] = memI32[lidarStateAt + i]!;
  }
  out.cellVisits += w.blocksLookedAt();
  out.keepBlocks(world, pose, false);
  return false;
}

/**
 * Fills `out` with what the agent at `pose` sees: every block type and mob in the field of view
 * (relative yaw within ±35°, pitch within ±30°, at most 64 m, a line of sight to some part of it), the
 * nearest instance each, and the LiDAR grid. Distances are from the eyes to the nearest point of the block
 * or the mob's bounding box; angles are those of its centre (clamped to the field of view when only an edge
 * is in it), as the schema has them: yaw positive to the right, pitch positive below the line of sight.
 */
export function observeView(world: BlockAccess, pose: ViewPose, entities: readonly ViewEntity[], out: ViewResult): void {
  const ex = pose.x,
    ey = pose.y + EYE_HEIGHT,
    ez = pose.z;
  stepEx = ex;
  stepEy = ey;
  stepEz = ez;
  sightSegment[0] = ex;
  sightSegment[1] = ey;
  sightSegment[2] = ez;
  stepYaw = pose.yaw;
  stepPitch = pose.pitch;
  const reused = out.reuseBlocks(world, pose);
  const insideSolid = reused ?? observeBlocks(world, pose, out);
  if (insideSolid) return;
  for (const e of entities) {
    const half = e.width / 2;
    // Nearest point of the bounding box to the eyes.
    const nx = clamp(ex, e.x - half, e.x + half) - ex;
    const ny = clamp(ey, e.y, e.y + e.height) - ey;
    const nz = clamp(ez, e.z - half, e.z + half) - ez;
    const d = Math.sqrt(nx * nx + ny * ny + nz * nz);
    if (d > VIEW || d >= out.dist[e.nameIndex]!) continue;
    // Most mobs are off to the side or behind. Seen from the eyes, every box point's yaw lies within asin(reach / dh)
    // of the axis's yaw; when even that cone misses the field of view, no point can pass the test below.
    const ax = e.x - ex,
      az = e.z - ez;
    const dh = Math.sqrt(ax * ax + az * az),
      reach = BOX_POINT_REACH * e.width;
    if (dh > reach * 1.000001 && Math.abs(wrapAngle(pose.yaw - Math.atan2(-ax, -az))) > FOV_YAW + Math.asin(reach / dh) + 1e-9) continue;
    let seen = false;
    for (let p = 0; p < BOX_POINTS.length; p += 3) {
      const tx = e.x + BOX_POINTS[p]! * e.width,
        ty = e.y + BOX_POINTS[p + 1]! * e.height,
        tz = e.z + BOX_POINTS[p + 2]! * e.width;
      const cx = tx - ex,
        cy = ty - ey,
        cz = tz - ez;
      const relYaw = wrapAngle(pose.yaw - Math.atan2(-cx, -cz));
      const relPitch = pose.pitch - Math.atan2(cy, Math.sqrt(cx * cx + cz * cz));
      if (Math.abs(relYaw) > FOV_YAW || Math.abs(relPitch) > FOV_PITCH) continue;
      sightSegment[3] = tx;
      sightSegment[4] = ty;
      sightSegment[5] = tz;
      if (d === 0 || lineOfSight(world)) {
        seen = true;
        break;
      }
    }
    if (!seen) continue;
    const cx = e.x - ex,
      cy = e.y + e.height / 2 - ey,
      cz = e.z - ez;
    const relYaw = clamp(wrapAngle(pose.yaw - Math.atan2(-cx, -cz)), -FOV_YAW, FOV_YAW);
    const relPitch = clamp(pose.pitch - Math.atan2(cy, Math.sqrt(cx * cx + cz * cz)), -FOV_PITCH, FOV_PITCH);
    out.note(e.nameIndex, d, relYaw, relPitch);
  }
}

const round = (v: number, k: number) => Math.round(v * k) / k;
/** Millimetre precision: how the reward's observation gives positions and angles. */
export const round3 = (v: number) => round(v, 1000);
/** The reward's `current_nearest_blocks` dict for a view (distances in mm, angles in mrad precision). */
export function nearestDict(view: ViewResult): NearestBlocks {
  const out: NearestBlocks = {};
  for (let k = 0; k < view.seenCount; k++) {
    const i = view.seen[k]!;
    out[observableNames[i]!] = [round(view.dist[i]!, 1000), round(view.yaw[i]!, 10000), round(view.pitch[i]!, 10000)];
  }
  return out;
}
