// The observation: what is visible in the field of view, computed against a small accessor interface so the
// simulator and the mineflayer backend run the SAME code (mineflayer passes its bot's world, entities and
// pose). Blocks are found by casting a fixed grid of rays across the field of view (voxel DDA, stopping at
// the first occluding block; plants and water are seen but do not stop a ray); mobs by angle and distance
// checks plus one occlusion ray each. Results go into typed arrays indexed by observable-name index; the
// reward's `{name: [d, yaw, pitch]}` dict is built from them once per step (`nearestDict`).
import { GAME_FACTS } from '../../schema';
import type { NearestBlocks } from '../types';
import { NAME_COUNT, observableNames, stateOccludes, stateToBlock, stateVisible } from './registry';

/** Block state ids of the world (1.16.5 global palette). */
export interface BlockAccess {
  stateAt(x: number, y: number, z: number): number;
  /**
   * Optional speed-up (the simulator has it; results are the same without it): direct access to 16×16
   * chunk columns, so rays read cells without a call per cell and skip the empty space above `top`.
   */
  readonly columnStore?: ColumnStore;
}
/** Chunk columns of block states over a height band [minY, maxY); `below`/`above` fill the rest. */
export interface ColumnStore {
  readonly minY: number;
  readonly maxY: number;
  readonly below: number;
  readonly above: number;
  /** Cells indexed ((y - minY) << 8) | (z & 15) << 4 | (x & 15); `top`: highest y with a visible block. */
  column(cx: number, cz: number): { cells: Uint16Array; top: number };
}
/** A mob as the view sees it: feet centre and its bounding box size. */
export interface ViewEntity {
  /** Observable-name index (registry `mobNameIndex`). */
  nameIndex: number;
  x: number;
  y: number;
  z: number;
  width: number;
  height: number;
}
/** The agent's feet position and facing, mineflayer convention: yaw radians, 0 = facing −z, increasing turns
 * left; pitch radians, positive looks up. */
export interface ViewPose {
  x: number;
  y: number;
  z: number;
  yaw: number;
  pitch: number;
}

export const EYE_HEIGHT = 1.62;
export const DEG = Math.PI / 180;
const FOV_YAW = GAME_FACTS.fovYawDeg * DEG;
const FOV_PITCH = GAME_FACTS.fovPitchDeg * DEG;
const VIEW = GAME_FACTS.viewDistance;

/** The ray grid: 5° apart in yaw (15 columns), 4° in pitch (16 rows), covering the field of view edge to edge. */
export const RAY_COLUMNS = 15;
export const RAY_ROWS = 16;
export const RAY_COUNT = RAY_COLUMNS * RAY_ROWS;
const columnYaw = new Float64Array(RAY_COLUMNS);
const rowPitch = new Float64Array(RAY_ROWS);
for (let c = 0; c < RAY_COLUMNS; c++) columnYaw[c] = -FOV_YAW + (2 * FOV_YAW * c) / (RAY_COLUMNS - 1);
for (let r = 0; r < RAY_ROWS; r++) rowPitch[r] = -FOV_PITCH + (2 * FOV_PITCH * r) / (RAY_ROWS - 1);
// Per-step scratch: sin/cos of each column's absolute yaw and each row's absolute pitch (31 sin/cos pairs
// per step instead of one pair per ray).
const colSin = new Float64Array(RAY_COLUMNS);
const colCos = new Float64Array(RAY_COLUMNS);
const rowSin = new Float64Array(RAY_ROWS);
const rowCos = new Float64Array(RAY_ROWS);

/** One step's view: nearest visible instance per observable name, and the depth of every ray. */
export class ViewResult {
  readonly dist = new Float64Array(NAME_COUNT).fill(Infinity);
  readonly yaw = new Float64Array(NAME_COUNT);
  readonly pitch = new Float64Array(NAME_COUNT);
  /** Names with a finite distance this step, in first-seen order. */
  readonly seen: number[] = [];
  /** Distance to the first occluding block along each ray (Infinity if none within view distance). */
  readonly rayDepth = new Float64Array(RAY_COUNT);
  /** Number of DDA cell visits (cost accounting for benchmarks). */
  cellVisits = 0;

  clear(): void {
    for (const i of this.seen) this.dist[i] = Infinity;
    this.seen.length = 0;
  }

  /** Records a sighting if it is the nearest of its name so far. */
  note(index: number, d: number, yaw: number, pitch: number): void {
    const cur = this.dist[index]!;
    if (d >= cur) return;
    if (cur === Infinity) this.seen.push(index);
    this.dist[index] = d;
    this.yaw[index] = yaw;
    this.pitch[index] = pitch;
  }
}

// Module-local aliases: imported bindings compile to getter calls under tsx, too slow for the hot loop.
const visible = stateVisible;
const occludes = stateOccludes;
const toBlock = stateToBlock;

/** `a` radians brought into [-π, π). */
export const wrapAngle = (a: number) => a - 2 * Math.PI * Math.floor((a + Math.PI) / (2 * Math.PI));

