// The observation: what is visible in the field of view, computed against a small accessor interface so the
// simulator and the mineflayer backend run the SAME code (mineflayer passes its bot's world, entities and
// pose). The rule, for blocks and mobs alike: the nearest visible instance of each type inside the field of
// view (relative yaw within ±35°, relative pitch within ±30°), at most 64 m away, visible when there is a
// line of sight from the eyes to any part of it.
// Blocks: the field of view is cut into 81 vertical planes (one per 0.875° of yaw, so every block face-on
// at 64 m, 0.895° wide, is cut by at least one), and each plane is walked cell column by cell column (2D
// DDA over x/z) from the eyes outwards. In a plane the visibility is exact: each block is a rectangle
// whose pitch span is tested against the set of pitches still unoccluded, and an occluding block removes its
// span from the set. A plane stops when its whole pitch window is occluded or at 64 m.
// Mobs: line of sight to any of 9 points of the bounding box (centre and 8 corners pulled 5 % inwards).
// The same pass fills the LiDAR grid of the policy features (the first occluding block or water surface
// along 9 × 5 directions). Results go into typed arrays indexed by observable-name index; the reward's
// `{name: [d, yaw, pitch]}` dict is built from them once per step (`nearestDict`).
import { GAME_FACTS } from '../../schema';
import type { NearestBlocks } from '../types';
import { observableNames, stateOccludes, stateToBlock, stateVisible, WATER_BLOCK } from './registry';
import { lineOfSight, sightSegment } from './sight';
import type { BlockAccess, ChunkColumn, ColumnStore, ViewEntity, ViewPose, ViewResult } from './view';
import * as view from './view';

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
const BIG = 1e12;

// Module-local aliases: imported bindings compile to getter calls under tsx, too slow for the hot loop.
const visible = stateVisible;
const occludes = stateOccludes;
const toBlock = stateToBlock;
/** Where a LiDAR ray stops: occluding blocks and water. */
const lidarStops = new Uint8Array(stateOccludes.length);
for (let s = 0; s < lidarStops.length; s++) lidarStops[s] = stateOccludes[s] === 1 || stateToBlock[s] === WATER_BLOCK ? 1 : 0;

/** `a` radians brought into [-π, π). */
export const wrapAngle = (a: number) => a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));
const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

/**
 * The cell column being walked, for the helpers of tracePlane: the distances s0 and s1 at which the plane enters
 * and leaves it, their reciprocals, and a block's pitch span [a, b] (slopes) for lookAt, isOpen and occlude. A typed array because
 * doubles passed as arguments to a call that is not inlined are boxed (heap numbers: most of the view's
 * garbage when lookAt took them so).
 */
const span = new Float64Array(6);
const S0 = 0,
  S1 = 1,
  INV0 = 2,
  INV1 = 3,
  A = 4,
  B = 5;

// ---- the pitch set of one plane: sorted disjoint open intervals of slopes (tan of the elevation) still unoccluded ----
let openCount = 0;
const openLo = new Float64Array(64);
const openHi = new Float64Array(64);
const nextLo = new Float64Array(64);
const nextHi = new Float64Array(64);

/** Whether part of the block's pitch span [span[A], span[B]] is open. */
function isOpen(): boolean {
  const a = span[A]!,
    b = span[B]!;
  for (let i = 0; i < openCount; i++) if (a < openHi[i]! && b > openLo[i]!) return true;
  return false;
}

