// The view's block walk (runner/src/env/game/observe.ts describes the rule), in AssemblyScript compiled to
// WebAssembly: the same arithmetic in float64, in the same order, as the TypeScript walk it replaced, so every view
// is the same to the bit (runner/test/view-fast.test.ts holds it to the straightforward walk of
// test/helpers/reference-view.ts). Compiled by `npm run build:wasm` into runner/src/env/game/view-walk.wasm.ts.
//
// What it leaves to the JavaScript side (observe.ts): the trigonometry (the planes' directions, the pitch window's
// and the LiDAR rows' slopes, a sighting's angles), so that V8's Math functions give every value; the chunk
// columns, which lie in this memory (a ColumnStore makes them here: observe.ts allocChunkColumn) and which it is
// given in a table of the 11 × 11 chunks around the eyes (a chunk not yet in the table is asked for through the
// `chunkAt` import); and a world without chunk columns, whose cells it reads through the `stateAt` import.
//
// Memory: imported from observe.ts, shared, so that growing it keeps every typed array over it valid. Fixed arrays
// at the addresses below (their contents set from JavaScript through the exported addresses), then, from the heap
// base, chunk columns, each heights (i16 × 256) followed by cells (u16).

@external('view', 'chunkAt')
declare function chunkAt(k: i32): i32;
@external('view', 'stateAt')
declare function importedStateAt(x: i32, y: i32, z: i32): i32;

const VIEW_COLUMNS = 81;
const LIDAR_COLUMNS = 9;
const LIDAR_ROWS = 5;
const LIDAR_EVERY = 10;
const CHUNK_SPAN = 11;
const VIEW: f64 = 64;
const BIG: f64 = 1e12;
const SNAP_NEAR: f64 = 16;
const SNAP_FAR: f64 = 32;
const SNAP_CAP = 32;
const HEIGHT_UNBOUNDED = 32767;
/** Bounds of the tables the JavaScript side fills: block states and observable names. */
export const MAX_STATES = 32768;
export const MAX_NAMES = 1024;

// Per block state (set once): visible, occludes, stops a LiDAR ray (u8 each); its observable name (u16).
export const VISIBLE: usize = memory.data(MAX_STATES);
export const OCCLUDES: usize = memory.data(MAX_STATES);
export const LIDAR_STOPS: usize = memory.data(MAX_STATES);
export const TO_NAME: usize = memory.data(MAX_STATES * 2);
// Per view, in: the pitch window's slopes (2), the LiDAR rows' slopes (5), each plane's direction x then z (81 + 81).
export const VIEW_IN: usize = memory.data(8 * (2 + LIDAR_ROWS + 2 * VIEW_COLUMNS));
// Per view, in and filled as the walk asks: each chunk around the eyes, its address (0: not yet asked) and top.
export const CHUNK_TABLE: usize = memory.data(8 * CHUNK_SPAN * CHUNK_SPAN);
// Per view, out: distance per name (Infinity: not seen), names seen in first-seen order, the block of each name's
// nearest sighting (x, y, z), the LiDAR rays' distances and states.
export const DIST: usize = memory.data(8 * MAX_NAMES);
export const SEEN: usize = memory.data(4 * MAX_NAMES);
export const SIGHT: usize = memory.data(12 * MAX_NAMES);
export const LIDAR_DIST: usize = memory.data(8 * LIDAR_COLUMNS * LIDAR_ROWS);
export const LIDAR_STATE: usize = memory.data(4 * LIDAR_COLUMNS * LIDAR_ROWS);
/** Where chunk columns may begin. */
export function heapBase(): usize {
  return __heap_base;
}

// Scratch: the open pitch set of the plane walked, and each plane's open sets at 16 m and 32 m.
const OPEN_LO: usize = memory.data(8 * 64);
const OPEN_HI: usize = memory.data(8 * 64);
const NEXT_LO: usize = memory.data(8 * 64);
const NEXT_HI: usize = memory.data(8 * 64);
const SNAP_LO: usize = memory.data(8 * VIEW_COLUMNS * 2 * SNAP_CAP);
const SNAP_HI: usize = memory.data(8 * VIEW_COLUMNS * 2 * SNAP_CAP);
const SNAP_COUNT: usize = memory.data(4 * VIEW_COLUMNS * 2);

