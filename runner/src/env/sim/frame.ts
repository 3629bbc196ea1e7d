// A small first-person picture of what the simulated agent sees, for episode playback: one ray per pixel over
// the observation's own field of view (relative yaw ±35°, relative pitch ±30°, 64 m: observe.ts), blocks in
// the game's map colours, mobs as their bounding boxes. Equal angles per pixel, so a pixel's column and row
// are the relative yaw and pitch the reward sees in `nearest`. The renderer only reads the world: it never
// generates a chunk (an ungenerated chunk shows as fog), so drawing between steps cannot change what the
// simulator does next (underground, a generated chunk schedules its springs).
import { GAME_FACTS } from '../../schema';
import { rayBox } from '../game/features';
import { DEG, EYE_HEIGHT, wrapAngle, type ViewPose } from '../game/observe';
import { blockNames, stateOccludes, stateToBlock, stateVisible, WATER_BLOCK } from '../game/registry';
import type { SimWorld } from './world';

/** Map colours of 1.16.5 (`MaterialColor.col`, net/minecraft/world/level/material/MaterialColor.java, Mojang mappings). */
const MAP = {
  GRASS: 0x7fb238, // 8368696
  SAND: 0xf7e9a3, // 16247203
  WOOL: 0xc7c7c7,
  FIRE: 0xff0000,
  PLANT: 0x007c00, // 31744
  SNOW: 0xffffff,
  DIRT: 0x976d4d, // 9923917
  STONE: 0x707070,
  WATER: 0x4040ff,
  WOOD: 0x8f7748, // 9402184
  QUARTZ: 0xfffcf5,
  COLOR_PINK: 0xf27fa5, // 15892389
  COLOR_GRAY: 0x4c4c4c,
  COLOR_LIGHT_GRAY: 0x999999,
  COLOR_CYAN: 0x4c7f99, // 5013401
  COLOR_BROWN: 0x664c33, // 6704179
  COLOR_YELLOW: 0xe5e533,
  COLOR_LIGHT_GREEN: 0x7fcc19, // 8375321
  COLOR_BLACK: 0x191919,
  GOLD: 0xfaee4d, // 16445005
  DIAMOND: 0x5cdbd5, // 6085589
  LAPIS: 0x4a80ff, // 4882687
  METAL: 0xa7a7a7,
  PODZOL: 0x815631, // 8476209
  COLOR_RED: 0x993333,
} as const;
type MapColour = keyof typeof MAP;

/**
 * Block → map colour, from each block's `BlockBehaviour.Properties.of(Material, MaterialColor)` in 1.16.5's
 * Blocks.java (a block without its own colour takes its Material's: STONE → STONE, GRASS → GRASS, LEAVES,
 * PLANT and REPLACEABLE_PLANT → PLANT, WATER → WATER, LAVA → FIRE). Logs: `Blocks.log(top, side)`, the side
 * colour here (a log is mostly seen from the side). Ores are Material.STONE, so the game's map draws them as
 * stone; here they take the colour of their mineral's block (diamond_block is DIAMOND, iron_block METAL, …) so
 * that the target of explore-diamond can be seen: the one departure from the map colours.
 */
