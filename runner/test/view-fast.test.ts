// The simulator's view skips work (chunks the open pitches pass above, cells outside the open pitches within
// 64 m, mobs whose box points cannot fall in the field of view) but must see exactly what the straightforward walk sees: every plane walked cell column by cell column
// to 64 m, every cell in the pitch range read (test/helpers/reference-view.ts, the view as first written).
// Compared bit for bit on generated worlds at random poses — on the ground, in the air, underground, looking
// anywhere from straight down to straight up — with mobs, and after blocks are dug and placed.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { S } from '../src/env/game/registry';
import { GAME_FACTS } from '../src/schema';
import { DEG, ViewResult, allocChunkColumn, freeChunkColumn, nearestDict, observeView, type ViewEntity, type ViewPose } from '../src/env/game/observe';
import { SimEnv } from '../src/env/sim/sim';
import { mulberry32 as rng } from '../src/stats';
import type { SimWorld } from '../src/env/sim/world';
import { referenceView } from './helpers/reference-view';

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

/** Calls `place` with the highest non-air cell of every column of a 31 × 39 patch ahead (−z) of (x0, z0), two in three. */
function patchAhead(world: SimWorld, x0: number, z0: number, place: (x: number, y: number, z: number) => void): void {
  for (let dx = -15; dx <= 15; dx++)
    for (let dz = -40; dz <= -2; dz++) {
      if ((dx + 2 * dz) % 3 === 0) continue;
      const x = Math.floor(x0) + dx,
        z = Math.floor(z0) + dz;
      let y = world.maxY - 1;
      while (y > world.minY && world.stateAt(x, y, z) === S.air) y--;
      place(x, y, z);
    }
}