let seenCount: i32 = 0;
let cellVisits: i32 = 0;
export function seenTotal(): i32 {
  return seenCount;
}
export function blocksLookedAt(): i32 {
  return cellVisits;
}

// The view being walked: the eyes, the chunk table's origin, the world's height band, whether it has chunk columns.
let eyeX: f64 = 0,
  eyeY: f64 = 0,
  eyeZ: f64 = 0;
let chunkBaseX: i32 = 0,
  chunkBaseZ: i32 = 0;
let minY: i32 = 0,
  maxY: i32 = 0,
  belowState: i32 = 0,
  aboveState: i32 = 0;
let hasStore = false;
// The plane being walked: where its walk began (`planeStart` metres out along it) and its direction.
let planeEX: f64 = 0,
  planeEZ: f64 = 0,
  planeHX: f64 = 0,
  planeHZ: f64 = 0,
  planeStart: f64 = 0;
// The cell column being walked: the distances at which the plane enters and leaves it, their reciprocals, and a
// block's pitch span [spanA, spanB] (slopes).
let spanS0: f64 = 0,
  spanInv0: f64 = 0,
  spanInv1: f64 = 0,
  spanA: f64 = 0,
  spanB: f64 = 0;
let openCount: i32 = 0;

// @ts-ignore: decorator
@inline function openLo(i: i32): f64 {
  return load<f64>(OPEN_LO + (<usize>i << 3));
}
// @ts-ignore: decorator
@inline function openHi(i: i32): f64 {
  return load<f64>(OPEN_HI + (<usize>i << 3));
}
// @ts-ignore: decorator
@inline function distOf(name: i32): f64 {
  return load<f64>(DIST + (<usize>name << 3));
}
// @ts-ignore: decorator
@inline function nameOf(st: i32): i32 {
  return <i32>load<u16>(TO_NAME + (<usize>st << 1));
}
// @ts-ignore: decorator
@inline function isVisible(st: i32): bool {
  return load<u8>(VISIBLE + <usize>st) == 1;
}
// @ts-ignore: decorator
@inline function doesOcclude(st: i32): bool {
  return load<u8>(OCCLUDES + <usize>st) == 1;
}
// @ts-ignore: decorator
@inline function stopsLidar(st: i32): bool {
  return load<u8>(LIDAR_STOPS + <usize>st) == 1;
}
// @ts-ignore: decorator
@inline function lidarSlope(r: i32): f64 {
  return load<f64>(VIEW_IN + 16 + (<usize>r << 3));
}
// @ts-ignore: decorator
@inline function lidarDist(i: i32): f64 {
  return load<f64>(LIDAR_DIST + (<usize>i << 3));
}

/** Whether part of the block's pitch span [spanA, spanB] is open. */
function isOpen(): bool {
  const a = spanA,
    b = spanB;
  for (let i = 0; i < openCount; i++) if (a < openHi(i) && b > openLo(i)) return true;
  return false;
}

/** Removes the block's pitch span [spanA, spanB] from the open set. */
function occlude(): void {
  const a = spanA,
    b = spanB;
  // Fast paths: trimming the bottom of the lowest or the top of the highest interval (the ground, a ceiling).
  if (a <= openLo(0) && b < openHi(0)) {
    if (b > openLo(0)) store<f64>(OPEN_LO, b);
    return;
  }
  const last = openCount - 1;
  if (b >= openHi(last) && a > openLo(last)) {
    if (a < openHi(last)) store<f64>(OPEN_HI + (<usize>last << 3), a);
    return;
  }
  let n = 0;
  for (let i = 0; i < openCount; i++) {
    const lo = openLo(i),
      hi = openHi(i);
    if (b <= lo || a >= hi) {
      store<f64>(NEXT_LO + (<usize>n << 3), lo);
      store<f64>(NEXT_HI + (<usize>(n++) << 3), hi);
      continue;
    }
    if (lo < a - 1e-12) {
      store<f64>(NEXT_LO + (<usize>n << 3), lo);
      store<f64>(NEXT_HI + (<usize>(n++) << 3), a);
    }
    if (hi > b + 1e-12) {
      store<f64>(NEXT_LO + (<usize>n << 3), b);
      store<f64>(NEXT_HI + (<usize>(n++) << 3), hi);
    }
    if (n > 60) break; // cannot happen in practice (each occlusion adds at most one interval); keeps the buffers safe
  }
  memory.copy(OPEN_LO, NEXT_LO, <usize>n << 3);
  memory.copy(OPEN_HI, NEXT_HI, <usize>n << 3);
  openCount = n;
}