const BLOCK_COLOUR: Readonly<Record<string, MapColour>> = {
  stone: 'STONE',
  granite: 'DIRT',
  diorite: 'QUARTZ',
  andesite: 'STONE',
  cobblestone: 'STONE',
  bedrock: 'STONE',
  gravel: 'STONE',
  grass_block: 'GRASS',
  dirt: 'DIRT',
  sand: 'SAND',
  water: 'WATER',
  lava: 'FIRE',
  obsidian: 'COLOR_BLACK',
  oak_log: 'PODZOL',
  birch_log: 'QUARTZ',
  oak_leaves: 'PLANT',
  birch_leaves: 'PLANT',
  grass: 'PLANT',
  tall_grass: 'PLANT',
  dandelion: 'PLANT',
  poppy: 'PLANT',
  orange_tulip: 'PLANT',
  red_tulip: 'PLANT',
  pink_tulip: 'PLANT',
  white_tulip: 'PLANT',
  azure_bluet: 'PLANT',
  oxeye_daisy: 'PLANT',
  cornflower: 'PLANT',
  bee_nest: 'COLOR_YELLOW',
  coal_ore: 'COLOR_BLACK', // coal_block: COLOR_BLACK
  iron_ore: 'METAL', // iron_block: METAL
  gold_ore: 'GOLD',
  redstone_ore: 'COLOR_RED', // redstone_block is FIRE, lava's colour: red here keeps lava apart
  lapis_ore: 'LAPIS',
  diamond_ore: 'DIAMOND',
};

/** Mobs have no map colour; these are our choice of map colours near each mob's look. */
const MOB_COLOUR: Readonly<Record<string, MapColour>> = {
  cow: 'COLOR_BROWN',
  pig: 'COLOR_PINK',
  sheep: 'SNOW',
  chicken: 'SNOW',
  horse: 'COLOR_BROWN',
  donkey: 'COLOR_GRAY',
  zombie: 'COLOR_CYAN',
  skeleton: 'COLOR_LIGHT_GRAY',
  spider: 'COLOR_BLACK',
  creeper: 'COLOR_LIGHT_GREEN',
};

/**
 * The map's four brightnesses (`MaterialColor.calculateRGBColor`: 180, 220, 255, 135 of 255), used per face:
 * tops 255, faces along x 220, along z 180, undersides 135 (a cave ceiling).
 */
const SHADES = [255, 220, 180, 135] as const;
const TOP = 0,
  SIDE_X = 1,
  SIDE_Z = 2,
  BOTTOM = 3;
/** Plains sky: the plains biome's sky colour (`calculateSkyColor(0.8)` = 0x78A7FF). */
const SKY = 0x78a7ff;
/** What is beyond the view distance or not generated yet; underground, what no ray reaches. */
const FOG = 0xc0d0e0;

const COLOURS = Object.keys(MAP) as MapColour[];
/** Palette index of the sky and of the fog; map colour k with shade s is 2 + 4k + s. */
export const SKY_INDEX = 0;
export const FOG_INDEX = 1;

/** The frame palette: [r, g, b] per index (sky, fog, then each map colour in its four shades); at most 256. */
export const FRAME_PALETTE: readonly [number, number, number][] = [rgb(SKY), rgb(FOG), ...COLOURS.flatMap((c) => SHADES.map((s) => shade(MAP[c], s)))];

function rgb(c: number): [number, number, number] {
  return [(c >> 16) & 255, (c >> 8) & 255, c & 255];
}
function shade(c: number, s: number): [number, number, number] {
  return rgb(c).map((v) => Math.floor((v * s) / 255)) as [number, number, number];
}

// Palette base (shade 0) of each block id; -1 where a block has no colour here (drawn as stone).
const blockBase = new Int16Array(blockNames.length).fill(-1);
blockNames.forEach((name, id) => {
  const c = BLOCK_COLOUR[name];
  blockBase[id] = 2 + 4 * COLOURS.indexOf(c ?? 'STONE');
});
const mobBase = (type: string) => 2 + 4 * COLOURS.indexOf(MOB_COLOUR[type] ?? 'WOOL');

/** A mob as the frame needs it: feet centre, box size and type. */
export interface FrameMob {
  type: string;
  x: number;
  y: number;
  z: number;
  width: number;
  height: number;
}

export const FRAME_WIDTH = 96;
export const FRAME_HEIGHT = 80;
const FOV_YAW = GAME_FACTS.fovYawDeg * DEG;
const FOV_PITCH = GAME_FACTS.fovPitchDeg * DEG;
const VIEW = GAME_FACTS.viewDistance;
const MAX_ELEVATION = 89 * DEG;