test('plains with shallow water or tall grass on the ground: the fast view equals the straightforward walk, LiDAR included', () => {
  // Water one block deep stops LiDAR rays; the grazed-ground loop once took it for a plant and let the rays through.
  let compared = 0;
  for (const [seed, cover] of [
    [1, 'water'],
    [2, 'water'],
    [3, 'tall grass'],
  ] as const) {
    const env = startEnv(BUILTIN_TASKS['approach-tree']!, seed);
    const { world, entity: e } = env;
    patchAhead(world, e.pos.x, e.pos.z, (x, y, z) => {
      if (cover === 'water') return world.setState(x, y, z, S.water);
      const ground = world.stateAt(x, y, z) === S.grass_block ? y : y - 1; // a plant on top is replaced
      world.setState(x, ground + 1, z, S.tall_grass_lower);
      world.setState(x, ground + 2, z, S.tall_grass_upper);
    });
    // Standing at the start and facing the patch within ±20° (the pitches are comparePoses').
    compared += comparePoses(env, rng(seed * 11), 60, (r) => ({ x: e.pos.x, y: e.pos.y, z: e.pos.z, yaw: (r() * 40 - 20) * DEG, pitch: 0 }));
  }
  assert.equal(compared, 180);
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

/** The pose the env's view was taken from (feet, facing). */
const poseOf = (env: SimEnv): ViewPose => ({ x: env.entity.pos.x, y: env.entity.pos.y, z: env.entity.pos.z, yaw: env.entity.yaw, pitch: env.entity.pitch });

/** What a view shows a policy and a reward (nearest of each name, LiDAR), taken afresh with no view kept. */
function freshView(env: SimEnv, pose: ViewPose): ViewResult {
  const fresh = new ViewResult();
  observeView(env.world, pose, env.mobs as ViewEntity[], fresh);
  return fresh;
}
function assertSameSight(kept: ViewResult, fresh: ViewResult, where: string): void {
  assert.deepEqual(nearestDict(kept), nearestDict(fresh), where);
  assert.deepEqual([...kept.seen.subarray(0, kept.seenCount)], [...fresh.seen.subarray(0, fresh.seenCount)], where);
  assert.deepEqual([...kept.lidarDist], [...fresh.lidarDist], where);
  assert.deepEqual(
    [...kept.lidarState].map((s, r) => (kept.lidarDist[r] === Infinity ? 0 : s)),
    [...fresh.lidarState].map((s, r) => (fresh.lidarDist[r] === Infinity ? 0 : s)),
    where,
  );
}

test('a view from an unchanged pose reuses the blocks it saw until a block changes, and sees what a fresh walk sees', () => {
  const env = startEnv(BUILTIN_TASKS['explore-diamond']!, 3);
  const pose = poseOf(env);
  const view = new ViewResult();
  observeView(env.world, pose, env.mobs as ViewEntity[], view);
  assert.ok(view.cellVisits > 0);
  view.cellVisits = 0;
  observeView(env.world, { ...pose }, env.mobs as ViewEntity[], view);
  assert.equal(view.cellVisits, 0, 'the same pose in the same world: the blocks are reused, none looked at');
  assertSameSight(view, freshView(env, pose), 'reused');

  // A block set in front of the eyes: the kept blocks are stale, the view walks again and sees it.
  const before = nearestDict(view);
  const eyeY = Math.floor(pose.y + 1.62);
  const fx = Math.floor(pose.x - Math.sin(pose.yaw) * 2),
    fz = Math.floor(pose.z - Math.cos(pose.yaw) * 2);
  env.world.setState(fx, eyeY, fz, S.diamond_ore);
  observeView(env.world, pose, env.mobs as ViewEntity[], view);
  assert.ok(view.cellVisits > 0, 'a changed block makes the view walk again');
  assert.notDeepEqual(nearestDict(view), before);
  assert.ok(nearestDict(view).diamond_ore, 'the ore set in front is seen');
  assertSameSight(view, freshView(env, pose), 'after a block changed');

  // Another world at the same pose (the next episode on the same seed) is walked, not reused.
  const other = startEnv(BUILTIN_TASKS['explore-diamond']!, 3);
  view.cellVisits = 0;
  observeView(other.world, pose, other.mobs as ViewEntity[], view);
  assert.ok(view.cellVisits > 0, 'a new world is walked');
  assertSameSight(view, freshView(other, pose), 'another world');
});

test('digging in place underground: every step sees what a fresh walk sees, most steps reuse the blocks', () => {
  const task = BUILTIN_TASKS['explore-diamond']!;
  const features = new Float32Array(new SimEnv(task).featureSize);
  const [attack, turnDown, turnLeft, forward] = ['attack', 'turn_down', 'turn_left', 'forward'].map((a) => GAME_FACTS.actions.indexOf(a as never));
  let steps = 0,
    reused = 0,
    changes = 0;
  for (const seed of [1, 9]) {
    const env = new SimEnv(task);
    env.reset(seed, features, 0);
    for (let k = 0; k < 600; k++) {
      // Mostly attacking what is in front (blocks break, gravel falls, fluids may flow in), with a turn or a step now and then.
      const action = k % 97 === 40 ? turnDown : k % 61 === 30 ? turnLeft : k % 53 === 20 ? forward : attack;
      const visits = env.view.cellVisits,
        version = env.world.blockVersion;
      env.step(action!, features, 0);
      if (env.view.cellVisits === visits) reused++;
      if (env.world.blockVersion !== version) changes++;
      assertSameSight(env.view, freshView(env, poseOf(env)), `seed ${seed}, step ${k + 1}`);
      steps++;
    }
  }
  assert.ok(changes >= 10, `blocks changed on ${changes} steps: the digging must change the world`);
  assert.ok(reused > steps / 2, `${reused} of ${steps} views reused`);
});

test("32 envs taking turns, each moving to a new world every few steps (the worlds' chunk memory given back and handed to the next): every view still equals the straightforward walk", () => {
  // The walk reads the simulator's chunk columns in place in its memory. A world an env leaves gives its columns'
  // memory back, and the next worlds' columns are made in it: a view must never read what an old world left there.
  const task = BUILTIN_TASKS['approach-tree']!;
  const envs = Array.from({ length: 32 }, (_, i) => startEnv(task, 500 + i));
  const features = new Float32Array(envs[0]!.featureSize);
  const r = rng(5);
  let worlds = envs.length;
  for (let k = 0; k < 12; k++) {
    envs.forEach((env, i) => {
      if (k % 3 === 2 && i % 2 === k % 2) env.reset(1000 + worlds++, features, 0);
      env.step(Math.floor(r() * GAME_FACTS.actions.length), features, 0);
      const slow = new ViewResult();
      referenceView(env.world, poseOf(env), env.mobs as ViewEntity[], slow);
      assertSameSight(env.view, slow, `seed ${env.seed}, step ${k + 1}`);
    });
  }
  assert.ok(worlds >= 32 + 60, `${worlds} worlds`);
});

test("a chunk column made before the walk's memory grows keeps its arrays and contents; memory given back comes back zeroed", () => {
  // The memory is shared so that growing it does not detach the arrays over it (an ordinary WebAssembly memory's
  // growth would leave every earlier column with length 0).
  const first = allocChunkColumn(48 * 256);
  first.cells[5] = 7;
  first.heights[3] = 9;
  const more = Array.from({ length: 600 }, () => allocChunkColumn(48 * 256)); // ~15 MB: past the first 4 MiB
  assert.equal(first.cells.length, 48 * 256);
  assert.equal(first.cells[5], 7);
  assert.equal(first.heights[3], 9);
  more[599]!.cells[0] = 1;
  for (const c of [first, ...more]) freeChunkColumn(c);
  const again = Array.from({ length: 601 }, () => allocChunkColumn(48 * 256));
  assert.ok(
    again.every((c) => c.cells.every((v) => v === 0) && c.heights.every((v) => v === 0)),
    'a reused column is all zero',
  );
  for (const c of again) freeChunkColumn(c);
});

test('the compiled walk in view-walk.wasm.ts is what runner/wasm/view-walk.ts compiles to (npm run build:wasm)', () => {
  const script = path.join(__dirname, '../scripts/build-wasm.mjs');
  const run = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, run.stderr || run.stdout);
  assert.match(run.stdout, /up to date/);
});