function saveOpen(slot: i32): void {
  const n = openCount < SNAP_CAP ? openCount : SNAP_CAP;
  const at = <usize>(slot * SNAP_CAP) << 3;
  memory.copy(SNAP_LO + at, OPEN_LO, <usize>n << 3);
  memory.copy(SNAP_HI + at, OPEN_HI, <usize>n << 3);
  store<i32>(SNAP_COUNT + (<usize>slot << 2), n);
}

/** Sets the open set to the union of two saved ones. */
function openUnion(slotA: i32, slotB: i32): void {
  let i = 0,
    j = 0,
    n = 0;
  const na = load<i32>(SNAP_COUNT + (<usize>slotA << 2)),
    nb = load<i32>(SNAP_COUNT + (<usize>slotB << 2));
  const ba = <usize>(slotA * SNAP_CAP) << 3,
    bb = <usize>(slotB * SNAP_CAP) << 3;
  while (i < na || j < nb) {
    let lo: f64, hi: f64;
    if (j >= nb || (i < na && load<f64>(SNAP_LO + ba + (<usize>i << 3)) <= load<f64>(SNAP_LO + bb + (<usize>j << 3)))) {
      lo = load<f64>(SNAP_LO + ba + (<usize>i << 3));
      hi = load<f64>(SNAP_HI + ba + (<usize>i << 3));
      i++;
    } else {
      lo = load<f64>(SNAP_LO + bb + (<usize>j << 3));
      hi = load<f64>(SNAP_HI + bb + (<usize>j << 3));
      j++;
    }
    if (n > 0 && lo <= openHi(n - 1)) {
      if (hi > openHi(n - 1)) store<f64>(OPEN_HI + (<usize>(n - 1) << 3), hi);
    } else if (n < 60) {
      store<f64>(OPEN_LO + (<usize>n << 3), lo);
      store<f64>(OPEN_HI + (<usize>(n++) << 3), hi);
    }
  }
  openCount = n;
}

/** Records a sighting of `name` at distance d of the block (x, y, z) if it is the nearest of its name so far. */
function note(name: i32, d: f64, x: i32, y: i32, z: i32): void {
  const cur = distOf(name);
  if (d >= cur) return;
  if (cur == Infinity) store<i32>(SEEN + (<usize>(seenCount++) << 2), name);
  store<f64>(DIST + (<usize>name << 3), d);
  const at = SIGHT + <usize>name * 12;
  store<i32>(at, x);
  store<i32>(at, y, 4);
  store<i32>(at, z, 8);
}

/** Whether LiDAR ray `i` (slope `m`), not yet stopped, crosses a block whose pitch span is [a, b]: lookAt stops it there. */
// @ts-ignore: decorator
@inline function rayCrosses(i: i32, m: f64, a: f64, b: f64): bool {
  return lidarDist(i) == Infinity && m >= a && m <= b;
}

/** Whether a ray of this LiDAR column crosses the block [a, b] (groundRun leaves such a column to lookAt). */
function hitsLidar(a: f64, b: f64, lidarColumn: i32): bool {
  for (let r = 0; r < LIDAR_ROWS; r++) if (rayCrosses(r * LIDAR_COLUMNS + lidarColumn, lidarSlope(r), a, b)) return true;
  return false;
}

/**
 * Looks at the visible block `st` at (x, y, z), part of whose pitch span [spanA, spanB] is open, in the cell column
 * the plane enters at spanS0: notes it, hits LiDAR rays, occludes. Returns whether it occluded something.
 */
