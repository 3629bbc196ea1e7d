// The simulator's view skips work (chunks the open pitches pass above, cells outside the open pitches within
// 64 m, mobs whose box points cannot fall in the field of view) but must see exactly what the straightforward walk sees: every plane walked cell column by cell column
// to 64 m, every cell in the pitch range read (test/helpers/reference-view.ts, the view as first written).
// Compared bit for bit on generated worlds at random poses — on the ground, in the air, underground, looking
// anywhere from straight down to straight up — with mobs, and after blocks are dug and placed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { S } from '../src/env/game/registry';
import { DEG, ViewResult, nearestDict, observeView, type ViewEntity, type ViewPose } from '../src/env/game/observe';
import { SimEnv } from '../src/env/sim/sim';
import type { SimWorld } from '../src/env/sim/world';
import { referenceView } from './helpers/reference-view';

/** Deterministic uniform numbers in [0, 1) (mulberry32). */
function rng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Differences between two views, as readable lines (empty: identical, bit for bit). */
function differences(fast: ViewResult, slow: ViewResult): string[] {
  const out: string[] = [];
  const fastSeen = fast.seen.subarray(0, fast.seenCount).join(),
    slowSeen = slow.seen.subarray(0, slow.seenCount).join();
  if (fastSeen !== slowSeen) out.push(`seen ${fastSeen} vs ${slowSeen}`);
  for (const i of slow.seen.subarray(0, slow.seenCount)) {
    if (!Object.is(fast.dist[i], slow.dist[i]) || !Object.is(fast.yaw[i], slow.yaw[i]) || !Object.is(fast.pitch[i], slow.pitch[i]))
      out.push(`name ${i}: ${fast.dist[i]}/${fast.yaw[i]}/${fast.pitch[i]} vs ${slow.dist[i]}/${slow.yaw[i]}/${slow.pitch[i]}`);
  }
  for (let r = 0; r < slow.lidarDist.length; r++) {
    if (!Object.is(fast.lidarDist[r], slow.lidarDist[r]) || (slow.lidarDist[r] !== Infinity && fast.lidarState[r] !== slow.lidarState[r]))
      out.push(`lidar ${r}: ${fast.lidarDist[r]} (${fast.lidarState[r]}) vs ${slow.lidarDist[r]} (${slow.lidarState[r]})`);
  }
  if (fast.cellVisits !== slow.cellVisits) out.push(`blocks looked at ${fast.cellVisits} vs ${slow.cellVisits}`);
  return out;
}

/** Pitches that matter most (straight down, level, straight up) and random ones between. */
const pitchOf = (r: () => number, k: number) => ([-90, 0, 90][k % 7] ?? -90 + 180 * r()) * DEG;

function comparePoses(env: SimEnv, r: () => number, poses: number, where: (r: () => number) => ViewPose): number {
  const fast = new ViewResult(),
    slow = new ViewResult();
  let compared = 0;
  for (let k = 0; k < poses; k++) {
    const pose = where(r);
    pose.pitch = pitchOf(r, k);
    fast.cellVisits = slow.cellVisits = 0;
    observeView(env.world, pose, env.mobs as ViewEntity[], fast);
    referenceView(env.world, pose, env.mobs as ViewEntity[], slow);
    const diff = differences(fast, slow);
    assert.deepEqual(diff, [], `seed ${env.seed}, pose ${JSON.stringify(pose)}`);
    assert.deepEqual(nearestDict(fast), nearestDict(slow));
    compared++;
  }
  return compared;
}

/** A pose on the ground (or in the air above it) within `spread` m of the start. */
function aroundStart(env: SimEnv, spread: number, air: number) {
  const e = env.entity;
  const x0 = e.pos.x,
    z0 = e.pos.z;
  return (r: () => number): ViewPose => {
    const x = x0 + (r() * 2 - 1) * spread,
      z = z0 + (r() * 2 - 1) * spread;
    let y = env.world.maxY + 2;
    while (y > env.world.minY && env.world.stateAt(Math.floor(x), y - 1, Math.floor(z)) === S.air) y--;
    return { x, y: y + (r() < 0.3 ? r() * air : 0), z, yaw: r() * 2 * Math.PI, pitch: 0 };
  };
}

/** Digs and places blocks near the start: holes, pillars and a floating slab (the chunks' bounds must follow). */
function editWorld(world: SimWorld, x0: number, y0: number, z0: number, r: () => number): void {
  for (let k = 0; k < 60; k++) {
    const x = Math.floor(x0 + (r() * 2 - 1) * 24),
      z = Math.floor(z0 + (r() * 2 - 1) * 24);
    const y = Math.floor(y0 + (r() * 2 - 1) * 6);
    if (k % 3 === 0) world.setState(x, y, z, S.air);
    else for (let h = 0; h < 1 + Math.floor(r() * 8); h++) world.setState(x, y + h, z, k % 3 === 1 ? S.oak_log : S.stone);
  }
  for (let dx = 0; dx < 5; dx++) for (let dz = 0; dz < 5; dz++) world.setState(Math.floor(x0) + 10 + dx, Math.floor(y0) + 9, Math.floor(z0) + dz, S.oak_leaves);
}

function startEnv(task: TaskSpec, seed: number): SimEnv {
  const env = new SimEnv(task);
  env.reset(seed, new Float32Array(env.featureSize), 0);
  return env;
}

test('plains: the fast view equals the straightforward walk at random poses, on the ground and in the air, with animals', () => {
  let compared = 0;
  for (const seed of [1, 2, 3, 17]) {
    const env = startEnv(BUILTIN_TASKS['approach-tree']!, seed);
    compared += comparePoses(env, rng(seed), 70, aroundStart(env, 40, 30));
  }
  assert.equal(compared, 280);
});

test('plains after digging and building: the fast view still equals the straightforward walk', () => {
  let compared = 0;
  for (const seed of [4, 5]) {
    const env = startEnv(BUILTIN_TASKS['approach-tree']!, seed);
    const r = rng(seed * 7);
    const e = env.entity;
    editWorld(env.world, e.pos.x, e.pos.y, e.pos.z, r);
    compared += comparePoses(env, r, 60, aroundStart(env, 20, 12));
  }
  assert.equal(compared, 120);
});

test('underground: the fast view equals the straightforward walk in caves and inside rock', () => {
  let compared = 0;
  for (const seed of [1, 3, 9]) {
    const env = startEnv(BUILTIN_TASKS['explore-diamond']!, seed);
    const e = env.entity;
    const r = rng(seed);
    editWorld(env.world, e.pos.x, e.pos.y, e.pos.z, r);
    compared += comparePoses(env, r, 60, (r) => ({
      x: e.pos.x + (r() * 2 - 1) * 20,
      y: 4 + r() * 36,
      z: e.pos.z + (r() * 2 - 1) * 20,
      yaw: r() * 2 * Math.PI,
      pitch: 0,
    }));
  }
  assert.equal(compared, 180);
});