/** Removes the block's pitch span [span[A], span[B]] from the open set. */
function occlude(): void {
  const a = span[A]!,
    b = span[B]!;
  // Fast paths: trimming the bottom of the lowest or the top of the highest interval (the ground, a ceiling).
  if (a <= openLo[0]! && b < openHi[0]!) {
    if (b > openLo[0]!) openLo[0] = b;
    return;
  }
  const last = openCount - 1;
  if (b >= openHi[last]! && a > openLo[last]!) {
    if (a < openHi[last]!) openHi[last] = a;
    return;
  }
  let n = 0;
  for (let i = 0; i < openCount; i++) {
    const lo = openLo[i]!,
      hi = openHi[i]!;
    if (b <= lo || a >= hi) {
      nextLo[n] = lo;
      nextHi[n++] = hi;
      continue;
    }
    if (lo < a - 1e-12) {
      nextLo[n] = lo;
      nextHi[n++] = a;
    }
    if (hi > b + 1e-12) {
      nextLo[n] = b;
      nextHi[n++] = hi;
    }
    if (n > 60) break; // cannot happen in practice (each occlusion adds at most one interval); keeps the buffers safe
  }
  for (let i = 0; i < n; i++) {
    openLo[i] = nextLo[i]!;
    openHi[i] = nextHi[i]!;
  }
  openCount = n;
}

// Distance levels: every 4th plane (and each LiDAR plane) is walked from the eyes; the other even planes from
// 16 m and the odd ones from 32 m, where a plane 0.875° wide is under 0.25 / 0.5 m from its neighbours. Such a
// plane starts with the union of its two neighbours' unoccluded pitches at that distance: a line of sight
// past the near field within one plane spacing counts. This halves the work without changing what is found
// beyond 32 m, where the full resolution is needed.
const SNAP_NEAR = 16;
const SNAP_FAR = 32;
const PLANE_START = new Float64Array(VIEW_COLUMNS);
const PLANE_ORDER: number[] = [];
for (let c = 0; c < VIEW_COLUMNS; c++) PLANE_START[c] = c % 4 === 0 || c % LIDAR_EVERY === 0 ? 0 : c % 2 === 0 ? SNAP_NEAR : SNAP_FAR;
for (const start of [0, SNAP_NEAR, SNAP_FAR]) for (let c = 0; c < VIEW_COLUMNS; c++) if (PLANE_START[c] === start) PLANE_ORDER.push(c);
const SNAP_CAP = 32;
/** Open sets of each plane at 16 m (slot 2c) and 32 m (slot 2c + 1). */
const snapLo = new Float64Array(VIEW_COLUMNS * 2 * SNAP_CAP);
const snapHi = new Float64Array(VIEW_COLUMNS * 2 * SNAP_CAP);
const snapCount = new Int32Array(VIEW_COLUMNS * 2);

function saveOpen(slot: number): void {
  const n = Math.min(openCount, SNAP_CAP);
  for (let i = 0; i < n; i++) {
    snapLo[slot * SNAP_CAP + i] = openLo[i]!;
    snapHi[slot * SNAP_CAP + i] = openHi[i]!;
  }
  snapCount[slot] = n;
}

/** Sets the open set to the union of two saved ones. */
function openUnion(slotA: number, slotB: number): void {
  let i = 0,
    j = 0,
    n = 0;
  const na = snapCount[slotA]!,
    nb = snapCount[slotB]!;
  const ba = slotA * SNAP_CAP,
    bb = slotB * SNAP_CAP;
  while (i < na || j < nb) {
    let lo: number, hi: number;
    if (j >= nb || (i < na && snapLo[ba + i]! <= snapLo[bb + j]!)) {
      lo = snapLo[ba + i]!;
      hi = snapHi[ba + i]!;
      i++;
    } else {
      lo = snapLo[bb + j]!;
      hi = snapHi[bb + j]!;
      j++;
    }
    if (n > 0 && lo <= openHi[n - 1]!) {
      if (hi > openHi[n - 1]!) openHi[n - 1] = hi;
    } else if (n < 60) {
      openLo[n] = lo;
      openHi[n++] = hi;
    }
  }
  openCount = n;
}

// The chunk columns around the eyes: this step's ViewResult's `chunks`, looked up once per env while its eyes stay in
// one chunk (a map lookup per plane and chunk otherwise).
let chunkCache: (ChunkColumn | undefined)[] = [];
let chunkBaseX = 0,
  chunkBaseZ = 0;

// Per-step scratch shared by the planes.
let stepEx = 0,
  stepEy = 0,
  stepEz = 0,
  stepYaw = 0,
  stepPitch = 0;
