// The view as first written: every plane walked cell column by cell column to 64 m, every cell in the pitch
// range read, no chunk skipping and no reuse across steps. Kept verbatim as the oracle the simulator's fast view
// (runner/src/env/game/observe.ts) must match exactly; only the module's own scratch state is separate.
import { GAME_FACTS } from '../../src/schema';
import { stateOccludes, stateToBlock, stateVisible, WATER_BLOCK } from '../../src/env/game/registry';
import { DEG, EYE_HEIGHT, type BlockAccess, type ViewEntity, type ViewPose, type ViewResult } from '../../src/env/game/observe';

const FOV_YAW = GAME_FACTS.fovYawDeg * DEG;
const FOV_PITCH = GAME_FACTS.fovPitchDeg * DEG;
const VIEW = GAME_FACTS.viewDistance;

/** The vertical planes: 81 across the yaw field of view, 0.875° apart, edge to edge. */
const VIEW_COLUMNS = 81;
const columnYaw = new Float64Array(VIEW_COLUMNS);
for (let c = 0; c < VIEW_COLUMNS; c++) columnYaw[c] = -FOV_YAW + (2 * FOV_YAW * c) / (VIEW_COLUMNS - 1);
/** The LiDAR grid of the policy features: 9 columns (every 10th plane, 8.75° apart) × 5 rows (15° apart). */
const LIDAR_COLUMNS = 9;
const LIDAR_ROWS = 5;
const LIDAR_EVERY = (VIEW_COLUMNS - 1) / (LIDAR_COLUMNS - 1);
/** Relative yaw of each LiDAR column and relative pitch of each LiDAR row (radians; positive = right / below). */
const lidarPitch = Array.from({ length: LIDAR_ROWS }, (_, r) => -FOV_PITCH + (2 * FOV_PITCH * r) / (LIDAR_ROWS - 1));
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
const wrapAngle = (a: number) => a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));
const clamp = (v: number, lo: number, hi: number) => (v < lo ? lo : v > hi ? hi : v);

// ---- the pitch set of one plane: sorted disjoint open intervals of slopes (tan of the elevation) still unoccluded ----
let openCount = 0;
let openLo = new Float64Array(64);
let openHi = new Float64Array(64);
let nextLo = new Float64Array(64);
let nextHi = new Float64Array(64);

function isOpen(a: number, b: number): boolean {
  for (let i = 0; i < openCount; i++) if (a < openHi[i]! && b > openLo[i]!) return true;
  return false;
}

