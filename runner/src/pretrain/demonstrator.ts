// The scripted teacher behind `rewardsmith pretrain`: a planner with full access to the simulated world (block
// states, mob positions, the agent's exact pose) that solves a task with the agent's own 14 actions — path
// finding on the block grid, turning to face, digging what is in the way, attacking. Only the teacher reads
// the world like this, through the privileged interface (env/privileged.ts); the policy it teaches sees the
// env's generic features, nothing else. A task whose `teacher` is 'sight' gets a teacher limited to what the
// agent sees (the view), its pose and inventory, and the blocks within reach of its body: it looks around once,
// tunnels below its start height, and goes for target blocks once they are in view.
import { GAME_FACTS } from '../schema';
import { teacherGoal, type TaskSpec, type TeacherGoal, type TeacherKind } from '../tasks';
import {
  DEG,
  EYE_HEIGHT,
  LAVA_BLOCK,
  LookRay,
  blockNames,
  nameIndex,
  stateSolid,
  stateToBlock,
  targetBlock,
  wrapAngle,
  type BlockHit,
  type Mob,
  type PrivilegedView,
} from '../env/privileged';

const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;
const TURN = GAME_FACTS.turnDeg * DEG;
/** How far the teacher looks for a target (metres, horizontally). */
const SEARCH_RADIUS = 96;
/** A* gives up beyond this many expanded cells (the teacher then explores and retries later). */
const MAX_EXPANSIONS = 40_000;
/** Steps between re-plans while chasing a moving mob. */
const MOB_REPLAN = 25;
/**
 * Underground: feet more than this below the start height send the teacher back up (a staircase cut into the
 * rock) before anything else. Its own tunnels stay at the start height; a student it labels (pretrain's DAgger
 * rounds) digs down into shafts, and at y 1–4 meets bedrock, which no tool breaks (1.16.5 hardness -1). It
 * climbs to this margin, not all the way: going on to the start height cost more time than it saved (measured
 * on 16 dug-down worlds).
 */
const CLIMB_BELOW = 2;
/** Underground: a pitch below this (radians) looks at the floor under the feet; the teacher's own digging looks
 * at most ~48° down (the feet cell of the next tunnel step). */
const STEEP_DOWN = -60 * DEG;
const CARDINALS = [
  [0, -1],
  [-1, 0],
  [0, 1],
  [1, 0],
] as const;

type Cell = { x: number; y: number; z: number };
type Target = { kind: 'block'; x: number; y: number; z: number; names: Set<number> } | { kind: 'mob'; mob: Mob };

const isLava = (s: number) => stateToBlock[s] === LAVA_BLOCK;
const BEDROCK_BLOCK = blockNames.indexOf('bedrock');
/** Bedrock: no tool breaks it (1.16.5 hardness -1). */
const isBedrock = (s: number) => stateToBlock[s] === BEDROCK_BLOCK;
const BESIDE_AND_ABOVE = [
  [1, 0, 0],
  [-1, 0, 0],
  [0, 0, 1],
  [0, 0, -1],
  [0, 1, 0],
] as const;
/** Whether lava touches the cell's sides or top: digging it out would open the lava. */
function lavaBeside(w: { stateAt(x: number, y: number, z: number): number }, x: number, y: number, z: number): boolean {
  return BESIDE_AND_ABOVE.some(([dx, dy, dz]) => isLava(w.stateAt(x + dx, y + dy, z + dz)));
}
/** The cells a staircase step from feet cell (x, y, z) one cell towards (dx, dz) clears, in the order it digs them: above the head, then the two in front one level up. */
const staircaseStep = (x: number, y: number, z: number, dx: number, dz: number) =>
  [
    [x, y + 2, z],
    [x + dx, y + 2, z + dz],
    [x + dx, y + 1, z + dz],
  ] as const;
/**
 * Sighted teacher: it tunnels this many cells below the start height (explore-diamond: feet at y 7, walls y 7–8,
 * floor 6, ceiling 9). 1.16.5's diamond veins start at y 0–15 (range 16); measured on seed 7's 8 demonstration
 * worlds, 5 of 6 diamond ores within 32 m of the start lie below y 11, most at y 3–10, few at the start's 10–13.
 */
const SIGHT_DESCENT = 4;
/** Sighted teacher: a target seen this many steps ago and not since is forgotten. */
const FORGET_AFTER = 400;
/** Sighted teacher: after a target it could not get to, it ignores sightings for this many steps. */
const IGNORE_AFTER_BLOCKED = 300;
/** Sighted teacher: within this horizontal distance of a seen target it faces it and digs along its look. */
const ENGAGE_DISTANCE = 2.5;

/** Sighted, labelling a student: how far the student may face away from the tunnel's heading before the teacher takes the student's. */
const FOLLOW_TURN = 50 * DEG;
const TURNS = new Set([A.turn_left, A.turn_right, A.turn_up, A.turn_down]);