const lidarSlope = new Float64Array(LIDAR_ROWS);

/** The plane being walked (set by observeView: its direction; by tracePlane: where the walk began, `start` metres out), in a typed array for the same reason. */
const planeAt = new Float64Array(5);
const PLANE_EX = 0,
  PLANE_EZ = 1,
  PLANE_HX = 2,
  PLANE_HZ = 3,
  PLANE_START_AT = 4;

/**
 * Looks at the visible block `st` at (x, y, z), in the cell column described by `span`, if part of its pitch span is
 * open; returns whether it occluded something.
 */
function visitCell(st: number, x: number, y: number, z: number, out: ViewResult, lidarColumn: number): boolean {
  const s0 = span[S0]!;
  const y0 = y - stepEy,
    y1 = y0 + 1;
  const a = y0 * (y0 >= 0 ? span[INV1]! : span[INV0]!);
  const b = y1 * (y1 <= 0 ? span[INV1]! : span[INV0]!);
  span[A] = a;
  span[B] = b;
  if (openCount === 1 ? a >= openHi[0]! || b <= openLo[0]! : !isOpen()) return false;
  if (lidarColumn < 0 && out.dist[toBlock[st]!]! <= s0 - 1.5) {
    // lookAt's commonest case inline (the ground, grass): a block of a kind already seen nearer, on a plane
    // without LiDAR rays, is only counted and, if it occludes, trims the open pitches.
    out.cellVisits++;
    if (occludes[st] !== 1) return false;
    occlude();
    return true;
  }
  return lookAt(st, x, y, z, out, lidarColumn);
}

/**
 * Whether the plane passes above all of chunk (cx, cz), entered at s0: when even its highest visible block
 * stays below the lowest open pitch L over the whole stretch the plane crosses it: rising (L ≥ 0) that is at
 * the entry, sinking (L < 0) at the exit, bounded above by where the plane leaves the chunk's x or z range
 * (plus a margin far above rounding).
 */
function passesAbove(chunk: ChunkColumn, cx: number, cz: number): boolean {
  const chunkTop = chunk.top;
  if (chunkTop === undefined || chunkTop >= HEIGHT_UNBOUNDED) return false;
  const L = openLo[0]!;
  let s = span[S0]!;
  if (L < 0) {
    const ex = planeAt[PLANE_EX]!,
      ez = planeAt[PLANE_EZ]!,
      hx = planeAt[PLANE_HX]!,
      hz = planeAt[PLANE_HZ]!,
      start = planeAt[PLANE_START_AT]!;
    const exitX = hx > 0 ? start + ((cx + 1) * 16 - ex) / hx : hx < 0 ? start + (cx * 16 - ex) / hx : Infinity;
    const exitZ = hz > 0 ? start + ((cz + 1) * 16 - ez) / hz : hz < 0 ? start + (cz * 16 - ez) / hz : Infinity;
    s = (exitX < exitZ ? exitX : exitZ) + 1e-6;
  }
  return stepEy + L * s >= chunkTop + 1 + 1e-6;
}
/** The chunk column (cx, cz), through the env's cache of the chunks around the eyes. */
function chunkAround(store: ColumnStore, cx: number, cz: number): ChunkColumn {
  const k = (cx - chunkBaseX) * CHUNK_SPAN + (cz - chunkBaseZ);
  let c = chunkCache[k];
  if (c === undefined) {
    c = store.column(cx, cz);
    chunkCache[k] = c;
  }
  return c;
}

/**
 * Walks one vertical plane (horizontal direction planeAt[PLANE_HX], planeAt[PLANE_HZ]) from the eyes outwards, noting visible blocks.
 * `lidarColumn` ≥ 0: this plane carries that LiDAR column.
 * What it finds is exactly what reading every cell of every cell column in the pitch range finds (the test
 * `runner/test/view-fast.test.ts` holds it to the straightforward walk); it only skips cells that cannot be
 * open: a chunk whose highest visible block lies below the plane's lowest unoccluded pitch over the whole
 * stretch the plane crosses it (passesAbove), and, in a column, the cells outside the open pitches within 64 m;
 * grazed ground goes through groundRun's tight loop. The open set is saved at each snapshot distance the walk passes (in a loop: a chunk stepped over in one go can
 * pass both).
 */
