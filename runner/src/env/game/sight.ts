// A line of sight through the block grid: whether any occluding block lies between the eyes and a point (a voxel
// walk). The view (observe.ts) tries it to points of a mob's bounding box; apart so that the plane walk's module
// stays readable.
import { stateOccludes } from './registry';
import type { BlockAccess } from './view';

// A module-local alias: imported bindings compile to getter calls under tsx, too slow for a loop.
const occludes = stateOccludes;

/**
 * Infinity, loaded from a typed array where a DDA walk starts an axis it never steps along: with the constant
 * `Infinity` as one arm of those ternaries, TurboFan kept the walk's tMax values as heap numbers and allocated
 * one at every step of the walk (a typed-array load is a plain double). The same value either way.
 */
const NEVER = new Float64Array([Infinity]);

/** The segment `lineOfSight` tests, from (0, 1, 2) to (3, 4, 5), in a typed array: six doubles as arguments were six heap numbers per call. */
export const sightSegment = new Float64Array(6);

/**
 * Whether nothing occluding lies on `sightSegment`, from the eyes to a point (voxel DDA); the cell of the point itself
 * does not count.
 */
export function lineOfSight(world: BlockAccess): boolean {
  const ox = sightSegment[0]!,
    oy = sightSegment[1]!,
    oz = sightSegment[2]!;
  const tx = sightSegment[3]!,
    ty = sightSegment[4]!,
    tz = sightSegment[5]!;
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
  const tDeltaX = dx !== 0 ? Math.abs(1 / dx) : NEVER[0]!;
  const tDeltaY = dy !== 0 ? Math.abs(1 / dy) : NEVER[0]!;
  const tDeltaZ = dz !== 0 ? Math.abs(1 / dz) : NEVER[0]!;
  let tMaxX = dx !== 0 ? (x + (dx > 0 ? 1 : 0) - ox) / dx : NEVER[0]!;
  let tMaxY = dy !== 0 ? (y + (dy > 0 ? 1 : 0) - oy) / dy : NEVER[0]!;
  let tMaxZ = dz !== 0 ? (z + (dz > 0 ? 1 : 0) - oz) / dz : NEVER[0]!;
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