/** What pillaring can stand on: the blocks digging puts in the inventory here. */
const PLACEABLE = new Set(['cobblestone', 'stone', 'dirt', 'granite', 'diorite', 'andesite']);

/** The yaw (mineflayer convention: 0 faces −z, increasing turns left) of heading CARDINALS[d]. */
const headingYaw = (d: number) => Math.atan2(-CARDINALS[d]![0], -CARDINALS[d]![1]);
/** The CARDINALS index nearest to facing `yaw`. */
function cardinalOf(yaw: number): number {
  let best = 0;
  for (let d = 1; d < 4; d++) if (Math.abs(wrapAngle(yaw - headingYaw(d))) < Math.abs(wrapAngle(yaw - headingYaw(best)))) best = d;
  return best;
}

/** One teacher per environment; `reset` at each episode start, then `act` once per step. */
export class Demonstrator {
  private target: Target | null = null;
  private path: Cell[] = [];
  private pathIndex = 0;
  private stepsSincePlan = 0;
  private stuck = 0;
  private lastX = 0;
  private lastZ = 0;
  private exploreYaw = 0;
  private searchAgainAt = 0;
  private steps = 0;
  /**
   * Whether the last action came from a recovery rule rather than from the plan: climbing back up, looking up from
   * the floor, equipping the quicker tool, turning away from bedrock. These answers follow from what the student
   * sees (its height, pitch, held item, the block in front), where the plan's turns follow the position of a
   * target it cannot see: pretrain's DAgger rounds keep only these labels.
   */
  recovering = false;
  /**
   * Sighted: its pickaxe is worn out (an iron one lasts 250 blocks). By hand stone takes 150 ticks and drops nothing;
   * the teacher then stands still, and pretrain records no more of its labels: hand-digging made 2/3 of a sighted
   * demonstration's labels and the clone attacked in place 83 % of its steps.
   */
  spent = false;
  /**
   * Sighted: a student drives and this teacher only labels (pretrain's DAgger rounds). Its tunnel's heading then
   * follows the student: when the student has turned more than FOLLOW_TURN away from it on its own (the teacher's
   * last label was no turn), the teacher takes the cardinal the student faces as its heading instead of labelling
   * turns back to a heading the student cannot know.
   */
  followsStudent = false;
  private lastLabel: number = A.no_op;
  private sinceAttack = 100;
  private readonly ray = new LookRay();
  private readonly hit: BlockHit = { x: 0, y: 0, z: 0, t: 0 };
  /** What the task's success rule sends the teacher for; `targetIds` are its names that are blocks. */
  private readonly goal: TeacherGoal;
  private readonly targetIds: Set<number>;
  private readonly underground: boolean;
  /** Underground: the lowest feet height the teacher plans from (below it, it climbs). */
  private readonly lowestFeet: number;
  /** The heading of the staircase being cut (index into CARDINALS), or -1 when not climbing. */
  private climbDir = -1;
  /** Whether this teacher knows only what the agent sees (the task's `teacher: 'sight'`). */
  private readonly sight: boolean;
  /** Sighted: the view's name indices of the target blocks. */
  private readonly targetNames: number[];
  /** Sighted: the cell where it last saw a target block (from the view's distance and angles), or null. */
  private seen: Cell | null = null;
  private seenAt = 0;
  private ignoreUntil = 0;
  /** Sighted: the tunnel's heading (index into CARDINALS), and the looks (yaw, pitch) still to make of its look around at the start. */
  private heading = 0;
  private readonly scan: [number, number][] = [];
  /** Sighted: the feet height its tunnel runs at. */
  private readonly tunnelFeet: number;

  /** `knows`: what the teacher may know; the task's `teacher` by default (pretrain), 'world' for the probes' scripted behaviours. */
  constructor(
    readonly task: TaskSpec,
    private readonly random: () => number,
    knows: TeacherKind = task.teacher ?? 'world',
  ) {
    this.goal = teacherGoal(task);
    this.targetIds = new Set(this.goal.names.map((n) => blockNames.indexOf(n)).filter((i) => i >= 0));
    this.underground = task.world === 'underground';
    this.sight = knows === 'sight';
    this.targetNames = this.goal.names.map((n) => nameIndex(n)).filter((i) => i >= 0 && i < blockNames.length && this.targetIds.has(i));
    if (this.sight && (!this.underground || this.targetNames.length === 0))
      throw new Error(`task ${task.id}: the sighted teacher needs an underground world and target blocks`);
    this.lowestFeet = typeof task.startY === 'number' ? task.startY - CLIMB_BELOW : -Infinity;
    this.tunnelFeet = typeof task.startY === 'number' ? task.startY - SIGHT_DESCENT : 0;
  }