function tracePlane(world: BlockAccess, plane: number, out: ViewResult, lidarColumn: number): void {
  const ey = stepEy;
  const hx = planeAt[PLANE_HX]!,
    hz = planeAt[PLANE_HZ]!;
  const start = PLANE_START[plane]!;
  let snapAt = start < SNAP_NEAR ? SNAP_NEAR : start < SNAP_FAR ? SNAP_FAR : Infinity;
  snapCount[plane * 2] = snapCount[plane * 2 + 1] = 0;
  const ex = planeAt[PLANE_EX]!,
    ez = planeAt[PLANE_EZ]!;
  const store = world.columnStore;
  const minY = store ? store.minY : -64,
    maxY = store ? store.maxY : 320;
  const below = store ? store.below : 0,
    above = store ? store.above : 0;
  // The chunk being crossed, which may be skipped whole (passesAbove): `skipping` holds while the walk is inside it.
  let ccx = NaN,
    ccz = NaN;
  let cells: Uint16Array | null = null;
  let heights: Int16Array | null = null;
  let skipping = false;
  let x = Math.floor(ex),
    z = Math.floor(ez);
  const stepX = hx > 0 ? 1 : -1,
    stepZ = hz > 0 ? 1 : -1;
  const tDeltaX = hx !== 0 ? Math.abs(1 / hx) : Infinity;
  const tDeltaZ = hz !== 0 ? Math.abs(1 / hz) : Infinity;
  walkAt[W_TDELTA_X] = tDeltaX;
  walkAt[W_TDELTA_Z] = tDeltaZ;
  let tMaxX = hx !== 0 ? (x + (hx > 0 ? 1 : 0) - ex) / hx : Infinity;
  let tMaxZ = hz !== 0 ? (z + (hz > 0 ? 1 : 0) - ez) / hz : Infinity;
  tMaxX += start;
  tMaxZ += start;
  let s0 = start;
  let inv0 = s0 > 0 ? 1 / s0 : BIG; // 1 / s0, then carried over from the previous cell column's 1 / s1 (the same division)
  const ye = Math.floor(ey);
  while (s0 < VIEW && openCount > 0) {
    while (s0 >= snapAt) {
      saveOpen(plane * 2 + (snapAt === SNAP_NEAR ? 0 : 1));
      snapAt = snapAt === SNAP_NEAR ? SNAP_FAR : Infinity;
    }
    const s1 = tMaxX < tMaxZ ? tMaxX : tMaxZ;
    let top = Infinity;
    if (store) {
      const cx = x >> 4,
        cz = z >> 4;
      if (cx !== ccx || cz !== ccz) {
        ccx = cx;
        ccz = cz;
        const c = chunkAround(store, cx, cz);
        cells = c.cells;
        heights = c.heights;
        span[S0] = s0;
        skipping = passesAbove(c, cx, cz);
      }
      top = heights![((z & 15) << 4) | (x & 15)]!;
      // Stepped over without the y-range arithmetic: a chunk the plane passes above, and a run of columns wholly below
      // the lowest open pitch (where the plane leaves them when it sinks, enters them when it rises; by a margin far
      // above rounding), up to the chunk's edge or the next snapshot distance. Then grazed ground (groundRun).
      const L = openLo[0]!;
      if (skipping || ey + L * (L < 0 ? s1 : s0) >= top + 1 + 1e-6) {
        const stopAt = snapAt < VIEW ? snapAt : VIEW;
        for (;;) {
          if (tMaxX < tMaxZ) {
            s0 = tMaxX;
            x += stepX;
            tMaxX += tDeltaX;
          } else {
            s0 = tMaxZ;
            z += stepZ;
            tMaxZ += tDeltaZ;
          }
          if (s0 >= stopAt || x >> 4 !== ccx || z >> 4 !== ccz) break;
          if (skipping) continue;
          const next = L < 0 ? (tMaxX < tMaxZ ? tMaxX : tMaxZ) : s0;
          if (ey + L * next < heights![((z & 15) << 4) | (x & 15)]! + 1 + 1e-6) break;
        }
        inv0 = 1 / s0;
        continue;
      }
    }
    if (cells !== null && top <= ye) {
      walkAt[W_S0] = s0;
      walkAt[W_TMAX_X] = tMaxX;
      walkAt[W_TMAX_Z] = tMaxZ;
      walkAt[W_INV0] = inv0;
      walkAt[W_STOP] = snapAt < VIEW ? snapAt : VIEW;
      walkXZ[0] = x;
      walkXZ[1] = z;
      if (groundRun(out, cells, heights!, minY, maxY, stepX, stepZ, lidarColumn)) {
        s0 = walkAt[W_S0]!;
        tMaxX = walkAt[W_TMAX_X]!;
        tMaxZ = walkAt[W_TMAX_Z]!;
        inv0 = walkAt[W_INV0]!;
        x = walkXZ[0]!;
        z = walkXZ[1]!;
        continue;
      }
    }
    const inv1 = 1 / s1;
    // The y range the open pitches reach over this cell column, within 64 m of the eyes. The sphere only
    // narrows the range: below the eyes it lifts a sinking lowest pitch, above them it lowers a rising highest one.
    const L = openLo[0]!,
      H = openHi[openCount - 1]!;
    let yLoF = ey + L * (L < 0 ? s1 : s0);
    let yHiF = ey + H * (H > 0 ? s1 : s0);
    const far2 = VIEW * VIEW - s0 * s0;
    if (L < 0 && (yLoF - ey) * (yLoF - ey) > far2) yLoF = ey - Math.sqrt(far2);
    if (H > 0 && (yHiF - ey) * (yHiF - ey) > far2) yHiF = ey + Math.sqrt(far2);
    let yLo = Math.floor(yLoF);
    if (yLo < minY - 1) yLo = minY - 1;
    let yHi = Math.floor(yHiF);
    if (yHi > top) yHi = top;
    if (yHi > maxY) yHi = maxY;
    const column = ((z & 15) << 4) | (x & 15);
    span[S0] = s0;
    span[S1] = s1;
    span[INV0] = inv0;
    span[INV1] = inv1;
    // Eye level and below first (downwards), then above (upwards): the order a line from the eyes meets them in.
    // After each occlusion the bound follows the open set (no block below its lowest open pitch is looked at).
    for (let y = ye < yHi ? ye : yHi; y >= yLo; y--) {
      const st = store ? (y < minY ? below : y >= maxY ? above : cells![((y - minY) << 8) | column]!) : world.stateAt(x, y, z);
      if (visible[st] !== 1 || !visitCell(st, x, y, z, out, lidarColumn)) continue;
      if (openCount === 0) break;
      const l = openLo[0]!;
      const bound = Math.floor(ey + l * (l < 0 ? s1 : s0));
      if (bound > yLo) yLo = bound;
    }
    if (openCount > 0) {
      for (let y = ye + 1 > yLo ? ye + 1 : yLo; y <= yHi; y++) {
        const st = store ? (y < minY ? below : y >= maxY ? above : cells![((y - minY) << 8) | column]!) : world.stateAt(x, y, z);
        if (visible[st] !== 1 || !visitCell(st, x, y, z, out, lidarColumn)) continue;
        if (openCount === 0) break;
        const h = openHi[openCount - 1]!;
        const bound = Math.floor(ey + h * (h > 0 ? s1 : s0));
        if (bound < yHi) yHi = bound;
      }
    }
    inv0 = inv1;
    if (tMaxX < tMaxZ) {
      s0 = tMaxX;
      x += stepX;
      tMaxX += tDeltaX;
    } else {
      s0 = tMaxZ;
      z += stepZ;
      tMaxZ += tDeltaZ;
    }
  }
}

