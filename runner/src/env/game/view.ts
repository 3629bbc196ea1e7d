// The view's interfaces and its result: what observeView (observe.ts) reads — block states, optionally the
// simulator's chunk columns and block version, the mobs, the pose — and what it fills (ViewResult: the nearest
// visible instance of each observable name, and the LiDAR grid of the policy features). Apart from the walk so
// that both backends, the features and the tests share these types without the walk's code.
import { NAME_COUNT } from './registry';

/** Chunks per axis of the square of chunk columns around the eyes a view reads: 64 m around them spans at most 10. */
export const CHUNK_SPAN = 11;
/** The vertical planes a view walks: 81 across the yaw field of view, 0.875° apart, edge to edge. */
export const VIEW_COLUMNS = 81;

/** Block state ids of the world (1.16.5 global palette). */
export interface BlockAccess {
  stateAt(x: number, y: number, z: number): number;
  /**
   * Optional speed-up (the simulator has it; results are the same without it): direct access to 16×16
   * chunk columns, so planes read cells without a call per cell and skip the empty space above each
   * x/z column's highest visible block. A chunk's column is the same object on every call (views keep it).
   */
  readonly columnStore?: ColumnStore;
  /**
   * Optional speed-up (the simulator has it): a count that changes whenever any block state changes. With it, a
   * view from exactly the pose of the last one reuses the blocks that view saw (mobs are looked at anew): an agent
   * standing still while it digs or attacks makes most of an explore-diamond episode's steps.
   */
  readonly blockVersion?: number;
}
/** `ChunkColumn.heights` of an x/z column whose band's `above` fill is visible (no bound). */
export const HEIGHT_UNBOUNDED = 32767;
/** Chunk columns of block states over a height band [minY, maxY); `below`/`above` fill the rest. */
export interface ColumnStore {
  readonly minY: number;
  readonly maxY: number;
  readonly below: number;
  readonly above: number;
  /**
   * Cells indexed ((y - minY) << 8) | (z & 15) << 4 | (x & 15); `heights[(z & 15) << 4 | (x & 15)]`: an
   * upper bound of the highest y with a visible block in that x/z column (HEIGHT_UNBOUNDED when the
   * band's `above` fill is visible).
   */
  column(cx: number, cz: number): ChunkColumn;
}
/** One chunk column of a ColumnStore. */
export interface ChunkColumn {
  cells: Uint16Array;
  heights: Int16Array;
  /**
   * Optional: an upper bound of every value in `heights` (the chunk's highest visible block). With it, planes
   * whose unoccluded pitches pass above the whole chunk skip its cells.
   */
  top?: number;
  /**
   * Where the column lies in the view walk's memory of the thread that views it: `heights` and `cells` are made there
   * (observe.ts `allocChunkColumn`), and the walk reads them in place.
   */
  walkAt: number;
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

/** The LiDAR grid of the policy features: 9 columns (every 10th plane, 8.75° apart) × 5 rows (15° apart). */
export const LIDAR_COLUMNS = 9;
export const LIDAR_ROWS = 5;
export const LIDAR_COUNT = LIDAR_COLUMNS * LIDAR_ROWS;

/** One step's view: nearest visible instance per observable name, and the LiDAR grid. */
export class ViewResult {
  readonly dist = new Float64Array(NAME_COUNT).fill(Infinity);
  readonly yaw = new Float64Array(NAME_COUNT);
  readonly pitch = new Float64Array(NAME_COUNT);
  /**
   * Names with a finite distance this step, in first-seen order: seen[0..seenCount). A typed array with a count:
   * emptying an array (length = 0) gave back its backing store, and the next step's pushes allocated a new one.
   */
  readonly seen = new Int32Array(NAME_COUNT);
  seenCount = 0;
  /** Per LiDAR ray (row-major, from the lowest row's... see lidarPitch): distance to the first occluding block
   * or water surface (Infinity if none within 64 m) and its state id. Mobs are not in these (features add them). */
  readonly lidarDist = new Float64Array(LIDAR_COUNT);
  readonly lidarState = new Int32Array(LIDAR_COUNT);
  /** Number of blocks looked at (cost accounting for benchmarks; a reused view looks at none). */
  cellVisits = 0;
  /**
   * The planes' horizontal directions (-sin, -cos of each plane's yaw) for the yaw `planesYaw` of the last walk
   * (observe.ts fills them): an agent that did not turn walks the same planes, without 162 sin/cos calls.
   */
  planesYaw = Number.NaN;
  readonly planesHx = new Float64Array(VIEW_COLUMNS);
  readonly planesHz = new Float64Array(VIEW_COLUMNS);
  /**
   * The chunk columns around the eyes (index (cx - chunksBaseX) · CHUNK_SPAN + (cz - chunksBaseZ)) that the walks
   * have looked up in `chunksStore`, kept while the eyes stay in the same chunk of the same store: a store gives the
   * same column object for a chunk every time, so the env's next view needs no map lookups (observe.ts fills them).
   */
  readonly chunks: (ChunkColumn | undefined)[] = new Array(CHUNK_SPAN * CHUNK_SPAN).fill(undefined);
  chunksStore: ColumnStore | null = null;
  chunksBaseX = 0;
  chunksBaseZ = 0;