  reset(env: PrivilegedView): void {
    this.target = null;
    this.path = [];
    this.pathIndex = 0;
    this.stepsSincePlan = 0;
    this.stuck = 0;
    this.searchAgainAt = 0;
    this.steps = 0;
    this.sinceAttack = 100;
    this.climbDir = -1;
    this.lastX = env.entity.pos.x;
    this.lastZ = env.entity.pos.z;
    this.exploreYaw = env.entity.yaw + (this.random() - 0.5) * Math.PI;
    this.spent = false;
    this.lastLabel = A.no_op;
    if (this.sight) {
      this.seen = null;
      this.seenAt = this.ignoreUntil = 0;
      this.heading = cardinalOf(env.entity.yaw);
      this.scan.length = 0;
      // A look all around the start first (the view spans 70° of yaw and 60° of pitch). Not when labelling a
      // student: a student that does not turn along never finishes the look, and the teacher labelled its turns
      // for the whole episode (DAgger on explore-diamond seed 7: 95 % of the labels turns, a clone turning in place).
      const h = headingYaw(this.heading);
      if (!this.followsStudent) {
        for (const k of [1, 2, 3, 4]) this.scan.push([h + k * (Math.PI / 2), -25 * DEG]);
        this.scan.push([h, 0]);
      }
    }
  }

  /** The teacher's action for the env's current state. */
  act(env: PrivilegedView): number {
    this.steps++;
    this.sinceAttack++;
    this.recovering = false;
    this.stepsSincePlan++;
    const e = env.entity;
    const moved = Math.hypot(e.pos.x - this.lastX, e.pos.z - this.lastZ);
    this.lastX = e.pos.x;
    this.lastZ = e.pos.z;
    this.stuck = moved < 0.02 ? this.stuck + 1 : 0;

    if (this.sight) return (this.lastLabel = this.actBySight(env));
    if (this.underground && Math.floor(e.pos.y + 0.01) < this.lowestFeet) {
      this.path = []; // planned at another height: plan again once up
      this.recovering = true;
      return this.climb(env);
    }
    if (this.underground && e.pitch < STEEP_DOWN) {
      // Looking at the floor under its feet (the clone's way down to bedrock): the teacher never digs there.
      this.recovering = true;
      return A.turn_up;
    }
    this.climbDir = -1;
    if (this.target && this.target.kind === 'mob' && !env.mobs.includes(this.target.mob)) this.target = null;
    if (!this.target && this.steps >= this.searchAgainAt) {
      this.target = this.findTarget(env);
      this.path = [];
      if (!this.target) this.searchAgainAt = this.steps + 200;
    }
    if (!this.target) return this.explore(env);

    const t = this.target;
    if (t.kind === 'mob') {
      const m = t.mob;
      const horiz = Math.hypot(m.x - e.pos.x, m.z - e.pos.z);
      if (horiz < 3.2 && Math.abs(m.y - e.pos.y) < 2) return this.engageMob(env, m);
      if (this.path.length === 0 || this.stepsSincePlan >= MOB_REPLAN || this.pathIndex >= this.path.length) this.plan(env);
    } else {
      if (!t.names.has(stateToBlock[env.world.stateAt(t.x, t.y, t.z)]!)) {
        this.target = null; // dug away or never there: look again
        return A.no_op;
      }
      if (this.atBlockGoal(env, t)) return this.engageBlock(env, t);
      if (this.path.length === 0 || this.pathIndex >= this.path.length) this.plan(env);
    }
    if (this.path.length > 0 && this.underground && this.offPath(env)) this.plan(env);
    if (this.path.length === 0) return this.explore(env);
    if (this.stuck > 40) {
      // Something the plan did not foresee (a mob in the way, a slip): re-plan from here.
      this.stuck = 0;
      this.plan(env);
      return this.random() < 0.5 ? A.forward_jump : A.jump;
    }
    return this.followPath(env);
  }

  // ---- the sighted teacher: what the agent sees, its pose and inventory, the blocks within reach ----

  private actBySight(env: PrivilegedView): number {
    const e = env.entity;
    const v = env.view;
    this.spent = ![...env.inventory.keys()].some((item) => item.endsWith('_pickaxe'));
    if (this.spent) return A.no_op;
    if (this.steps >= this.ignoreUntil) {
      let best = -1;
      for (const i of this.targetNames) if (v.dist[i]! < Infinity && (best < 0 || v.dist[i]! < v.dist[best]!)) best = i;
      if (best >= 0) {
        // The seen block's centre: along its direction from the eyes, about half a block beyond its nearest point.
        const yaw = e.yaw - v.yaw[best]!,
          pitch = e.pitch - v.pitch[best]!;
        const r = v.dist[best]! + 0.6;
        this.seen = {
          x: Math.floor(e.pos.x - Math.sin(yaw) * Math.cos(pitch) * r),
          y: Math.floor(e.pos.y + EYE_HEIGHT + Math.sin(pitch) * r),
          z: Math.floor(e.pos.z - Math.cos(yaw) * Math.cos(pitch) * r),
        };
        this.seenAt = this.steps;
        this.scan.length = 0;
      }
    }
    if (this.seen && this.steps - this.seenAt > FORGET_AFTER) this.seen = null;
    if (this.seen) return this.approachSeen(env, this.seen);
    if (Math.floor(e.pos.y + 0.01) < this.tunnelFeet - CLIMB_BELOW) {
      // Fell below its tunnel (into a cave or a hole): back up a staircase.
      this.recovering = true;
      return this.climb(env);
    }
    this.climbDir = -1;
    if (e.pitch < STEEP_DOWN && this.scan.length === 0) return A.turn_up;
    if (this.followsStudent && this.scan.length === 0 && !TURNS.has(this.lastLabel) && Math.abs(wrapAngle(e.yaw - headingYaw(this.heading))) > FOLLOW_TURN)
      this.heading = cardinalOf(e.yaw);
    return this.tunnel(env);
  }