function lookAt(st: i32, x: i32, y: i32, z: i32, lidarColumn: i32): bool {
  const s0 = spanS0,
    a = spanA,
    b = spanB;
  const ex = eyeX,
    ey = eyeY,
    ez = eyeZ;
  cellVisits++;
  const name = nameOf(st);
  const best = distOf(name);
  // The block's nearest point is at least s0 − √2 away: a far block cannot beat a nearer sighting.
  if (best > s0 - 1.5) {
    const fx = <f64>x,
      fy = <f64>y,
      fz = <f64>z;
    const nx: f64 = ex < fx ? fx - ex : ex > <f64>(x + 1) ? <f64>(x + 1) - ex : 0;
    const ny: f64 = ey < fy ? fy - ey : ey > <f64>(y + 1) ? <f64>(y + 1) - ey : 0;
    const nz: f64 = ez < fz ? fz - ez : ez > <f64>(z + 1) ? <f64>(z + 1) - ez : 0;
    const d2 = nx * nx + ny * ny + nz * nz;
    if (d2 <= VIEW * VIEW && d2 < best * best) note(name, Math.sqrt(d2), x, y, z);
  }
  if (lidarColumn >= 0 && stopsLidar(st)) {
    for (let r = 0; r < LIDAR_ROWS; r++) {
      const i = r * LIDAR_COLUMNS + lidarColumn;
      const m = lidarSlope(r);
      if (!rayCrosses(i, m, a, b)) continue;
      const entry = max<f64>(s0, m > 0 ? (<f64>y - ey) / m : m < 0 ? (<f64>(y + 1) - ey) / m : s0);
      const t = entry * Math.sqrt(1 + m * m);
      store<f64>(LIDAR_DIST + (<usize>i << 3), t <= VIEW ? t : Infinity);
      store<i32>(LIDAR_STATE + (<usize>i << 2), st);
    }
  }
  if (!doesOcclude(st)) return false;
  occlude();
  return true;
}

/**
 * Looks at the visible block `st` at (x, y, z), in the cell column described by the span, if part of its pitch span is
 * open; returns whether it occluded something.
 */
function visitCell(st: i32, x: i32, y: i32, z: i32, lidarColumn: i32): bool {
  const s0 = spanS0;
  const y0 = <f64>y - eyeY,
    y1 = y0 + 1;
  const a = y0 * (y0 >= 0 ? spanInv1 : spanInv0);
  const b = y1 * (y1 <= 0 ? spanInv1 : spanInv0);
  spanA = a;
  spanB = b;
  if (openCount == 1 ? a >= openHi(0) || b <= openLo(0) : !isOpen()) return false;
  if (lidarColumn < 0 && distOf(nameOf(st)) <= s0 - 1.5) {
    // lookAt's commonest case inline (the ground, grass): a block of a kind already seen nearer, on a plane
    // without LiDAR rays, is only counted and, if it occludes, trims the open pitches.
    cellVisits++;
    if (!doesOcclude(st)) return false;
    occlude();
    return true;
  }
  return lookAt(st, x, y, z, lidarColumn);
}

/**
 * Whether the plane passes above all of chunk (cx, cz), entered at s0: when even its highest visible block stays below
 * the lowest open pitch L over the whole stretch the plane crosses it: rising (L ≥ 0) that is at the entry, sinking
 * (L < 0) at the exit, bounded above by where the plane leaves the chunk's x or z range (plus a margin far above
 * rounding).
 */
function passesAbove(chunkTop: i32, cx: i32, cz: i32, s0: f64): bool {
  if (chunkTop >= HEIGHT_UNBOUNDED) return false;
  const L = openLo(0);
  let s = s0;
  if (L < 0) {
    const ex = planeEX,
      ez = planeEZ,
      hx = planeHX,
      hz = planeHZ,
      start = planeStart;
    const exitX: f64 = hx > 0 ? start + (<f64>((cx + 1) * 16) - ex) / hx : hx < 0 ? start + (<f64>(cx * 16) - ex) / hx : Infinity;
    const exitZ: f64 = hz > 0 ? start + (<f64>((cz + 1) * 16) - ez) / hz : hz < 0 ? start + (<f64>(cz * 16) - ez) / hz : Infinity;
    s = (exitX < exitZ ? exitX : exitZ) + 1e-6;
  }
  return eyeY + L * s >= <f64>chunkTop + 1 + 1e-6;
}