/**
 * Draws the view from `pose` (feet position, yaw and pitch, mineflayer convention) into `out` (palette indexes,
 * row by row, width × height). Underground, rays that leave the generated world end in fog; on the plains,
 * rays that leave it upwards are sky.
 */
export function renderFrame(world: SimWorld, pose: ViewPose, mobs: readonly FrameMob[], out: Uint8Array, width = FRAME_WIDTH, height = FRAME_HEIGHT): void {
  const ox = pose.x,
    oy = pose.y + EYE_HEIGHT,
    oz = pose.z;
  // Only mobs whose bounding sphere reaches into the picture's yaw and elevation window are tried per pixel.
  const near = mobs.filter((m) => {
    const vx = m.x - ox,
      vy = m.y + m.height / 2 - oy,
      vz = m.z - oz;
    const d = Math.hypot(vx, vy, vz);
    const radius = Math.hypot(m.width, m.height, m.width) / 2;
    if (d <= radius + 0.5) return true;
    if (d > VIEW + radius) return false;
    const spread = Math.asin(Math.min(1, radius / d)) + DEG;
    const yawOff = Math.abs(wrapAngle(Math.atan2(-vx, -vz) - pose.yaw));
    const el = Math.asin(vy / d);
    return yawOff <= FOV_YAW + spread && el >= pose.pitch - FOV_PITCH - spread && el <= pose.pitch + FOV_PITCH + spread;
  });
  const skyAbove = stateVisible[world.above] === 0;
  // A column's yaw is the same in every row: its sine and cosine are taken once per frame, not once per pixel.
  if (columnSin.length < width) (columnSin = new Float64Array(width)), (columnCos = new Float64Array(width));
  for (let c = 0; c < width; c++) {
    // Relative yaw is positive to the right; the pose's yaw grows turning left.
    const yaw = pose.yaw - (-FOV_YAW + (2 * FOV_YAW * (c + 0.5)) / width);
    columnSin[c] = Math.sin(yaw);
    columnCos[c] = Math.cos(yaw);
  }
  for (let r = 0; r < height; r++) {
    const el = Math.max(-MAX_ELEVATION, Math.min(MAX_ELEVATION, pose.pitch + FOV_PITCH - (2 * FOV_PITCH * (r + 0.5)) / height));
    const ce = Math.cos(el),
      dy = Math.sin(el);
    for (let c = 0; c < width; c++) {
      const dx = -columnSin[c]! * ce,
        dz = -columnCos[c]! * ce;
      let index = castBlock(world, ox, oy, oz, dx, dy, dz, skyAbove);
      let t = hitT;
      for (const m of near) {
        const mt = rayBox(ox, oy, oz, dx, dy, dz, m.x - m.width / 2, m.y, m.z - m.width / 2, m.x + m.width / 2, m.y + m.height, m.z + m.width / 2);
        if (mt >= 0 && mt < t) {
          t = mt;
          index = mobBase(m.type) + SIDE_X;
        }
      }
      out[r * width + c] = index;
    }
  }
}

/** Each column's sin and cos of yaw for the frame being drawn. */
let columnSin = new Float64Array(FRAME_WIDTH);
let columnCos = new Float64Array(FRAME_WIDTH);

/** Distance along the ray of the last `castBlock` hit (Infinity for sky and fog). */
let hitT = Infinity;

/**
 * 3D DDA through the cells from the eye: the first full block (or lava, or a water surface) ends the ray; a
 * plant is hit only where the ray passes near the middle of its cell, so grass and flowers look like tufts.
 */