/** Whether LiDAR ray `i` (slope `m`), not yet stopped, crosses a block whose pitch span is [a, b]: lookAt stops it there. */
function rayCrosses(out: ViewResult, i: number, m: number, a: number, b: number): boolean {
  return out.lidarDist[i] === Infinity && m >= a && m <= b;
}

/** Whether a ray of this LiDAR column crosses the block [a, b] (groundRun leaves such a column to lookAt). */
function hitsLidar(a: number, b: number, lidarColumn: number, out: ViewResult): boolean {
  for (let r = 0; r < LIDAR_ROWS; r++) if (rayCrosses(out, r * LIDAR_COLUMNS + lidarColumn, lidarSlope[r]!, a, b)) return true;
  return false;
}

/** The 2D walk's state handed between tracePlane and groundRun (doubles in a typed array: see `span`). */
const walkAt = new Float64Array(7);
const W_S0 = 0,
  W_TMAX_X = 1,
  W_TMAX_Z = 2,
  W_INV0 = 3,
  W_TDELTA_X = 4,
  W_TDELTA_Z = 5,
  W_STOP = 6;
const walkXZ = new Int32Array(2);

/**
 * The commonest cell columns of a plane, taken in a tight loop: ground seen at a grazing angle. Such a column's only
 * cells in reach of the open pitches are its top block (occluding, of a kind already seen nearer, below the eyes, its
 * bottom edge hidden by the lowest open pitch and its top edge showing) and, above it, see-through blocks of kinds seen
 * nearer (a grass plant, a flower, both halves of tall grass; water only on a plane without LiDAR rays); on a plane
 * with LiDAR rays, no ray still running crosses the top block. tracePlane's general path would count them and raise
 * the lowest open pitch to the block's top edge, nothing else; this does the same with the same arithmetic, and steps
 * over a column where the open pitches reach nothing, as the general path would. It stops before the first column
 * that is anything else (which tracePlane then takes as usual), at the chunk's edge, and at the next snapshot distance
 * or 64 m (walkAt[W_STOP]). Reads and writes the walk's state in walkAt / walkXZ; returns whether it took any column.
 */