// The 2D walk's state handed between tracePlane and groundRun.
let walkS0: f64 = 0,
  walkTMaxX: f64 = 0,
  walkTMaxZ: f64 = 0,
  walkInv0: f64 = 0,
  walkTDeltaX: f64 = 0,
  walkTDeltaZ: f64 = 0,
  walkStop: f64 = 0;
let walkX: i32 = 0,
  walkZ: i32 = 0;

/**
 * The commonest cell columns of a plane, taken in a tight loop: ground seen at a grazing angle. Such a column's only
 * cells in reach of the open pitches are its top block (occluding, of a kind already seen nearer, below the eyes, its
 * bottom edge hidden by the lowest open pitch and its top edge showing) and, above it, see-through blocks of kinds seen
 * nearer (a grass plant, a flower, both halves of tall grass; water only on a plane without LiDAR rays); on a plane
 * with LiDAR rays, no ray still running crosses the top block. tracePlane's general path would count them and raise
 * the lowest open pitch to the block's top edge, nothing else; this does the same with the same arithmetic, and steps
 * over a column where the open pitches reach nothing, as the general path would. It stops before the first column
 * that is anything else (which tracePlane then takes as usual), at the chunk's edge, and at the next snapshot distance
 * or 64 m (walkStop). Reads and writes the walk's state; returns whether it took any column.
 */