function castBlock(world: SimWorld, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number, skyAbove: boolean): number {
  let x = Math.floor(ox),
    y = Math.floor(oy),
    z = Math.floor(oz);
  const sx = dx > 0 ? 1 : -1,
    sy = dy > 0 ? 1 : -1,
    sz = dz > 0 ? 1 : -1;
  const tdx = Math.abs(1 / dx),
    tdy = Math.abs(1 / dy),
    tdz = Math.abs(1 / dz);
  let tx = (dx > 0 ? x + 1 - ox : ox - x) * tdx,
    ty = (dy > 0 ? y + 1 - oy : oy - y) * tdy,
    tz = (dz > 0 ? z + 1 - oz : oz - z) * tdz;
  let t = 0,
    face = TOP;
  hitT = Infinity;
  const { minY, maxY, below, above } = world;
  // The chunk column the ray is in, looked up again only when it crosses into another.
  let ccx = Number.NaN,
    ccz = Number.NaN;
  let cells: Uint16Array | null = null;
  let heights: Int16Array | null = null;
  let top = 0;
  while (t <= VIEW) {
    let state: number;
    if (y < minY) state = below;
    else if (y >= maxY) state = above;
    else {
      if (x >> 4 !== ccx || z >> 4 !== ccz) {
        ccx = x >> 4;
        ccz = z >> 4;
        const chunk = world.peekColumn(ccx, ccz);
        if (!chunk) return FOG_INDEX;
        cells = chunk.cells;
        heights = chunk.heights;
        top = chunk.top;
      }
      if (dy >= 0 && y > top) {
        // Rising above everything this chunk holds: nothing to hit before the ray leaves it sideways.
        const exitX = dx > 0 ? (ccx * 16 + 16 - ox) / dx : dx < 0 ? (ccx * 16 - ox) / dx : Infinity;
        const exitZ = dz > 0 ? (ccz * 16 + 16 - oz) / dz : dz < 0 ? (ccz * 16 - oz) / dz : Infinity;
        t = Math.min(exitX, exitZ) + 1e-9;
        if (t > VIEW) break;
        x = Math.floor(ox + dx * t);
        y = Math.floor(oy + dy * t);
        z = Math.floor(oz + dz * t);
        tx = (dx > 0 ? x + 1 - ox : ox - x) * tdx;
        ty = (dy > 0 ? y + 1 - oy : oy - y) * tdy;
        tz = (dz > 0 ? z + 1 - oz : oz - z) * tdz;
        face = exitX < exitZ ? SIDE_X : SIDE_Z;
        if (y >= maxY && skyAbove) return SKY_INDEX;
        continue;
      }
      const xz = ((z & 15) << 4) | (x & 15);
      // Above the column's highest visible block: air, nothing to read.
      state = y > heights![xz]! ? above : cells![((y - minY) << 8) | xz]!;
    }
    if (stateVisible[state] === 1) {
      const block = stateToBlock[state]!;
      const tNext = Math.min(tx, ty, tz);
      if (stateOccludes[state] === 1 || block === WATER_BLOCK) {
        hitT = t;
        return blockBase[block]! + face;
      }
      // A plant: a tuft around the cell's vertical axis, up to 0.8 of the cell.
      const tm = (t + tNext) / 2;
      const px = ox + dx * tm - x - 0.5,
        py = oy + dy * tm - y,
        pz = oz + dz * tm - z - 0.5;
      if (Math.abs(px) < 0.3 && Math.abs(pz) < 0.3 && py < 0.8) {
        hitT = tm;
        return blockBase[block]! + SIDE_X;
      }
    }
    if (tx < ty && tx < tz) {
      t = tx;
      tx += tdx;
      x += sx;
      face = SIDE_X;
    } else if (ty < tz) {
      t = ty;
      ty += tdy;
      y += sy;
      face = sy > 0 ? BOTTOM : TOP;
      if (y >= world.maxY && sy > 0 && skyAbove) return SKY_INDEX;
      if (y < world.minY && sy < 0) return blockBase[stateToBlock[world.below]!]! + TOP;
    } else {
      t = tz;
      tz += tdz;
      z += sz;
      face = SIDE_Z;
    }
  }
  return skyAbove && dy > 0 ? SKY_INDEX : FOG_INDEX;
}