function groundRun(
  out: ViewResult,
  cells: Uint16Array,
  heights: Int16Array,
  minY: number,
  maxY: number,
  stepX: number,
  stepZ: number,
  lidarColumn: number,
): boolean {
  const ey = stepEy,
    ye = Math.floor(ey);
  let s0 = walkAt[W_S0]!,
    tMaxX = walkAt[W_TMAX_X]!,
    tMaxZ = walkAt[W_TMAX_Z]!,
    inv0 = walkAt[W_INV0]!;
  const tDeltaX = walkAt[W_TDELTA_X]!,
    tDeltaZ = walkAt[W_TDELTA_Z]!,
    stopAt = walkAt[W_STOP]!;
  let x = walkXZ[0]!,
    z = walkXZ[1]!;
  const cx = x >> 4,
    cz = z >> 4;
  // Locals of what the loop reads on every column (a module binding or a property is a load chain each time).
  const dist = out.dist,
    vis = visible,
    occ = occludes,
    stops = lidarStops,
    names = toBlock;
  let taken = false;
  columns: for (;;) {
    const s1 = tMaxX < tMaxZ ? tMaxX : tMaxZ;
    const column = ((z & 15) << 4) | (x & 15);
    const top = heights[column]!;
    if (top > ye || top <= minY || top >= maxY) break;
    // The lowest y the open pitches reach here, as tracePlane computes it (the 64 m sphere included).
    const L = openLo[0]!;
    let yLoF = ey + L * (L < 0 ? s1 : s0);
    const far2 = VIEW * VIEW - s0 * s0;
    if (L < 0 && (yLoF - ey) * (yLoF - ey) > far2) yLoF = ey - Math.sqrt(far2);
    const inv1 = 1 / s1;
    // The top block is in reach: top ≥ floor(yLoF), tracePlane's lowest y (its clamp to minY − 1 cannot matter here).
    if (yLoF < top + 1) {
      let y = top;
      let st = cells[((y - minY) << 8) | column]!;
      if (vis[st] !== 1) break;
      let visits = 0;
      // See-through blocks on top, each of a kind seen nearer (a plant, both halves of tall grass), looked at and not
      // occluding; water stops LiDAR rays, so on a plane with LiDAR rays it is left to lookAt.
      while (occ[st] !== 1) {
        if (dist[names[st]!]! > s0 - 1.5 || (lidarColumn >= 0 && stops[st] === 1) || y <= minY) break columns;
        const y0 = y - ey,
          y1 = y0 + 1;
        span[A] = y0 * (y0 >= 0 ? inv1 : inv0);
        span[B] = y1 * (y1 <= 0 ? inv1 : inv0);
        if (isOpen()) visits++;
        y--;
        st = cells[((y - minY) << 8) | column]!;
        if (yLoF >= y + 1) break; // the cells below are out of reach: the column ends here
        if (vis[st] !== 1) break columns;
      }
      if (yLoF < y + 1) {
        if (dist[names[st]!]! > s0 - 1.5) break;
        const y0 = y - ey,
          y1 = y0 + 1;
        const a = y0 * (y0 >= 0 ? inv1 : inv0),
          b = y1 * (y1 <= 0 ? inv1 : inv0);
        // Its bottom edge hidden, its top edge showing below the top of the lowest open interval. That also makes the
        // cells above it out of reach where tracePlane's loop starts (the highest open pitch is above its top edge; a
        // plant whose span is wholly above it is not open), and the cell below it once it occludes (the lowest open
        // pitch becomes its top edge).
        const lo = openLo[0]!;
        if (!(a <= lo && b > lo && b < openHi[0]!) || (lidarColumn >= 0 && hitsLidar(a, b, lidarColumn, out))) break;
        openLo[0] = b;
        visits++;
      }
      out.cellVisits += visits;
    }
    taken = true;
    inv0 = inv1;
    if (tMaxX < tMaxZ) {
      s0 = tMaxX;
      x += stepX;
      tMaxX += tDeltaX;
    } else {
      s0 = tMaxZ;
      z += stepZ;
      tMaxZ += tDeltaZ;
    }
    if (s0 >= stopAt || x >> 4 !== cx || z >> 4 !== cz) break;
  }
  walkAt[W_S0] = s0;
  walkAt[W_TMAX_X] = tMaxX;
  walkAt[W_TMAX_Z] = tMaxZ;
  walkAt[W_INV0] = inv0;
  walkXZ[0] = x;
  walkXZ[1] = z;
  return taken;
}