let lastHit = 0;
/** The state id where the last `castRay` that returned a finite distance stopped. */
export const hitState = () => lastHit;

/**
 * Casts one ray from (ox, oy, oz) along the unit vector (dx, dy, dz) up to `maxDist`. Visible blocks entered
 * are noted with the ray's relative angles. Returns the distance to the first occluding block, or Infinity.
 * With `view` null it only tests occlusion (used for mobs). `stops`: which states end the ray (default: occluders).
 */
export function castRay(
  world: BlockAccess, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number, maxDist: number,
  view: ViewResult | null, relYaw: number, relPitch: number, stops: Uint8Array = occludes,
): number {
  let x = Math.floor(ox), y = Math.floor(oy), z = Math.floor(oz);
  const stepX = dx > 0 ? 1 : -1, stepY = dy > 0 ? 1 : -1, stepZ = dz > 0 ? 1 : -1;
  const tDeltaX = dx !== 0 ? Math.abs(1 / dx) : Infinity;
  const tDeltaY = dy !== 0 ? Math.abs(1 / dy) : Infinity;
  const tDeltaZ = dz !== 0 ? Math.abs(1 / dz) : Infinity;
  // Boundary crossings as absolute distances from the origin, so the march can be re-seated after a skip.
  let tMaxX = dx !== 0 ? (x + (dx > 0 ? 1 : 0) - ox) / dx : Infinity;
  let tMaxY = dy !== 0 ? (y + (dy > 0 ? 1 : 0) - oy) / dy : Infinity;
  let tMaxZ = dz !== 0 ? (z + (dz > 0 ? 1 : 0) - oz) / dz : Infinity;
  const store = world.columnStore;
  const minY = store ? store.minY : 0, maxY = store ? store.maxY : 0;
  const below = store ? store.below : 0, above = store ? store.above : 0;
  let ccx = NaN, ccz = NaN, top = Infinity;
  let cells: Uint16Array | null = null;
  let visits = 0;
  let t = 0;
  let distance = Infinity;
  let check = false; // whether (x, y, z) is a newly entered cell still to be looked at
  for (;;) {
    if (store) {
      // The column under the ray (also when the cell is not looked at: the skip below needs its top).
      const cx = x >> 4, cz = z >> 4;
      if (cx !== ccx || cz !== ccz) {
        ccx = cx;
        ccz = cz;
        const c = store.column(cx, cz);
        cells = c.cells;
        top = c.top;
      }
    }
    if (check) {
      visits++;
      const s = store ? (y < minY ? below : y >= maxY ? above : cells![((y - minY) << 8) | ((z & 15) << 4) | (x & 15)]!) : world.stateAt(x, y, z);
      if (visible[s] === 1) {
        if (view !== null) view.note(toBlock[s]!, t, relYaw, relPitch);
        if (stops[s] === 1) {
          distance = t;
          lastHit = s;
          break;
        }
      }
    }
    if (store && y > top) {
      // Nothing visible above this column's top: jump to where the ray leaves the column or comes down to it.
      const bx = dx > 0 ? ((ccx + 1) * 16 - ox) / dx : dx < 0 ? (ccx * 16 - ox) / dx : Infinity;
      const bz = dz > 0 ? ((ccz + 1) * 16 - oz) / dz : dz < 0 ? (ccz * 16 - oz) / dz : Infinity;
      const by = dy < 0 ? (top + 1 - oy) / dy : Infinity;
      const tj = Math.min(bx, bz, by);
      if (tj > maxDist) break;
      if (tj > t) {
        t = tj;
        const e = tj + 1e-7;
        x = Math.floor(ox + dx * e);
        y = Math.floor(oy + dy * e);
        z = Math.floor(oz + dz * e);
        tMaxX = dx !== 0 ? (x + (dx > 0 ? 1 : 0) - ox) / dx : Infinity;
        tMaxY = dy !== 0 ? (y + (dy > 0 ? 1 : 0) - oy) / dy : Infinity;
        tMaxZ = dz !== 0 ? (z + (dz > 0 ? 1 : 0) - oz) / dz : Infinity;
        check = true;
        continue;
      }
    }
    if (tMaxX < tMaxY && tMaxX < tMaxZ) {
      t = tMaxX; x += stepX; tMaxX += tDeltaX;
    } else if (tMaxY < tMaxZ) {
      t = tMaxY; y += stepY; tMaxY += tDeltaY;
    } else {
      t = tMaxZ; z += stepZ; tMaxZ += tDeltaZ;
    }
    if (t > maxDist) break;
    check = true;
  }
  if (view !== null) view.cellVisits += visits;
  return distance;
}

/**
 * Fills `out` with what the agent at `pose` sees: every block type and mob in the field of view
 * (relative yaw within ±35°, pitch within ±30°, at most 64 m, not occluded), nearest instance each.
 * Distances are from the eyes to the seen surface (blocks) or to the nearest point of the bounding box
 * (mobs). Angles follow the schema: yaw positive to the right, pitch positive below the line of sight.
 */