  /** Towards a target block it has seen: a tunnel at its own height, then face it and dig along the look. */
  private approachSeen(env: PrivilegedView, t: Cell): number {
    const e = env.entity;
    const dx = t.x + 0.5 - e.pos.x,
      dz = t.z + 0.5 - e.pos.z;
    if (Math.hypot(dx, dz) < ENGAGE_DISTANCE) return this.engageBlock(env, { kind: 'block', ...t, names: this.targetIds });
    const x = Math.floor(e.pos.x),
      y = Math.floor(e.pos.y + 0.01),
      z = Math.floor(e.pos.z);
    const xFirst = Math.abs(dx) >= Math.abs(dz);
    const steps: [number, number][] = [
      [Math.sign(dx), 0],
      [0, Math.sign(dz)],
    ];
    for (const [sx, sz] of xFirst ? steps : steps.reverse()) {
      if (sx === 0 && sz === 0) continue;
      if (this.tunnelCost(env, x + sx, y, z + sz) === null) continue;
      this.path = [{ x: x + sx, y, z: z + sz }];
      this.pathIndex = 0;
      return this.followPath(env);
    }
    // Lava or a drop on the way: give it up for a while.
    this.seen = null;
    this.ignoreUntil = this.steps + IGNORE_AFTER_BLOCKED;
    return this.tunnel(env);
  }

  /**
   * A staircase down to the tunnel height, then a 1×2 tunnel along its heading; lava, a drop or bedrock ahead turns
   * it left or right. It does not stop to look at the walls it passes: with a look at both walls (head and feet
   * height) after every new cell the teacher succeeded more often (3 of 8 worlds against 2), but its clone attacked
   * and turned in place (0.5 % of its steps forward) where this one's clone tunnels (README, "Training: the paper's
   * table").
   */
  private tunnel(env: PrivilegedView): number {
    const e = env.entity;
    const x = Math.floor(e.pos.x),
      y = Math.floor(e.pos.y + 0.01),
      z = Math.floor(e.pos.z);
    while (this.scan.length > 0) {
      const [yaw, pitch] = this.scan[0]!;
      const turn = this.face(env, yaw, pitch, TURN * 0.75, TURN * 0.75);
      if (turn !== null) {
        this.stuck = 0; // turning on purpose, not stuck
        return turn;
      }
      this.scan.shift();
    }
    // Above the tunnel's height: a staircase down (the next cell one lower); at it: level.
    const down = y > this.tunnelFeet;
    const open = (d: number) => {
      const [cx, cz] = CARDINALS[d]!;
      if (!down) return this.tunnelCost(env, x + cx, y, z + cz) !== null;
      const head = env.world.stateAt(x + cx, y + 1, z + cz);
      return !isLava(head) && !isBedrock(head) && !lavaBeside(env.world, x + cx, y + 1, z + cz) && this.tunnelCost(env, x + cx, y - 1, z + cz) !== null;
    };
    if (!open(this.heading)) {
      const side = this.random() < 0.5 ? 1 : 3;
      const order = [side, 4 - side, 2].map((k) => (this.heading + k) % 4);
      this.heading = order.find(open) ?? order[2]!;
    }
    const [dx, dz] = CARDINALS[this.heading]!;
    if (down && this.solid(env, x + dx, y + 1, z + dz)) return this.dig(env, x + dx, y + 1, z + dz);
    this.path = [{ x: x + dx, y: down ? y - 1 : y, z: z + dz }];
    this.pathIndex = 0;
    return this.followPath(env);
  }

  // ---- targets ----