/**
 * Looks at the visible block `st` at (x, y, z), part of whose pitch span [a, b] (slopes, in `span`) is open, in the cell
 * column the plane enters at s0: notes it, hits LiDAR rays, occludes. Returns whether it occluded something.
 */
function lookAt(st: number, x: number, y: number, z: number, out: ViewResult, lidarColumn: number): boolean {
  const s0 = span[S0]!,
    a = span[A]!,
    b = span[B]!;
  const ex = stepEx,
    ey = stepEy,
    ez = stepEz;
  out.cellVisits++;
  const name = toBlock[st]!;
  const best = out.dist[name]!;
  // The block's nearest point is at least s0 − √2 away: a far block cannot beat a nearer sighting.
  if (best > s0 - 1.5) {
    const nx = ex < x ? x - ex : ex > x + 1 ? x + 1 - ex : 0;
    const ny = ey < y ? y - ey : ey > y + 1 ? y + 1 - ey : 0;
    const nz = ez < z ? z - ez : ez > z + 1 ? z + 1 - ez : 0;
    const d2 = nx * nx + ny * ny + nz * nz;
    if (d2 <= VIEW * VIEW && d2 < best * best) {
      const cx = x + 0.5 - ex,
        cy = y + 0.5 - ey,
        cz = z + 0.5 - ez;
      const relYaw = clamp(wrapAngle(stepYaw - Math.atan2(-cx, -cz)), -FOV_YAW, FOV_YAW);
      const relPitch = clamp(stepPitch - Math.atan2(cy, Math.sqrt(cx * cx + cz * cz)), -FOV_PITCH, FOV_PITCH);
      out.note(name, Math.sqrt(d2), relYaw, relPitch);
    }
  }
  if (lidarColumn >= 0 && lidarStops[st] === 1) {
    for (let r = 0; r < LIDAR_ROWS; r++) {
      const i = r * LIDAR_COLUMNS + lidarColumn;
      const m = lidarSlope[r]!;
      if (!rayCrosses(out, i, m, a, b)) continue;
      const entry = Math.max(s0, m > 0 ? (y - ey) / m : m < 0 ? (y + 1 - ey) / m : s0);
      const t = entry * Math.sqrt(1 + m * m);
      out.lidarDist[i] = t <= VIEW ? t : Infinity;
      out.lidarState[i] = st;
    }
  }
  if (occludes[st] !== 1) return false;
  occlude();
  return true;
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
  chunkBaseX = (Math.floor(stepEx) >> 4) - 5;
  chunkBaseZ = (Math.floor(stepEz) >> 4) - 5;
  const store = world.columnStore ?? null;
  if (out.chunksStore !== store || out.chunksBaseX !== chunkBaseX || out.chunksBaseZ !== chunkBaseZ) {
    out.chunks.fill(undefined);
    out.chunksStore = store;
    out.chunksBaseX = chunkBaseX;
    out.chunksBaseZ = chunkBaseZ;
  }
  chunkCache = out.chunks;
  const start = world.stateAt(Math.floor(stepEx), Math.floor(stepEy), Math.floor(stepEz));
  if (occludes[start] === 1) {
    // Eyes inside a solid block see that block and nothing else.
    out.note(toBlock[start]!, 0, 0, 0);
    out.lidarDist.fill(0);
    out.lidarState.fill(start);
    out.keepBlocks(world, pose, true);
    return true;
  }
  const mLo = Math.tan(Math.max(-MAX_ELEVATION, pose.pitch - FOV_PITCH));
  const mHi = Math.tan(Math.min(MAX_ELEVATION, pose.pitch + FOV_PITCH));
  for (let r = 0; r < LIDAR_ROWS; r++) lidarSlope[r] = Math.tan(clamp(pose.pitch - lidarPitch[r]!, -MAX_ELEVATION, MAX_ELEVATION));
  if (out.planesYaw !== pose.yaw) {
    for (let c = 0; c < VIEW_COLUMNS; c++) {
      const yaw = pose.yaw - columnYaw[c]!;
      out.planesHx[c] = -Math.sin(yaw);
      out.planesHz[c] = -Math.cos(yaw);
    }
    out.planesYaw = pose.yaw;
  }
  for (const c of PLANE_ORDER) {
    const start = PLANE_START[c]!;
    if (start === 0) {
      openCount = 1;
      openLo[0] = mLo;
      openHi[0] = mHi;
    } else {
      const step = start === SNAP_NEAR ? 2 : 1,
        slot = start === SNAP_NEAR ? 0 : 1;
      openUnion((c - step) * 2 + slot, (c + step) * 2 + slot);
    }
    // The plane's direction, and where its walk begins: `start` metres out along it.
    planeAt[PLANE_HX] = out.planesHx[c]!;
    planeAt[PLANE_HZ] = out.planesHz[c]!;
    planeAt[PLANE_EX] = stepEx + out.planesHx[c]! * start;
    planeAt[PLANE_EZ] = stepEz + out.planesHz[c]! * start;
    planeAt[PLANE_START_AT] = start;
    tracePlane(world, c, out, c % LIDAR_EVERY === 0 ? c / LIDAR_EVERY : -1);
  }
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