function groundRun(slot: usize, stepX: i32, stepZ: i32, lidarColumn: i32): bool {
  const ey = eyeY,
    ye = <i32>Math.floor(ey);
  let s0 = walkS0,
    tMaxX = walkTMaxX,
    tMaxZ = walkTMaxZ,
    inv0 = walkInv0;
  const tDeltaX = walkTDeltaX,
    tDeltaZ = walkTDeltaZ,
    stopAt = walkStop;
  let x = walkX,
    z = walkZ;
  const cx = x >> 4,
    cz = z >> 4;
  const cells = slot + 512;
  let taken = false;
  for (;;) {
    const s1 = tMaxX < tMaxZ ? tMaxX : tMaxZ;
    const column = ((z & 15) << 4) | (x & 15);
    const top = <i32>load<i16>(slot + (<usize>column << 1));
    if (top > ye || top <= minY || top >= maxY) break;
    // The lowest y the open pitches reach here, as tracePlane computes it (the 64 m sphere included).
    const L = openLo(0);
    let yLoF = ey + L * (L < 0 ? s1 : s0);
    const far2 = VIEW * VIEW - s0 * s0;
    if (L < 0 && (yLoF - ey) * (yLoF - ey) > far2) yLoF = ey - Math.sqrt(far2);
    const inv1 = 1 / s1;
    // The top block is in reach: top ≥ floor(yLoF), tracePlane's lowest y (its clamp to minY − 1 cannot matter here).
    if (yLoF < <f64>(top + 1)) {
      let y = top;
      let st = <i32>load<u16>(cells + (<usize>(((y - minY) << 8) | column) << 1));
      if (!isVisible(st)) break;
      let visits = 0;
      // See-through blocks on top, each of a kind seen nearer (a plant, both halves of tall grass), looked at and not
      // occluding; water stops LiDAR rays, so on a plane with LiDAR rays it is left to lookAt.
      let handBack = false;
      while (!doesOcclude(st)) {
        if (distOf(nameOf(st)) > s0 - 1.5 || (lidarColumn >= 0 && stopsLidar(st)) || y <= minY) {
          handBack = true;
          break;
        }
        const y0 = <f64>y - ey,
          y1 = y0 + 1;
        spanA = y0 * (y0 >= 0 ? inv1 : inv0);
        spanB = y1 * (y1 <= 0 ? inv1 : inv0);
        if (isOpen()) visits++;
        y--;
        st = <i32>load<u16>(cells + (<usize>(((y - minY) << 8) | column) << 1));
        if (yLoF >= <f64>(y + 1)) break; // the cells below are out of reach: the column ends here
        if (!isVisible(st)) {
          handBack = true;
          break;
        }
      }
      if (handBack) break;
      if (yLoF < <f64>(y + 1)) {
        if (distOf(nameOf(st)) > s0 - 1.5) break;
        const y0 = <f64>y - ey,
          y1 = y0 + 1;
        const a = y0 * (y0 >= 0 ? inv1 : inv0),
          b = y1 * (y1 <= 0 ? inv1 : inv0);
        // Its bottom edge hidden, its top edge showing below the top of the lowest open interval. That also makes the
        // cells above it out of reach where tracePlane's loop starts (the highest open pitch is above its top edge; a
        // plant whose span is wholly above it is not open), and the cell below it once it occludes (the lowest open
        // pitch becomes its top edge).
        const lo = openLo(0);
        if (!(a <= lo && b > lo && b < openHi(0)) || (lidarColumn >= 0 && hitsLidar(a, b, lidarColumn))) break;
        store<f64>(OPEN_LO, b);
        visits++;
      }
      cellVisits += visits;
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
    if (s0 >= stopAt || x >> 4 != cx || z >> 4 != cz) break;
  }
  walkS0 = s0;
  walkTMaxX = tMaxX;
  walkTMaxZ = tMaxZ;
  walkInv0 = inv0;
  walkX = x;
  walkZ = z;
  return taken;
}

/** The slot of the chunk column (cx, cz) in the table around the eyes, asked for once per view. */
// @ts-ignore: decorator
@inline function chunkSlot(k: i32): usize {
  const slot = load<i32>(CHUNK_TABLE + (<usize>k << 3));
  return <usize>(slot !== 0 ? slot : chunkAt(k));
}

/** Block state at (x, y, z) of the cell column at `column` of chunk slot `slot`, or of the band's fills. */
// @ts-ignore: decorator
@inline function cellAt(slot: usize, column: i32, x: i32, y: i32, z: i32): i32 {
  if (!hasStore) return importedStateAt(x, y, z);
  return y < minY ? belowState : y >= maxY ? aboveState : <i32>load<u16>(slot + 512 + (<usize>(((y - minY) << 8) | column) << 1));
}

/**
 * Walks one vertical plane (direction planeHX, planeHZ) from the eyes outwards, noting visible blocks. `lidarColumn`
 * ≥ 0: this plane carries that LiDAR column. What it finds is exactly what reading every cell of every cell column in
 * the pitch range finds; it only skips cells that cannot be open: a chunk whose highest visible block lies below the
 * plane's lowest unoccluded pitch over the whole stretch the plane crosses it (passesAbove), and, in a column, the
 * cells outside the open pitches within 64 m; grazed ground goes through groundRun's tight loop. The open set is saved
 * at each snapshot distance the walk passes (in a loop: a chunk stepped over in one go can pass both).
 */
function tracePlane(plane: i32, start: f64, lidarColumn: i32): void {
  const ey = eyeY;
  const hx = planeHX,
    hz = planeHZ;
  let snapAt: f64 = start < SNAP_NEAR ? SNAP_NEAR : start < SNAP_FAR ? SNAP_FAR : Infinity;
  store<i32>(SNAP_COUNT + (<usize>(plane * 2) << 2), 0);
  store<i32>(SNAP_COUNT + (<usize>(plane * 2 + 1) << 2), 0);
  const ex = planeEX,
    ez = planeEZ;
  // The chunk being crossed, which may be skipped whole (passesAbove): `skipping` holds while the walk is inside it.
  let ccx: i32 = i32.MIN_VALUE,
    ccz: i32 = i32.MIN_VALUE;
  let slot: usize = 0;
  let skipping = false;
  let x = <i32>Math.floor(ex),
    z = <i32>Math.floor(ez);
  const stepX = hx > 0 ? 1 : -1,
    stepZ = hz > 0 ? 1 : -1;
  const tDeltaX: f64 = hx != 0 ? Math.abs(1 / hx) : Infinity;
  const tDeltaZ: f64 = hz != 0 ? Math.abs(1 / hz) : Infinity;
  walkTDeltaX = tDeltaX;
  walkTDeltaZ = tDeltaZ;
  let tMaxX: f64 = hx != 0 ? (<f64>(x + (hx > 0 ? 1 : 0)) - ex) / hx : Infinity;
  let tMaxZ: f64 = hz != 0 ? (<f64>(z + (hz > 0 ? 1 : 0)) - ez) / hz : Infinity;
  tMaxX += start;
  tMaxZ += start;
  let s0 = start;
  let inv0: f64 = s0 > 0 ? 1 / s0 : BIG; // 1 / s0, then carried over from the previous cell column's 1 / s1 (the same division)
  const ye = <i32>Math.floor(ey);
  while (s0 < VIEW && openCount > 0) {
    while (s0 >= snapAt) {
      saveOpen(plane * 2 + (snapAt == SNAP_NEAR ? 0 : 1));
      snapAt = snapAt == SNAP_NEAR ? SNAP_FAR : Infinity;
    }
    const s1 = tMaxX < tMaxZ ? tMaxX : tMaxZ;
    let top: i32 = i32.MAX_VALUE;
    if (hasStore) {
      const cx = x >> 4,
        cz = z >> 4;
      if (cx != ccx || cz != ccz) {
        ccx = cx;
        ccz = cz;
        const k = (cx - chunkBaseX) * CHUNK_SPAN + (cz - chunkBaseZ);
        slot = chunkSlot(k);
        skipping = passesAbove(load<i32>(CHUNK_TABLE + (<usize>k << 3), 4), cx, cz, s0);
      }
      top = <i32>load<i16>(slot + (<usize>(((z & 15) << 4) | (x & 15)) << 1));
      // Stepped over without the y-range arithmetic: a chunk the plane passes above, and a run of columns wholly below
      // the lowest open pitch (where the plane leaves them when it sinks, enters them when it rises; by a margin far
      // above rounding), up to the chunk's edge or the next snapshot distance. Then grazed ground (groundRun).
      const L = openLo(0);
      if (skipping || ey + L * (L < 0 ? s1 : s0) >= <f64>top + 1 + 1e-6) {
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
          if (s0 >= stopAt || x >> 4 != ccx || z >> 4 != ccz) break;
          if (skipping) continue;
          const next = L < 0 ? (tMaxX < tMaxZ ? tMaxX : tMaxZ) : s0;
          if (ey + L * next < <f64>load<i16>(slot + (<usize>(((z & 15) << 4) | (x & 15)) << 1)) + 1 + 1e-6) break;
        }
        inv0 = 1 / s0;
        continue;
      }
      if (top <= ye) {
        walkS0 = s0;
        walkTMaxX = tMaxX;
        walkTMaxZ = tMaxZ;
        walkInv0 = inv0;
        walkStop = snapAt < VIEW ? snapAt : VIEW;
        walkX = x;
        walkZ = z;
        if (groundRun(slot, stepX, stepZ, lidarColumn)) {
          s0 = walkS0;
          tMaxX = walkTMaxX;
          tMaxZ = walkTMaxZ;
          inv0 = walkInv0;
          x = walkX;
          z = walkZ;
          continue;
        }
      }
    }
    const inv1 = 1 / s1;
    // The y range the open pitches reach over this cell column, within 64 m of the eyes. The sphere only narrows the
    // range: below the eyes it lifts a sinking lowest pitch, above them it lowers a rising highest one.
    const L = openLo(0),
      H = openHi(openCount - 1);
    let yLoF = ey + L * (L < 0 ? s1 : s0);
    let yHiF = ey + H * (H > 0 ? s1 : s0);
    const far2 = VIEW * VIEW - s0 * s0;
    if (L < 0 && (yLoF - ey) * (yLoF - ey) > far2) yLoF = ey - Math.sqrt(far2);
    if (H > 0 && (yHiF - ey) * (yHiF - ey) > far2) yHiF = ey + Math.sqrt(far2);
    // The bounds in float64 first (as the TypeScript walk had them), then as integers once inside the band.
    let yLoD = Math.floor(yLoF);
    if (yLoD < <f64>(minY - 1)) yLoD = <f64>(minY - 1);
    let yHiD = Math.floor(yHiF);
    if (yHiD > <f64>top) yHiD = <f64>top;
    if (yHiD > <f64>maxY) yHiD = <f64>maxY;
    let yLo = <i32>yLoD,
      yHi = <i32>yHiD;
    const column = ((z & 15) << 4) | (x & 15);
    spanS0 = s0;
    spanInv0 = inv0;
    spanInv1 = inv1;
    // Eye level and below first (downwards), then above (upwards): the order a line from the eyes meets them in.
    // After each occlusion the bound follows the open set (no block below its lowest open pitch is looked at).
    for (let y = ye < yHi ? ye : yHi; y >= yLo; y--) {
      const st = cellAt(slot, column, x, y, z);
      if (!isVisible(st) || !visitCell(st, x, y, z, lidarColumn)) continue;
      if (openCount == 0) break;
      const l = openLo(0);
      const bound = Math.floor(ey + l * (l < 0 ? s1 : s0));
      if (bound > <f64>yLo) yLo = <i32>bound;
    }
    if (openCount > 0) {
      for (let y = ye + 1 > yLo ? ye + 1 : yLo; y <= yHi; y++) {
        const st = cellAt(slot, column, x, y, z);
        if (!isVisible(st) || !visitCell(st, x, y, z, lidarColumn)) continue;
        if (openCount == 0) break;
        const h = openHi(openCount - 1);
        const bound = Math.floor(ey + h * (h > 0 ? s1 : s0));
        if (bound < <f64>yHi) yHi = <i32>bound;
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

/**
 * The block part of a view from the eyes (ex, ey, ez): every plane walked, nearest to farthest start (every 4th plane
 * and each LiDAR plane from the eyes, the other even planes from 16 m and the odd ones from 32 m, each of those
 * starting with the union of its two neighbours' open sets there). The chunk table's origin is chunk (baseX, baseZ);
 * the world's cells lie in the chunk slots (`withStore`) or come through the `stateAt` import.
 */
export function walkView(ex: f64, ey: f64, ez: f64, baseX: i32, baseZ: i32, bandMinY: i32, bandMaxY: i32, below: i32, above: i32, withStore: bool): void {
  for (let k = 0; k < seenCount; k++) store<f64>(DIST + (<usize>load<i32>(SEEN + (<usize>k << 2)) << 3), Infinity);
  seenCount = 0;
  cellVisits = 0;
  for (let i = 0; i < LIDAR_COLUMNS * LIDAR_ROWS; i++) store<f64>(LIDAR_DIST + (<usize>i << 3), Infinity);
  eyeX = ex;
  eyeY = ey;
  eyeZ = ez;
  chunkBaseX = baseX;
  chunkBaseZ = baseZ;
  minY = bandMinY;
  maxY = bandMaxY;
  belowState = below;
  aboveState = above;
  hasStore = withStore;
  for (let level = 0; level < 3; level++) {
    for (let c = 0; c < VIEW_COLUMNS; c++) {
      const lidar = c % LIDAR_EVERY == 0;
      const cLevel = c % 4 == 0 || lidar ? 0 : c % 2 == 0 ? 1 : 2;
      if (cLevel != level) continue;
      let start: f64 = 0;
      if (level == 0) {
        openCount = 1;
        store<f64>(OPEN_LO, load<f64>(VIEW_IN));
        store<f64>(OPEN_HI, load<f64>(VIEW_IN, 8));
      } else {
        start = level == 1 ? SNAP_NEAR : SNAP_FAR;
        const step = level == 1 ? 2 : 1,
          slot = level == 1 ? 0 : 1;
        openUnion((c - step) * 2 + slot, (c + step) * 2 + slot);
      }
      // The plane's direction, and where its walk begins: `start` metres out along it.
      planeHX = load<f64>(VIEW_IN + 8 * (2 + LIDAR_ROWS) + (<usize>c << 3));
      planeHZ = load<f64>(VIEW_IN + 8 * (2 + LIDAR_ROWS + VIEW_COLUMNS) + (<usize>c << 3));
      planeEX = ex + planeHX * start;
      planeEZ = ez + planeHZ * start;
      planeStart = start;
      tracePlane(c, start, lidar ? c / LIDAR_EVERY : -1);
    }
  }
}

/** Sets every name's distance to Infinity (once, before the first view). */
export function clearDistances(): void {
  for (let i = 0; i < MAX_NAMES; i++) store<f64>(DIST + (<usize>i << 3), Infinity);
  seenCount = 0;
}