  private findTarget(env: PrivilegedView): Target | null {
    const e = env.entity;
    if (this.targetIds.size === 0) {
      const names = this.goal.names;
      let best: Mob | null = null,
        bestD = Infinity;
      for (const m of env.mobs) {
        if (!names.includes(m.type)) continue;
        const d = Math.hypot(m.x - e.pos.x, m.z - e.pos.z);
        if (d < bestD && d <= SEARCH_RADIUS * 1.5) (best = m), (bestD = d);
      }
      return best ? { kind: 'mob', mob: best } : null;
    }
    // Blocks: the nearest target block by horizontal distance, preferring ones near the agent's height.
    const w = env.world;
    const px = Math.floor(e.pos.x),
      py = Math.floor(e.pos.y),
      pz = Math.floor(e.pos.z);
    const yLo = this.underground ? py - 2 : w.minY,
      yHi = this.underground ? py + 2 : w.maxY - 1;
    let best: Cell | null = null,
      bestScore = Infinity;
    const r = SEARCH_RADIUS;
    for (let cx = (px - r) >> 4; cx <= (px + r) >> 4; cx++) {
      for (let cz = (pz - r) >> 4; cz <= (pz + r) >> 4; cz++) {
        const col = w.column(cx, cz);
        for (let y = Math.max(yLo, w.minY); y <= Math.min(yHi, w.maxY - 1); y++) {
          const base = (y - w.minY) << 8;
          for (let i = 0; i < 256; i++) {
            const b = stateToBlock[col.cells[base | i]!]!;
            if (!this.targetIds.has(b)) continue;
            const x = cx * 16 + (i & 15),
              z = cz * 16 + (i >> 4);
            const score = Math.hypot(x + 0.5 - e.pos.x, z + 0.5 - e.pos.z) + Math.abs(y - py) * 2;
            if (score < bestScore) {
              // A trunk is approached at its lowest log.
              let yy = y;
              while (!this.underground && this.targetIds.has(stateToBlock[w.stateAt(x, yy - 1, z)]!)) yy--;
              bestScore = score;
              best = { x, y: yy, z };
            }
          }
        }
      }
    }
    return best ? { kind: 'block', ...best, names: this.targetIds } : null;
  }

  // ---- planning: A* over the block grid ----

  private solid(env: PrivilegedView, x: number, y: number, z: number): boolean {
    return stateSolid[env.world.stateAt(x, y, z)] === 1;
  }

  /** Plains: the feet height to stand at in column (x, z) coming from feet height `y`, or null. */
  private standY(env: PrivilegedView, x: number, y: number, z: number, fromX: number, fromZ: number): number | null {
    for (const yy of [y, y + 1, y - 1, y - 2, y - 3]) {
      const s = env.world.stateAt(x, yy, z);
      if (stateSolid[s] === 1 || isLava(s) || !this.solid(env, x, yy - 1, z) || this.solid(env, x, yy + 1, z)) continue;
      if (isLava(env.world.stateAt(x, yy - 1, z))) continue;
      if (yy > y && this.solid(env, fromX, y + 2, fromZ)) continue; // no room to jump up
      return yy;
    }
    return null;
  }

  /** Underground: cost of tunnelling into (x, y, z) at fixed feet height, or null where lava or a drop is. */
  private tunnelCost(env: PrivilegedView, x: number, y: number, z: number): number | null {
    const w = env.world;
    const floor = w.stateAt(x, y - 1, z);
    if (stateSolid[floor] !== 1) return null;
    let cost = 1;
    for (const yy of [y, y + 1]) {
      const s = w.stateAt(x, yy, z);
      if (isLava(s)) return null;
      if (stateSolid[s] === 1) cost += isBedrock(s) ? Infinity : 6;
      if (lavaBeside(w, x, yy, z)) return null;
    }
    return Number.isFinite(cost) ? cost : null;
  }

  private goalTest(env: PrivilegedView, c: Cell): boolean {
    const t = this.target!;
    if (t.kind === 'mob') {
      return Math.max(Math.abs(c.x - Math.floor(t.mob.x)), Math.abs(c.z - Math.floor(t.mob.z))) <= 1;
    }
    if (this.underground) {
      // Next to the ore's column with the ore within reach of the eyes.
      return Math.max(Math.abs(c.x - t.x), Math.abs(c.z - t.z)) === 1 && Math.abs(c.y + 1 - t.y) <= 2;
    }
    // Orthogonally next to the trunk with a log at feet or head height.
    if (Math.abs(c.x - t.x) + Math.abs(c.z - t.z) !== 1) return false;
    const ids = t.names;
    return ids.has(stateToBlock[env.world.stateAt(t.x, c.y, t.z)]!) || ids.has(stateToBlock[env.world.stateAt(t.x, c.y + 1, t.z)]!);
  }

  private atBlockGoal(env: PrivilegedView, t: Target & { kind: 'block' }): boolean {
    const e = env.entity;
    const c = { x: Math.floor(e.pos.x), y: Math.floor(e.pos.y + 0.01), z: Math.floor(e.pos.z) };
    return (this.target === t && this.goalTest(env, c)) || Math.hypot(t.x + 0.5 - e.pos.x, t.z + 0.5 - e.pos.z) < 1.2;
  }

