// The view alone (observeView), an earlier commit's (BENCH_VIEW_BEFORE, extracted with `git archive`) against a
// copy of this tree's (train.bench.ts copyThisTree), on the same states, in alternating pairs, so a load spike on the
// shared machine falls on both alike. The steps are recorded once and each side replays them on its own simulator (a
// simulator's chunk columns live in its own view's memory, so each view reads the worlds its own code made): the
// approach-tree poses the scripted teacher walks through (what a trained policy's evaluation looks like), a random
// policy's approach-tree and explore-diamond poses. Each state is a world, a pose and the mobs; each world's views go
// into one ViewResult, in the order the states were recorded, as an env's do; the last two sets are 32 worlds' random
// approach-tree states one world after another and taking turns (a training thread's order), whose ratio is what
// interleaving 32 worlds costs a view (their caches).
// Every state's two views must be bit-identical (names seen and their order, distances, angles, LiDAR, blocks looked
// at): a difference is printed and fails the bench.
// Prints CPU microseconds per view (process CPU, all threads) and the median of the pairs' after/before ratios.
// `npm run bench view-ab`.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { GAME_FACTS } from '../src/schema';
import { BUILTIN_TASKS } from '../src/tasks';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { SimEnv } from '../src/env/sim/sim';
import { mulberry32 as rng } from '../src/stats';
import type { ViewEntity, ViewPose, ViewResult } from '../src/env/game/observe';
import { copyThisTree, extractTree } from './train.bench';

const BEFORE = process.env.BENCH_VIEW_BEFORE ?? '5d48107';
const PAIRS = Number(process.env.BENCH_VIEW_PAIRS ?? 8);

interface ViewCode {
  observeView(world: SimEnv['world'], pose: ViewPose, mobs: readonly ViewEntity[], out: ViewResult): void;
  ViewResult: new () => ViewResult;
}
/** A tree's simulator and view, loaded from its sources. */
interface Side {
  view: ViewCode;
  SimEnv: typeof SimEnv;
  tasks: typeof BUILTIN_TASKS;
}
interface State {
  world: SimEnv['world'];
  pose: ViewPose;
  mobs: ViewEntity[];
}
/** What is recorded once and replayed by each side: per seed, the actions; every `every`-th step is a state. */
interface Recording {
  taskId: string;
  episodes: { seed: number; actions: number[] }[];
  every: number;
}

/** `steps` actions per seed of the scripted teacher or uniformly at random, on this tree's simulator. */
function record(policy: 'teacher' | 'random', taskId: string, seeds: number[], steps: number, every: number): Recording {
  const task = BUILTIN_TASKS[taskId]!;
  const episodes = seeds.map((seed) => {
    const env = new SimEnv(task);
    const features = new Float32Array(env.featureSize);
    env.reset(seed, features, 0);
    const random = rng(seed);
    const teacher = policy === 'teacher' ? new Demonstrator(task, random) : null;
    teacher?.reset(env);
    const actions: number[] = [];
    for (let k = 0; k < steps; k++) {
      const action = teacher ? teacher.act(env) : Math.floor(random() * GAME_FACTS.actions.length);
      actions.push(action);
      env.step(action, features, 0);
    }
    return { seed, actions };
  });
  return { taskId, episodes, every };
}

/** The recording's states on `side`'s simulator: its worlds, the poses and the mobs. */
function replay(side: Side, rec: Recording): State[] {
  const task = side.tasks[rec.taskId]!;
  const states: State[] = [];
  for (const { seed, actions } of rec.episodes) {
    const env = new side.SimEnv(task);
    const features = new Float32Array(env.featureSize);
    env.reset(seed, features, 0);
    actions.forEach((action, k) => {
      env.step(action, features, 0);
      if (k % rec.every !== 0) return;
      const e = env.entity;
      const mobs = env.mobs.map((m) => ({ nameIndex: m.nameIndex, x: m.x, y: m.y, z: m.z, width: m.width, height: m.height }));
      states.push({ world: env.world, pose: { x: e.pos.x, y: e.pos.y, z: e.pos.z, yaw: e.yaw, pitch: e.pitch }, mobs });
    });
  }
  return states;
}

/**
 * The same states in the order a training thread steps its envs: each world's first state, then each world's
 * second, … (record() gives each world's states one after another, `steps` each).
 */
function takingTurns(states: State[], steps: number): State[] {
  const worlds = states.length / steps;
  return Array.from({ length: states.length }, (_, k) => states[(k % worlds) * steps + Math.floor(k / worlds)]!);
}

/** The first difference between two views, or '' when they are bit-identical. */
function difference(a: ViewResult, b: ViewResult): string {
  if (a.seenCount !== b.seenCount) return `${a.seenCount} vs ${b.seenCount} names seen`;
  for (let k = 0; k < a.seenCount; k++) {
    const i = a.seen[k]!;
    if (b.seen[k] !== i || !Object.is(a.dist[i], b.dist[i]) || !Object.is(a.yaw[i], b.yaw[i]) || !Object.is(a.pitch[i], b.pitch[i])) return `name ${i}`;
  }
  for (let r = 0; r < a.lidarDist.length; r++)
    if (!Object.is(a.lidarDist[r], b.lidarDist[r]) || (a.lidarDist[r] !== Infinity && a.lidarState[r] !== b.lidarState[r])) return `LiDAR ray ${r}`;
  return a.cellVisits === b.cellVisits ? '' : `${a.cellVisits} vs ${b.cellVisits} blocks looked at`;
}