  // What the last view saw of blocks (before mobs), and from where, in which world at which block version: the
  // next view from the same pose in an unchanged world sees the same blocks (observeView reuses them).
  private blocksWorld: BlockAccess | null = null;
  private blocksVersion = 0;
  private readonly blocksPose = new Float64Array(5);
  private blocksInsideSolid = false;
  private blocksSeenCount = 0;
  private readonly blocksSeen = new Int32Array(NAME_COUNT);
  private readonly blocksDist = new Float64Array(NAME_COUNT);
  private readonly blocksYaw = new Float64Array(NAME_COUNT);
  private readonly blocksPitch = new Float64Array(NAME_COUNT);
  private readonly blocksLidarDist = new Float64Array(LIDAR_COUNT);
  private readonly blocksLidarState = new Int32Array(LIDAR_COUNT);

  clear(): void {
    for (let k = 0; k < this.seenCount; k++) this.dist[this.seen[k]!] = Infinity;
    this.seenCount = 0;
    this.lidarDist.fill(Infinity);
  }

  /** Keeps what this view holds now (its blocks) as seen from `pose` in `world` at its current block version. */
  keepBlocks(world: BlockAccess, pose: ViewPose, insideSolid: boolean): void {
    if (world.blockVersion === undefined) return;
    this.blocksWorld = world;
    this.blocksVersion = world.blockVersion;
    const p = this.blocksPose;
    p[0] = pose.x;
    p[1] = pose.y;
    p[2] = pose.z;
    p[3] = pose.yaw;
    p[4] = pose.pitch;
    this.blocksInsideSolid = insideSolid;
    this.blocksSeenCount = this.seenCount;
    for (let k = 0; k < this.seenCount; k++) {
      const i = this.seen[k]!;
      this.blocksSeen[k] = i;
      this.blocksDist[k] = this.dist[i]!;
      this.blocksYaw[k] = this.yaw[i]!;
      this.blocksPitch[k] = this.pitch[i]!;
    }
    this.blocksLidarDist.set(this.lidarDist);
    this.blocksLidarState.set(this.lidarState);
  }

  /**
   * Whether the kept blocks were seen from exactly `pose` in `world` as it is now; if so, this view holds them
   * again (in the order they were first seen, as the walk left them). Returns whether the eyes were inside a
   * solid block (which then is all there is to see); null when nothing could be reused.
   */
  reuseBlocks(world: BlockAccess, pose: ViewPose): boolean | null {
    const p = this.blocksPose;
    if (
      world !== this.blocksWorld ||
      world.blockVersion !== this.blocksVersion ||
      pose.x !== p[0] ||
      pose.y !== p[1] ||
      pose.z !== p[2] ||
      pose.yaw !== p[3] ||
      pose.pitch !== p[4]
    )
      return null;
    this.clear();
    for (let k = 0; k < this.blocksSeenCount; k++) {
      const i = this.blocksSeen[k]!;
      this.seen[k] = i;
      this.dist[i] = this.blocksDist[k]!;
      this.yaw[i] = this.blocksYaw[k]!;
      this.pitch[i] = this.blocksPitch[k]!;
    }
    this.seenCount = this.blocksSeenCount;
    this.lidarDist.set(this.blocksLidarDist);
    this.lidarState.set(this.blocksLidarState);
    return this.blocksInsideSolid;
  }

  /** Records a sighting if it is the nearest of its name so far. */
  note(index: number, d: number, yaw: number, pitch: number): void {
    const cur = this.dist[index]!;
    if (d >= cur) return;
    if (cur === Infinity) this.seen[this.seenCount++] = index;
    this.dist[index] = d;
    this.yaw[index] = yaw;
    this.pitch[index] = pitch;
  }
}