/** Removes [a, b] from the open set. */
function occlude(a: number, b: number): void {
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
  const tl = openLo,
    th = openHi;
  openLo = nextLo;
  openHi = nextHi;
  nextLo = tl;
  nextHi = th;
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

// The chunk columns around the eyes, looked up once per step (a map lookup per plane and chunk otherwise).
const CHUNK_SPAN = 11; // 64 m around the eyes spans at most 10 chunks per axis
const chunkCache: ({ cells: Uint16Array; heights: Int16Array } | undefined)[] = new Array(CHUNK_SPAN * CHUNK_SPAN);
const chunkCacheStep = new Float64Array(CHUNK_SPAN * CHUNK_SPAN).fill(-1);
let viewStep = 0;
let chunkBaseX = 0,
  chunkBaseZ = 0;

// Per-step scratch shared by the planes.
let stepEx = 0,
  stepEy = 0,
  stepEz = 0,
  stepYaw = 0,
  stepPitch = 0;
const lidarSlope = new Float64Array(LIDAR_ROWS);

/**
 * Walks one vertical plane (horizontal direction (hx, hz)) from the eyes outwards, noting visible blocks.
 * `lidarBase` ≥ 0: this plane carries LiDAR column `lidarBase / LIDAR_ROWS`... (index of its first ray).
 */
function tracePlane(world: BlockAccess, plane: number, hx: number, hz: number, out: ViewResult, lidarColumn: number): void {
  const ex0 = stepEx,
    ey = stepEy,
    ez0 = stepEz;
  const start = PLANE_START[plane]!;
  let snapAt = start < SNAP_NEAR ? SNAP_NEAR : start < SNAP_FAR ? SNAP_FAR : Infinity;
  snapCount[plane * 2] = snapCount[plane * 2 + 1] = 0;
  // The walk begins `start` metres out along the plane.
  const ex = ex0 + hx * start,
    ez = ez0 + hz * start;
  const store = world.columnStore;
  const minY = store ? store.minY : -64,
    maxY = store ? store.maxY : 320;
  const below = store ? store.below : 0,
    above = store ? store.above : 0;
  let ccx = NaN,
    ccz = NaN;
  let cells: Uint16Array | null = null;
  let heights: Int16Array | null = null;
  let x = Math.floor(ex),
    z = Math.floor(ez);
  const stepX = hx > 0 ? 1 : -1,
    stepZ = hz > 0 ? 1 : -1;
  const tDeltaX = hx !== 0 ? Math.abs(1 / hx) : Infinity;
  const tDeltaZ = hz !== 0 ? Math.abs(1 / hz) : Infinity;
  let tMaxX = hx !== 0 ? (x + (hx > 0 ? 1 : 0) - ex) / hx : Infinity;
  let tMaxZ = hz !== 0 ? (z + (hz > 0 ? 1 : 0) - ez) / hz : Infinity;
  tMaxX += start;
  tMaxZ += start;
  let s0 = start;
  const ye = Math.floor(ey);
  while (s0 < VIEW && openCount > 0) {
    if (s0 >= snapAt) {
      saveOpen(plane * 2 + (snapAt === SNAP_NEAR ? 0 : 1));
      snapAt = snapAt === SNAP_NEAR ? SNAP_FAR : Infinity;
    }
    const s1 = tMaxX < tMaxZ ? tMaxX : tMaxZ;
    // The y range the open pitches reach over this cell column, within 64 m of the eyes.
    const L = openLo[0]!,
      H = openHi[openCount - 1]!;
    let yLoF = ey + L * (L < 0 ? s1 : s0);
    let yHiF = ey + H * (H > 0 ? s1 : s0);
    const far2 = VIEW * VIEW - s0 * s0;
    if ((yLoF - ey) * (yLoF - ey) > far2) yLoF = ey - Math.sqrt(far2);
    if ((yHiF - ey) * (yHiF - ey) > far2) yHiF = ey + Math.sqrt(far2);
    let top = Infinity;
    if (store) {
      const cx = x >> 4,
        cz = z >> 4;
      if (cx !== ccx || cz !== ccz) {
        ccx = cx;
        ccz = cz;
        const k = (cx - chunkBaseX) * CHUNK_SPAN + (cz - chunkBaseZ);
        let c = chunkCache[k];
        if (c === undefined || chunkCacheStep[k] !== viewStep) {
          c = store.column(cx, cz);
          chunkCache[k] = c;
          chunkCacheStep[k] = viewStep;
        }
        cells = c.cells;
        heights = c.heights;
      }
      top = heights![((z & 15) << 4) | (x & 15)]!;
    }
    const column = ((z & 15) << 4) | (x & 15);
    const inv0 = s0 > 0 ? 1 / s0 : BIG,
      inv1 = 1 / s1;
    let yLo = Math.floor(yLoF);
    if (yLo < minY - 1) yLo = minY - 1;
    let yHi = Math.floor(yHiF);
    if (yHi > top) yHi = top;
    if (yHi > maxY) yHi = maxY;
    // Eye level and below first (downwards), then above (upwards): the order a line from the eyes meets them in.
    // After each occlusion the bound follows the open set (no block below its lowest open pitch is looked at).
    for (let y = ye < yHi ? ye : yHi; y >= yLo; y--) {
      const st = store ? (y < minY ? below : y >= maxY ? above : cells![((y - minY) << 8) | column]!) : world.stateAt(x, y, z);
      if (visible[st] !== 1) continue;
      // The block's pitch span (as slopes); looked at only if part of it is open.
      const y0 = y - ey,
        y1 = y0 + 1;
      const a = y0 * (y0 >= 0 ? inv1 : inv0);
      const b = y1 * (y1 <= 0 ? inv1 : inv0);
      if (openCount === 1 ? a >= openHi[0]! || b <= openLo[0]! : !isOpen(a, b)) continue;
      if (!lookAt(st, x, y, z, s0, a, b, out, lidarColumn)) continue;
      if (openCount === 0) break;
      const l = openLo[0]!;
      const bound = Math.floor(ey + l * (l < 0 ? s1 : s0));
      if (bound > yLo) yLo = bound;
    }
    if (openCount > 0) {
      for (let y = ye + 1 > yLo ? ye + 1 : yLo; y <= yHi; y++) {
        const st = store ? (y < minY ? below : y >= maxY ? above : cells![((y - minY) << 8) | column]!) : world.stateAt(x, y, z);
        if (visible[st] !== 1) continue;
        const y0 = y - ey,
          y1 = y0 + 1;
        const a = y0 * (y0 >= 0 ? inv1 : inv0);
        const b = y1 * (y1 <= 0 ? inv1 : inv0);
        if (openCount === 1 ? a >= openHi[0]! || b <= openLo[0]! : !isOpen(a, b)) continue;
        if (!lookAt(st, x, y, z, s0, a, b, out, lidarColumn)) continue;
        if (openCount === 0) break;
        const h = openHi[openCount - 1]!;
        const bound = Math.floor(ey + h * (h > 0 ? s1 : s0));
        if (bound < yHi) yHi = bound;
      }
    }
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
 * Looks at the visible block `st` at (x, y, z), part of whose pitch span [a, b] (slopes) is open, in the cell
 * column the plane enters at s0: notes it, hits LiDAR rays, occludes. Returns whether it occluded something.
 */
function lookAt(st: number, x: number, y: number, z: number, s0: number, a: number, b: number, out: ViewResult, lidarColumn: number): boolean {
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
      if (out.lidarDist[i] !== Infinity || m < a || m > b) continue;
      const entry = Math.max(s0, m > 0 ? (y - ey) / m : m < 0 ? (y + 1 - ey) / m : s0);
      const t = entry * Math.sqrt(1 + m * m);
      out.lidarDist[i] = t <= VIEW ? t : Infinity;
      out.lidarState[i] = st;
    }
  }
  if (occludes[st] !== 1) return false;
  occlude(a, b);
  return true;
}

/**
 * Whether nothing occluding lies on the segment from (ox, oy, oz) to (tx, ty, tz) (voxel DDA); the cell of the
 * target point itself does not count.
 */
function lineOfSight(world: BlockAccess, ox: number, oy: number, oz: number, tx: number, ty: number, tz: number): boolean {
  let dx = tx - ox,
    dy = ty - oy,
    dz = tz - oz;
  const len = Math.sqrt(dx * dx + dy * dy + dz * dz);
  if (len < 1e-9) return true;
  dx /= len;
  dy /= len;
  dz /= len;
  let x = Math.floor(ox),
    y = Math.floor(oy),
    z = Math.floor(oz);
  const txc = Math.floor(tx),
    tyc = Math.floor(ty),
    tzc = Math.floor(tz);
  const stepX = dx > 0 ? 1 : -1,
    stepY = dy > 0 ? 1 : -1,
    stepZ = dz > 0 ? 1 : -1;
  const tDeltaX = dx !== 0 ? Math.abs(1 / dx) : Infinity;
  const tDeltaY = dy !== 0 ? Math.abs(1 / dy) : Infinity;
  const tDeltaZ = dz !== 0 ? Math.abs(1 / dz) : Infinity;
  let tMaxX = dx !== 0 ? (x + (dx > 0 ? 1 : 0) - ox) / dx : Infinity;
  let tMaxY = dy !== 0 ? (y + (dy > 0 ? 1 : 0) - oy) / dy : Infinity;
  let tMaxZ = dz !== 0 ? (z + (dz > 0 ? 1 : 0) - oz) / dz : Infinity;
  for (;;) {
    if (x === txc && y === tyc && z === tzc) return true;
    if (occludes[world.stateAt(x, y, z)] === 1) return false;
    let t: number;
    if (tMaxX < tMaxY && tMaxX < tMaxZ) {
      t = tMaxX;
      x += stepX;
      tMaxX += tDeltaX;
    } else if (tMaxY < tMaxZ) {
      t = tMaxY;
      y += stepY;
      tMaxY += tDeltaY;
    } else {
      t = tMaxZ;
      z += stepZ;
      tMaxZ += tDeltaZ;
    }
    if (t > len) return true;
  }
}

// The 9 points of a bounding box a line of sight is tried to: centre first, then the corners pulled 5 % in.
const BOX_POINTS: number[] = [0, 0.5, 0];
for (const sx of [-0.45, 0.45]) for (const sy of [0.05, 0.95]) for (const sz of [-0.45, 0.45]) BOX_POINTS.push(sx, sy, sz);

/**
 * Fills `out` with what the agent at `pose` sees: every block type and mob in the field of view
 * (relative yaw within ±35°, pitch within ±30°, at most 64 m, a line of sight to some part of it), the
 * nearest instance each, and the LiDAR grid. Distances are from the eyes to the nearest point of the block
 * or the mob's bounding box; angles are those of its centre (clamped to the field of view when only an edge
 * is in it), as the schema has them: yaw positive to the right, pitch positive below the line of sight.
 */
export function referenceView(world: BlockAccess, pose: ViewPose, entities: readonly ViewEntity[], out: ViewResult): void {
  out.clear();
  const ex = pose.x,
    ey = pose.y + EYE_HEIGHT,
    ez = pose.z;
  stepEx = ex;
  stepEy = ey;
  stepEz = ez;
  stepYaw = pose.yaw;
  stepPitch = pose.pitch;
  viewStep++;
  chunkBaseX = (Math.floor(ex) >> 4) - 5;
  chunkBaseZ = (Math.floor(ez) >> 4) - 5;
  const start = world.stateAt(Math.floor(ex), Math.floor(ey), Math.floor(ez));
  if (occludes[start] === 1) {
    // Eyes inside a solid block see that block and nothing else.
    out.note(toBlock[start]!, 0, 0, 0);
    out.lidarDist.fill(0);
    out.lidarState.fill(start);
    return;
  }
  const mLo = Math.tan(Math.max(-MAX_ELEVATION, pose.pitch - FOV_PITCH));
  const mHi = Math.tan(Math.min(MAX_ELEVATION, pose.pitch + FOV_PITCH));
  for (let r = 0; r < LIDAR_ROWS; r++) lidarSlope[r] = Math.tan(clamp(pose.pitch - lidarPitch[r]!, -MAX_ELEVATION, MAX_ELEVATION));
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
    const yaw = pose.yaw - columnYaw[c]!;
    tracePlane(world, c, -Math.sin(yaw), -Math.cos(yaw), out, c % LIDAR_EVERY === 0 ? c / LIDAR_EVERY : -1);
  }
  for (const e of entities) {
    const half = e.width / 2;
    // Nearest point of the bounding box to the eyes.
    const nx = clamp(ex, e.x - half, e.x + half) - ex;
    const ny = clamp(ey, e.y, e.y + e.height) - ey;
    const nz = clamp(ez, e.z - half, e.z + half) - ez;
    const d = Math.sqrt(nx * nx + ny * ny + nz * nz);
    if (d > VIEW || d >= out.dist[e.nameIndex]!) continue;
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
      if (d === 0 || lineOfSight(world, ex, ey, ez, tx, ty, tz)) {
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