/**
 * CPU seconds of this process for two passes of `code` over the states, each world's views kept in one ViewResult as
 * an env keeps its own (what a view may reuse from the last one it took, both codes alike).
 */
function timeViews(code: ViewCode, states: State[]): number {
  const views = new Map<State['world'], ViewResult>();
  for (const s of states) if (!views.has(s.world)) views.set(s.world, new code.ViewResult());
  const c0 = process.cpuUsage();
  for (let pass = 0; pass < 2; pass++) for (const s of states) code.observeView(s.world, s.pose, s.mobs, views.get(s.world)!);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

export async function run(): Promise<void> {
  console.log(
    `method: observeView of commit ${BEFORE} ("before") and of this tree ("after") in one process under tsx, on the same recorded steps (each side replays them on its own simulator), ` +
      `${PAIRS} pairs of two passes each after one of warm-up, the order flipped every pair; CPU from process.cpuUsage.`,
  );
  const beforeTree = extractTree(BEFORE),
    afterTree = copyThisTree();
  try {
    const load = (tree: string): Side => ({
      view: require(path.join(tree, 'runner/src/env/game/observe')) as ViewCode,
      SimEnv: (require(path.join(tree, 'runner/src/env/sim/sim')) as { SimEnv: typeof SimEnv }).SimEnv,
      tasks: (require(path.join(tree, 'runner/src/tasks')) as { BUILTIN_TASKS: typeof BUILTIN_TASKS }).BUILTIN_TASKS,
    });
    const beforeSide = load(beforeTree),
      afterSide = load(afterTree);
    const before = beforeSide.view,
      after = afterSide.view;
    // 32 worlds' views, one world after another and taking turns as 32 envs of a training thread do: the same
    // states and views, only the order differs, so the ratio of the two is what interleaving 32 worlds costs.
    const worlds32 = record(
      'random',
      'approach-tree',
      Array.from({ length: 32 }, (_, i) => 1000 + i),
      75,
      1,
    );
    const sets: [string, Recording, boolean][] = [
      ['approach-tree, the scripted teacher', record('teacher', 'approach-tree', [1, 2, 3], 1500, 3), false],
      ['approach-tree, random policy', record('random', 'approach-tree', [11, 12, 13, 14], 300, 1), false],
      ['explore-diamond, random policy', record('random', 'explore-diamond', [21, 22, 23], 300, 1), false],
      ['approach-tree, 32 worlds one by one', worlds32, false],
      ['approach-tree, 32 worlds taking turns', worlds32, true],
    ];
    // Each recording replayed once per side: the two 32-world sets view the same worlds.
    const replays = new Map<Recording, [State[], State[]]>();
    let differ = 0;
    for (const [name, rec, turns] of sets) {
      let replayed = replays.get(rec);
      if (!replayed) replays.set(rec, (replayed = [replay(beforeSide, rec), replay(afterSide, rec)]));
      const order = (states: State[]) => (turns ? takingTurns(states, rec.episodes[0]!.actions.length) : states);
      const beforeStates = order(replayed[0]),
        afterStates = order(replayed[1]);
      afterStates.forEach((s, k) => {
        const sb = beforeStates[k]!;
        const a = new after.ViewResult(),
          b = new before.ViewResult();
        after.observeView(s.world, s.pose, s.mobs, a);
        before.observeView(sb.world, sb.pose, sb.mobs, b);
        const d = difference(a, b);
        if (d && differ++ < 5) console.log(`DIFFERENT VIEW (${name}, pose ${JSON.stringify(s.pose)}): ${d}`);
      });
      timeViews(before, beforeStates);
      timeViews(after, afterStates);
      const load0 = loadavg()[0]!;
      let tb = 0,
        ta = 0;
      const ratios: number[] = [];
      for (let p = 0; p < PAIRS; p++) {
        const beforeFirst = p % 2 === 0;
        const t1 = beforeFirst ? timeViews(before, beforeStates) : timeViews(after, afterStates),
          t2 = beforeFirst ? timeViews(after, afterStates) : timeViews(before, beforeStates);
        const [b, a] = beforeFirst ? [t1, t2] : [t2, t1];
        tb += b;
        ta += a;
        ratios.push(a / b);
      }
      ratios.sort((x, y) => x - y);
      const micros = (t: number) => ((t / (PAIRS * 2 * afterStates.length)) * 1e6).toFixed(1);
      console.log(
        `${name.padEnd(36)} ${afterStates.length} states: before ${micros(tb)} µs of CPU per view, after ${micros(ta)}; ` +
          `after/before ${(ta / tb).toFixed(3)} (median pair ${ratios[PAIRS >> 1]!.toFixed(3)}); load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
      );
    }
    if (differ > 0) throw new Error(`${differ} states seen differently by the two views`);
  } finally {
    rmSync(beforeTree, { recursive: true, force: true });
    rmSync(afterTree, { recursive: true, force: true });
  }
}