  private plan(env: PrivilegedView): void {
    this.stepsSincePlan = 0;
    this.path = [];
    this.pathIndex = 0;
    const e = env.entity;
    const start: Cell = { x: Math.floor(e.pos.x), y: Math.floor(e.pos.y + 0.01), z: Math.floor(e.pos.z) };
    const t = this.target!;
    const tx = t.kind === 'mob' ? Math.floor(t.mob.x) : t.x,
      tz = t.kind === 'mob' ? Math.floor(t.mob.z) : t.z;
    const key = (x: number, z: number) => (x + 32768) * 65536 + (z + 32768);
    const h = (x: number, z: number) => {
      const dx = Math.abs(x - tx),
        dz = Math.abs(z - tz);
      return Math.max(dx, dz) + 0.41 * Math.min(dx, dz);
    };
    // A binary heap of [f, key]; node data in maps.
    const heap: [number, number][] = [];
    const push = (f: number, k: number) => {
      heap.push([f, k]);
      for (let i = heap.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (heap[p]![0] <= heap[i]![0]) break;
        [heap[p], heap[i]] = [heap[i]!, heap[p]!];
        i = p;
      }
    };
    const pop = (): [number, number] => {
      const top = heap[0]!,
        last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        for (let i = 0; ; ) {
          const l = 2 * i + 1,
            r = l + 1;
          let m = i;
          if (l < heap.length && heap[l]![0] < heap[m]![0]) m = l;
          if (r < heap.length && heap[r]![0] < heap[m]![0]) m = r;
          if (m === i) break;
          [heap[m], heap[i]] = [heap[i]!, heap[m]!];
          i = m;
        }
      }
      return top;
    };
    const cells = new Map<number, Cell>();
    const g = new Map<number, number>();
    const parent = new Map<number, number>();
    const k0 = key(start.x, start.z);
    cells.set(k0, start);
    g.set(k0, 0);
    push(h(start.x, start.z), k0);
    const closed = new Set<number>();
    let found: number | null = null,
      expansions = 0;
    while (heap.length > 0 && expansions < MAX_EXPANSIONS) {
      const [, k] = pop();
      if (closed.has(k)) continue;
      closed.add(k);
      expansions++;
      const c = cells.get(k)!;
      if (this.goalTest(env, c)) {
        found = k;
        break;
      }
      for (let dx = -1; dx <= 1; dx++) {
        for (let dz = -1; dz <= 1; dz++) {
          if (dx === 0 && dz === 0) continue;
          const nx = c.x + dx,
            nz = c.z + dz,
            nk = key(nx, nz);
          if (closed.has(nk)) continue;
          let ny: number | null, step: number;
          if (this.underground) {
            ny = c.y;
            const cost = this.tunnelCost(env, nx, ny, nz);
            if (cost === null) continue;
            step = cost;
            if (dx !== 0 && dz !== 0) {
              // Diagonal moves only between two open cells (no corner cutting through rock).
              if (this.tunnelCost(env, c.x + dx, ny, c.z) !== 1 || this.tunnelCost(env, c.x, ny, c.z + dz) !== 1 || cost !== 1) continue;
              step = 1.41;
            }
          } else {
            ny = this.standY(env, nx, c.y, nz, c.x, c.z);
            if (ny === null) continue;
            step = dx !== 0 && dz !== 0 ? 1.41 : 1;
            if (dx !== 0 && dz !== 0) {
              const a = this.standY(env, c.x + dx, c.y, c.z, c.x, c.z),
                b = this.standY(env, c.x, c.y, c.z + dz, c.x, c.z);
              if (a === null || b === null || a !== c.y || b !== c.y || ny !== c.y) continue;
            }
            if (ny > c.y) step += 0.5;
          }
          const ng = g.get(k)! + step;
          if (ng >= (g.get(nk) ?? Infinity)) continue;
          g.set(nk, ng);
          cells.set(nk, { x: nx, y: ny, z: nz });
          parent.set(nk, k);
          push(ng + h(nx, nz), nk);
        }
      }
    }
    if (found === null) {
      // No way found (for now): forget this target for a while and explore.
      if (t.kind === 'block') this.target = null;
      this.searchAgainAt = this.steps + 150;
      return;
    }
    const out: Cell[] = [];
    for (let k: number | undefined = found; k !== undefined && k !== k0; k = parent.get(k)) out.push(cells.get(k)!);
    this.path = out.reverse();
  }

  // ---- acting ----

  /** Turns towards a yaw/pitch; returns the turn action, or null when already within tolerance. */
  private face(env: PrivilegedView, yaw: number, pitch: number, yawTol = TURN * 0.75, pitchTol = TURN * 0.75): number | null {
    const e = env.entity;
    const dy = wrapAngle(yaw - e.yaw);
    if (Math.abs(dy) > yawTol) return dy > 0 ? A.turn_left : A.turn_right;
    const dp = pitch - e.pitch;
    if (Math.abs(dp) > pitchTol) return dp > 0 ? A.turn_up : A.turn_down;
    return null;
  }

  private lookAngles(env: PrivilegedView, x: number, y: number, z: number): [number, number] {
    const e = env.entity;
    const dx = x - e.pos.x,
      dz = z - e.pos.z,
      dy = y - (e.pos.y + EYE_HEIGHT);
    return [Math.atan2(-dx, -dz), Math.atan2(dy, Math.hypot(dx, dz))];
  }

  /** Looks at block (x, y, z) and attacks whatever the crosshair is on until it is gone. */
  private dig(env: PrivilegedView, x: number, y: number, z: number): number {
    const [yaw, pitch] = this.lookAngles(env, x + 0.5, y + 0.5, z + 0.5);
    const turn = this.face(env, yaw, pitch, TURN * 0.75, TURN * 0.75);
    if (turn !== null && this.stuck < 30) return turn;
    if (targetBlock(env.world, this.ray.from(env.entity), this.hit)) return this.attackBlock(env, this.hit);
    return turn ?? A.forward;
  }

  /**
   * Attacks the block at `hit` with the quickest tool it carries: while something slower is in hand (a block the
   * noise equipped: stone by hand takes 150 ticks against 8 with the iron pickaxe), `equip` moves through the
   * inventory first, so the demonstrations show the student how to get its tool back.
   */
  private attackBlock(env: PrivilegedView, hit: BlockHit): number {
    const now = env.ticksToBreak(env.heldItem, hit.x, hit.y, hit.z);
    // Bedrock (or anything no tool breaks): attacking it forever is the trap; look up and away instead.
    if (!Number.isFinite(now) && isBedrock(env.world.stateAt(hit.x, hit.y, hit.z))) {
      this.recovering = true;
      return env.entity.pitch < 0 ? A.turn_up : A.turn_left;
    }
    for (const item of env.inventory.keys()) {
      if (env.ticksToBreak(item, hit.x, hit.y, hit.z) < now) {
        this.recovering = true;
        return A.equip;
      }
    }
    return A.attack;
  }

  /** Underground: the agent is no longer where its path goes on from (it fell, or a student it labels wandered off). */
  private offPath(env: PrivilegedView): boolean {
    const e = env.entity;
    const wp = this.path[Math.min(this.pathIndex, this.path.length - 1)]!;
    return Math.floor(e.pos.y + 0.01) !== wp.y || Math.hypot(wp.x + 0.5 - e.pos.x, wp.z + 0.5 - e.pos.z) > 2.5;
  }

  /** Can a staircase step go from (x, y, z) one cell towards (dx, dz)? Its cells are diggable, none next to lava. */
  private stepCells(env: PrivilegedView, x: number, y: number, z: number, dx: number, dz: number): boolean {
    const w = env.world;
    for (const [cx, cy, cz] of staircaseStep(x, y, z, dx, dz)) {
      const s = w.stateAt(cx, cy, cz);
      if (isLava(s) || isBedrock(s)) return false;
      if (lavaBeside(w, cx, cy, cz)) return false;
    }
    return true;
  }

  /**
   * Climbs one cell at a time: clears the cell above the head and the two in front one level up, then jumps
   * forward onto the step. Keeps its heading while the steps allow, else takes the first safe one (a solid
   * step first). Walled in by bedrock or lava on every side, it pillars up the shaft instead (a block in hand,
   * jump_place).
   */
  private climb(env: PrivilegedView): number {
    const e = env.entity;
    const x = Math.floor(e.pos.x),
      y = Math.floor(e.pos.y + 0.01),
      z = Math.floor(e.pos.z);
    const usable = (d: number, needStep: boolean) => {
      const [dx, dz] = CARDINALS[d]!;
      return this.stepCells(env, x, y, z, dx, dz) && (!needStep || this.solid(env, x + dx, y, z + dz));
    };
    if (this.climbDir < 0 || !usable(this.climbDir, false)) {
      const facing = Math.round(wrapAngle(e.yaw) / (Math.PI / 2));
      const order = [0, 1, 3, 2].map((k) => (((facing + k) % 4) + 4) % 4);
      const found = order.find((d) => usable(d, true)) ?? order.find((d) => usable(d, false));
      if (found === undefined) return this.pillar(env, x, y, z);
      this.climbDir = found;
    }
    const [dx, dz] = CARDINALS[this.climbDir]!;
    for (const [cx, cy, cz] of staircaseStep(x, y, z, dx, dz)) {
      if (this.solid(env, cx, cy, cz)) return this.dig(env, cx, cy, cz);
    }
    const [yaw] = this.lookAngles(env, x + dx + 0.5, e.pos.y + EYE_HEIGHT, z + dz + 0.5);
    const turn = this.face(env, yaw, 0, 22 * DEG, 20 * DEG);
    if (turn !== null) return turn;
    return this.solid(env, x + dx, y, z + dz) ? A.forward_jump : A.forward;
  }

  /** Up a shaft whose sides cannot be dug: a block in hand, then jump_place (the block goes under the feet). */
  private pillar(env: PrivilegedView, x: number, y: number, z: number): number {
    if (this.solid(env, x, y + 2, z)) {
      const s = env.world.stateAt(x, y + 2, z);
      if (!isLava(s) && !isBedrock(s)) return this.dig(env, x, y + 2, z);
    }
    const held = env.heldItem;
    if (held === null || !PLACEABLE.has(held)) return [...env.inventory.keys()].some((i) => PLACEABLE.has(i)) ? A.equip : A.jump;
    return env.entity.onGround ? A.jump_place : A.no_op;
  }

  private followPath(env: PrivilegedView): number {
    const e = env.entity;
    let wp = this.path[this.pathIndex]!;
    while (Math.hypot(wp.x + 0.5 - e.pos.x, wp.z + 0.5 - e.pos.z) < 0.3 && Math.abs(e.pos.y - wp.y) < 1) {
      this.pathIndex++;
      if (this.pathIndex >= this.path.length) return A.no_op;
      wp = this.path[this.pathIndex]!;
    }
    // Blocks in the way (leaves, rock in a tunnel): dig the head cell first, then the feet cell.
    for (const yy of [wp.y + 1, wp.y]) {
      if (this.solid(env, wp.x, yy, wp.z)) return this.dig(env, wp.x, yy, wp.z);
    }
    const [yaw] = this.lookAngles(env, wp.x + 0.5, e.pos.y + EYE_HEIGHT, wp.z + 0.5);
    const turn = this.face(env, yaw, 0, 22 * DEG, 20 * DEG);
    if (turn !== null) return turn;
    const feet = Math.floor(e.pos.y + 0.01);
    if (wp.y > feet || (this.stuck > 8 && e.onGround)) return A.forward_jump;
    return A.forward;
  }

  private engageBlock(env: PrivilegedView, t: Target & { kind: 'block' }): number {
    const e = env.entity;
    // Look at the target block's face nearest the eyes, at eye height where the block spans it.
    const ey = e.pos.y + EYE_HEIGHT;
    let ty = t.y;
    if (!this.underground) {
      const headLog = t.names.has(stateToBlock[env.world.stateAt(t.x, Math.floor(ey), t.z)]!);
      ty = headLog ? Math.floor(ey) : Math.floor(e.pos.y + 0.01);
    }
    const [yaw, pitch] = this.lookAngles(env, t.x + 0.5, ty + 0.5, t.z + 0.5);
    const turn = this.face(env, yaw, pitch, 12 * DEG, 14 * DEG);
    if (turn !== null) return turn;
    // Something between the eyes and the target (rock, leaves): dig it.
    if (targetBlock(env.world, this.ray.from(e), this.hit)) {
      const b = stateToBlock[env.world.stateAt(this.hit.x, this.hit.y, this.hit.z)]!;
      if (!t.names.has(b)) return this.attackBlock(env, this.hit);
    }
    return A.forward;
  }

  private engageMob(env: PrivilegedView, m: Mob): number {
    const [yaw, pitch] = this.lookAngles(env, m.x, m.y + m.height / 2, m.z);
    const turn = this.face(env, yaw, pitch, 14 * DEG, 18 * DEG);
    if (turn !== null) return turn;
    if (this.goal.strike) {
      const d = Math.hypot(m.x - env.entity.pos.x, m.z - env.entity.pos.z);
      if (d < 2.6) {
        if (this.sinceAttack >= 12) {
          this.sinceAttack = 0;
          return A.attack;
        }
        return A.no_op;
      }
    }
    if (this.stuck > 8 && env.entity.onGround) return A.forward_jump;
    return A.forward;
  }

  /** No target known: keep a heading (tunnelling underground), turning away from what blocks it. */
  private explore(env: PrivilegedView): number {
    const e = env.entity;
    if (this.stuck > 30) {
      this.exploreYaw += (this.random() < 0.5 ? 1 : -1) * (Math.PI / 2);
      this.stuck = 0;
    }
    const turn = this.face(env, this.exploreYaw, 0, 22 * DEG, 20 * DEG);
    if (turn !== null) return turn;
    const fx = -Math.sin(e.yaw),
      fz = -Math.cos(e.yaw);
    const nx = Math.floor(e.pos.x + fx * 0.8),
      nz = Math.floor(e.pos.z + fz * 0.8);
    const feet = Math.floor(e.pos.y + 0.01);
    if (this.underground) {
      if (this.tunnelCost(env, nx, feet, nz) === null && (nx !== Math.floor(e.pos.x) || nz !== Math.floor(e.pos.z))) {
        this.exploreYaw += Math.PI / 2;
        return A.turn_left;
      }
      for (const yy of [feet + 1, feet]) if (this.solid(env, nx, yy, nz)) return this.dig(env, nx, yy, nz);
      return A.forward;
    }
    if (this.solid(env, nx, feet, nz)) return this.solid(env, nx, feet + 1, nz) ? this.dig(env, nx, feet + 1, nz) : A.forward_jump;
    return A.forward;
  }
}