export function observeView(world: BlockAccess, pose: ViewPose, entities: readonly ViewEntity[], out: ViewResult): void {
  out.clear();
  const ex = pose.x, ey = pose.y + EYE_HEIGHT, ez = pose.z;
  const start = world.stateAt(Math.floor(ex), Math.floor(ey), Math.floor(ez));
  if (visible[start] === 1) out.note(toBlock[start]!, 0, 0, 0);
  if (occludes[start] === 1) {
    out.rayDepth.fill(0); // eyes inside a solid block see nothing else
  } else {
    for (let c = 0; c < RAY_COLUMNS; c++) {
      const yaw = pose.yaw - columnYaw[c]!;
      colSin[c] = Math.sin(yaw);
      colCos[c] = Math.cos(yaw);
    }
    for (let r = 0; r < RAY_ROWS; r++) {
      const pitch = Math.max(-Math.PI / 2, Math.min(Math.PI / 2, pose.pitch - rowPitch[r]!));
      rowSin[r] = Math.sin(pitch);
      rowCos[r] = Math.cos(pitch);
    }
    for (let r = 0, i = 0; r < RAY_ROWS; r++) {
      const sp = rowSin[r]!, cp = rowCos[r]!, relPitch = rowPitch[r]!;
      for (let c = 0; c < RAY_COLUMNS; c++, i++) {
        out.rayDepth[i] = castRay(world, ex, ey, ez, -colSin[c]! * cp, sp, -colCos[c]! * cp, VIEW, out, columnYaw[c]!, relPitch);
      }
    }
  }
  for (const e of entities) {
    const half = e.width / 2;
    // Nearest point of the bounding box to the eyes.
    const nx = Math.max(e.x - half, Math.min(ex, e.x + half)) - ex;
    const ny = Math.max(e.y, Math.min(ey, e.y + e.height)) - ey;
    const nz = Math.max(e.z - half, Math.min(ez, e.z + half)) - ez;
    const d = Math.sqrt(nx * nx + ny * ny + nz * nz);
    if (d > VIEW || d >= out.dist[e.nameIndex]!) continue;
    // Angles to the centre of the box decide whether it is in the field of view.
    const cx = e.x - ex, cy = e.y + e.height / 2 - ey, cz = e.z - ez;
    const horiz = Math.sqrt(cx * cx + cz * cz);
    const relYaw = wrapAngle(pose.yaw - Math.atan2(-cx, -cz));
    const relPitch = pose.pitch - Math.atan2(cy, horiz);
    if (Math.abs(relYaw) > FOV_YAW || Math.abs(relPitch) > FOV_PITCH) continue;
    // Nearer than every occluder the surrounding grid rays found: in plain view. Otherwise cast a ray to it.
    const clear = !occluded(out.rayDepth, relYaw, relPitch, Math.sqrt(horiz * horiz + cy * cy));
    if (d > 0 && !clear && !lineOfSight(world, ex, ey, ez, e.x, e.y + e.height / 2, e.z) && !lineOfSight(world, ex, ey, ez, e.x, e.y + e.height * 0.9, e.z)) continue;
    out.note(e.nameIndex, d, relYaw, relPitch);
  }
}

/** Whether any grid ray around direction (relYaw, relPitch) hit an occluder nearer than `distance`. */
function occluded(depth: Float64Array, relYaw: number, relPitch: number, distance: number): boolean {
  const c = Math.round(((relYaw + FOV_YAW) / (2 * FOV_YAW)) * (RAY_COLUMNS - 1));
  const r = Math.round(((relPitch + FOV_PITCH) / (2 * FOV_PITCH)) * (RAY_ROWS - 1));
  for (let rr = Math.max(0, r - 1); rr <= Math.min(RAY_ROWS - 1, r + 1); rr++) {
    for (let cc = Math.max(0, c - 1); cc <= Math.min(RAY_COLUMNS - 1, c + 1); cc++) {
      if (depth[rr * RAY_COLUMNS + cc]! <= distance) return true;
    }
  }
  return false;
}

function lineOfSight(world: BlockAccess, ex: number, ey: number, ez: number, tx: number, ty: number, tz: number): boolean {
  const dx = tx - ex, dy = ty - ey, dz = tz - ez;
  const len = Math.sqrt(dx * dx + dy * dy + dz * dz);
  if (len < 1e-9) return true;
  return castRay(world, ex, ey, ez, dx / len, dy / len, dz / len, len, null, 0, 0) === Infinity;
}

const round = (v: number, k: number) => Math.round(v * k) / k;
/** Millimetre precision: how the reward's observation gives positions and angles. */
export const round3 = (v: number) => round(v, 1000);
/** The reward's `current_nearest_blocks` dict for a view (distances in mm, angles in mrad precision). */
export function nearestDict(view: ViewResult): NearestBlocks {
  const out: NearestBlocks = {};
  for (const i of view.seen) out[observableNames[i]!] = [round(view.dist[i]!, 1000), round(view.yaw[i]!, 10000), round(view.pitch[i]!, 10000)];
  return out;
}

