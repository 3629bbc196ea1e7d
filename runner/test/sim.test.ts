// The headless simulator against Minecraft 1.16.5 facts (minecraft-data, prismarine-block): dig times and
// loot, damage and death, the field of view and occlusion, success detection, determinism by seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import prismarineBlock from 'prismarine-block';
import { GAME_FACTS } from '../src/schema';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { SimEnv, makeMob } from '../src/env/sim/sim';
import { SimBatch, shardSizes } from '../src/env/sim/vec';
import { createEnv } from '../src/env/index';
import { S, mcData } from '../src/env/game/registry';
import { FEATURE_CLASSES, FEATURE_SPEC } from '../src/env/game/features';
import { LIDAR_COLUMNS } from '../src/env/game/observe';
import { LAVA_LEVEL, blockStateAt, generateChunk, spawnPoint, WORLD_BANDS } from '../src/env/game/worldgen';
import type { StepObservation } from '../src/schema';
import { HOLD_ACTION, type StepInfo } from '../src/env/types';
import { reportCommandError } from '../src/args';

const act = (name: (typeof GAME_FACTS.actions)[number]) => GAME_FACTS.actions.indexOf(name);
const DEG = Math.PI / 180;

/** An env on a fresh episode, with a cleared 13×13 room (stone floor; optional walls at ±4) around the agent at (0, 70, 0). */
function stage(taskId: string, opts: { walls?: boolean } = {}) {
  const task = BUILTIN_TASKS[taskId]!;
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  env.reset(7, features, 0);
  const y0 = task.world === 'plains' ? 70 : 20;
  for (let x = -6; x <= 6; x++) {
    for (let z = -6; z <= 6; z++) {
      env.world.setState(x, y0 - 1, z, S.stone);
      for (let y = y0; y <= y0 + 12; y++) {
        const wall = opts.walls && (Math.abs(x) === 4 || Math.abs(z) === 4);
        env.world.setState(x, y, z, wall ? S.stone : S.air);
      }
    }
  }
  env.mobs = [];
  env.entity.pos.set(0.5, y0, 0.5);
  env.entity.vel.set(0, 0, 0);
  env.entity.yaw = 0; // facing −z
  env.entity.pitch = 0;
  env.entity.onGround = true;
  const step = (a: number): { obs: StepObservation; info: StepInfo } => env.step(a, features, 0);
  return { env, y0, step, features, task };
}

test("digging stone takes prismarine-block's dig time: 8 ticks with an iron pickaxe, drops cobblestone per blockLoot", () => {
  const { env, y0, step } = stage('explore-diamond');
  env.world.setState(0, y0 + 1, -2, S.stone);
  const Block = prismarineBlock('1.16.5');
  const expected = Math.ceil(Block.fromStateId(S.stone, 1).digTime(mcData.itemsByName.iron_pickaxe!.id, false, false, false) / 50);
  assert.equal(expected, 8);
  let ticks = 0;
  let change: Record<string, number> = {};
  while (env.world.stateAt(0, y0 + 1, -2) !== S.air && ticks < 50) {
    change = step(act('attack')).obs.inventory_change;
    ticks++;
  }
  assert.equal(ticks, expected);
  assert.deepEqual(change, { cobblestone: 1 });
  assert.equal(env.inventory.get('cobblestone'), 1);
});

test('stone by hand takes 150 ticks and drops nothing (not the harvest tool); interrupting restarts the dig', () => {
  const { env, y0, step } = stage('approach-tree');
  env.world.setState(0, y0 + 1, -2, S.stone);
  for (let i = 0; i < 100; i++) step(act('attack'));
  step(act('no_op'));
  let ticks = 0;
  while (env.world.stateAt(0, y0 + 1, -2) !== S.air && ticks < 400) {
    const { obs } = step(act('attack'));
    ticks++;
    assert.deepEqual(obs.inventory_change, {});
  }
  assert.equal(ticks, 150);
  assert.equal(env.inventory.size, 0);
});

test('breaking diamond ore with an iron pickaxe yields diamonds from blockLoot; a log by hand yields the log', () => {
  const { env, y0, step } = stage('explore-diamond');
  env.world.setState(0, y0 + 1, -2, S.diamond_ore);
  let gained: Record<string, number> = {};
  for (let i = 0; i < 100 && env.world.stateAt(0, y0 + 1, -2) !== S.air; i++) gained = step(act('attack')).obs.inventory_change;
  const range = mcData.blockLoot.diamond_ore!.drops.find((d) => d.item === 'diamond')!.stackSizeRange as number[];
  assert.ok(gained.diamond! >= range[0]! && gained.diamond! <= range[1]!, JSON.stringify(gained));
  assert.equal(gained.diamond_ore, undefined, 'silk-touch drop must not happen');

  const tree = stage('approach-tree');
  tree.env.world.setState(0, tree.y0 + 1, -2, S.oak_log);
  let ticks = 0;
  for (; tree.env.world.stateAt(0, tree.y0 + 1, -2) !== S.air && ticks < 200; ticks++) gained = tree.step(act('attack')).obs.inventory_change;
  assert.equal(ticks, 60); // hardness 2 by hand: 2 × 1.5 s = 3 s
  assert.deepEqual(gained, { oak_log: 1 });
});

test('loot alternatives: gravel gives gravel or flint (one item), leaves by hand never give themselves (shears only)', () => {
  const { env, y0, step } = stage('explore-diamond');
  for (let k = 0; k < 6; k++) {
    env.world.setState(0, y0 + 1, -2, S.gravel);
    let gained: Record<string, number> = {};
    for (let i = 0; i < 60 && env.world.stateAt(0, y0 + 1, -2) !== S.air; i++) gained = step(act('attack')).obs.inventory_change;
    const items = Object.keys(gained);
    assert.equal(items.length, 1, JSON.stringify(gained));
    assert.ok(items[0] === 'gravel' || items[0] === 'flint');
  }
  const tree = stage('approach-tree');
  for (let k = 0; k < 6; k++) {
    tree.env.world.setState(0, tree.y0 + 1, -2, S.oak_leaves);
    for (let i = 0; i < 60 && tree.env.world.stateAt(0, tree.y0 + 1, -2) !== S.air; i++) tree.step(act('attack'));
  }
  assert.equal(tree.env.inventory.get('oak_leaves'), undefined);
});

test('lava burns 2 hearts per hit and kills with cause lava', () => {
  const { env, y0, step } = stage('explore-diamond');
  for (let x = -2; x <= 2; x++) for (let z = -2; z <= 2; z++) for (let y = y0 - 1; y <= y0; y++) env.world.setState(x, y, z, S.lava);
  const first = step(act('no_op'));
  assert.equal(first.obs.health, 8);
  let last = first;
  let n = 1;
  while (!last.info.done && n < 200) {
    last = step(act('no_op'));
    n++;
  }
  assert.ok(last.info.died, 'the agent should die in lava');
  assert.equal(last.info.deathCause, 'lava');
  assert.equal(last.obs.health, 0);
  assert.ok(last.info.done && !last.info.truncated && !last.info.success);
  assert.ok(n <= 60, `died after ${n} ticks`);
});

test('falling 10 blocks costs 7 hp (3.5 hearts); natural regeneration heals half a heart per 80 ticks', () => {
  const { env, y0, step } = stage('approach-tree');
  env.entity.pos.set(0.5, y0 + 10, 0.5);
  env.entity.onGround = false;
  let r = step(act('no_op'));
  for (let i = 0; i < 100 && !env.entity.onGround; i++) r = step(act('no_op'));
  assert.equal(r.obs.health, 10 - 3.5);
  for (let i = 0; i < 80; i++) r = step(act('no_op'));
  assert.equal(r.obs.health, 10 - 3);
});

test('standing in fire burns to death with cause fire; water puts the burning out', () => {
  const { env, y0, step } = stage('approach-tree');
  const fire = mcData.blocksByName.fire!.defaultState!;
  env.world.setState(0, y0, 0, fire);
  let r = step(act('no_op'));
  assert.equal(r.obs.health, 9.5);
  let n = 1;
  while (!r.info.done && n < 600) {
    r = step(act('no_op'));
    n++;
  }
  assert.ok(r.info.died);
  assert.equal(r.info.deathCause, 'fire');

  const wet = stage('approach-tree');
  wet.env.world.setState(0, wet.y0, 0, fire);
  wet.step(act('no_op')); // catches fire
  wet.env.world.setState(0, wet.y0, 0, S.water);
  let h = 0;
  for (let i = 0; i < 100; i++) h = wet.step(act('no_op')).obs.health;
  assert.equal(h, 10, 'extinguished, then regenerated');
});

test('staying under water drowns the agent after its 15 s of air', () => {
  const { env, y0, step } = stage('approach-tree');
  for (let x = -6; x <= 6; x++) for (let z = -6; z <= 6; z++) for (let y = y0; y <= y0 + 8; y++) env.world.setState(x, y, z, S.water);
  let r = step(act('no_op'));
  let n = 1;
  while (!r.info.done && n < 1500) {
    r = step(act('no_op'));
    if (n === 300) assert.equal(r.obs.health, 10, 'no damage while air lasts');
    n++;
  }
  assert.equal(r.info.deathCause, 'drowning');
});

test('field of view: a block straight ahead is seen with its distance and angles; behind, beyond ±35° yaw or ±30° pitch it is not', () => {
  const { env, y0, step } = stage('explore-diamond');
  env.world.setState(0, y0 + 1, -6, S.diamond_ore);
  let { obs } = step(act('no_op'));
  const d = obs.nearest.diamond_ore;
  assert.ok(d, 'diamond ore ahead must be visible');
  assert.ok(Math.abs(d[0] - 6) < 0.6, `distance ${d[0]}`);
  assert.ok(Math.abs(d[1]) <= 5 * DEG && Math.abs(d[2]) <= 5 * DEG, `angles ${d[1]}, ${d[2]}`);
  // Turn right by 45°: the ore is now 45° to the left, outside the ±35° field of view.
  step(act('turn_right'));
  step(act('turn_right'));
  ({ obs } = step(act('turn_right')));
  assert.equal(obs.nearest.diamond_ore, undefined);
  ({ obs } = step(act('turn_left')));
  const left = obs.nearest.diamond_ore;
  assert.ok(left && left[1] < -20 * DEG, 'at 30° to the left it is visible with negative yaw');
  // Looking up 45°: out of the ±30° pitch range.
  env.entity.yaw = 0;
  env.entity.pitch = 45 * DEG;
  ({ obs } = step(act('no_op')));
  assert.equal(obs.nearest.diamond_ore, undefined);
  env.entity.pitch = 20 * DEG;
  ({ obs } = step(act('no_op')));
  assert.ok(obs.nearest.diamond_ore && obs.nearest.diamond_ore[2] > 10 * DEG, 'looking up, the ore appears below the line of sight (positive pitch)');
  env.entity.pitch = 0;
  env.entity.yaw = Math.PI;
  ({ obs } = step(act('no_op')));
  assert.equal(obs.nearest.diamond_ore, undefined, 'behind the agent');
});

test('occlusion: a wall hides the ore and a cow behind it; plants and water do not hide things', () => {
  const { env, y0, step } = stage('approach-tree');
  env.world.setState(0, y0 + 1, -6, S.diamond_ore);
  env.mobs = [makeMob({ type: 'cow', x: 2.5, y: y0, z: -5.5, maxHealth: 10 })];
  env.mobs[0]!.moving = false;
  let { obs } = step(act('no_op'));
  assert.ok(obs.nearest.diamond_ore && obs.nearest.cow, 'both visible in the open');
  for (let x = -6; x <= 6; x++) for (let y = y0; y <= y0 + 6; y++) env.world.setState(x, y, -3, S.stone);
  ({ obs } = step(act('no_op')));
  assert.equal(obs.nearest.diamond_ore, undefined);
  assert.equal(obs.nearest.cow, undefined);
  assert.ok(obs.nearest.stone && obs.nearest.stone[0] < 3, 'the wall itself is seen');
  for (let x = -6; x <= 6; x++) for (let y = y0; y <= y0 + 6; y++) env.world.setState(x, y, -3, y === y0 ? S.grass : S.water);
  ({ obs } = step(act('no_op')));
  assert.ok(obs.nearest.diamond_ore, 'seen through water and grass');
  assert.ok(obs.nearest.water && obs.nearest.grass);
});

test('success: approach-tree needs a visible log under 1 m, approach-cow a visible cow under 2 m', () => {
  const tree = stage('approach-tree');
  tree.env.world.setState(0, tree.y0 + 1, -3, S.oak_log);
  let r = tree.step(act('no_op'));
  assert.ok(r.obs.nearest.oak_log && !r.info.success, 'a log 3 m away is not success');
  for (let i = 0; i < 40 && !r.info.done; i++) r = tree.step(act('forward'));
  assert.ok(r.info.success && r.info.done && !r.info.died, 'walking into the trunk succeeds');
  assert.ok(r.obs.nearest.oak_log![0] < 1);

  const cow = stage('approach-cow');
  cow.env.mobs = [makeMob({ type: 'cow', x: 0.5, y: cow.y0, z: -1.6, maxHealth: 10 })];
  r = cow.step(act('no_op'));
  assert.ok(r.info.success, `cow at ${JSON.stringify(r.obs.nearest.cow)}`);
  cow.env.mobs = [makeMob({ type: 'cow', x: 0.5, y: cow.y0, z: 2.5, maxHealth: 10 })];
  r = cow.step(act('no_op'));
  assert.ok(!r.info.success, 'a cow behind the agent does not count');
});

test('attack-cow: hits deal damage with cooldown, the cow dies, drops entityLoot, and the kill is reported', () => {
  const { env, y0, step } = stage('attack-cow', { walls: true });
  env.mobs = [makeMob({ type: 'cow', x: 0.5, y: y0, z: -1.5, maxHealth: 10 })];
  env.entity.pitch = -20 * DEG;
  let dealt = 0;
  let r = step(act('no_op'));
  for (let i = 0; i < 1500 && !r.info.done; i++) {
    const c = r.obs.nearest.cow;
    const a = !c ? 'turn_left' : c[1] > 0.25 ? 'turn_right' : c[1] < -0.25 ? 'turn_left' : c[0] > 2 ? 'forward' : i % 5 === 0 ? 'attack' : 'no_op';
    r = step(act(a));
    dealt += r.obs.damage_dealt;
  }
  assert.ok(r.info.success, 'the cow should be killed');
  assert.deepEqual(r.obs.kill_entity, { cow: 1 });
  assert.ok(Math.abs(dealt - 10) < 1e-9, `damage dealt ${dealt}`);
  assert.ok((r.info.inventory.beef ?? 0) >= 1 && (r.info.inventory.leather ?? 0) >= 1, JSON.stringify(r.info.inventory));
});

test('worlds: the same seed gives the same world; the underground start is a free room on solid ground', () => {
  const a = generateChunk('underground', 42, 1, -2);
  assert.deepEqual(generateChunk('underground', 42, 1, -2), a);
  assert.notDeepEqual(generateChunk('underground', 43, 1, -2), a);
  const spawn = spawnPoint('underground', 42);
  assert.equal(blockStateAt('underground', 42, Math.floor(spawn.x), 11, Math.floor(spawn.z)), S.cave_air);
  assert.equal(blockStateAt('underground', 42, Math.floor(spawn.x), 10, Math.floor(spawn.z)), S.stone);
  assert.ok(WORLD_BANDS.underground.minY === 0 && LAVA_LEVEL === 10);
});

test('episodes are deterministic by seed, in process and across worker shards', async () => {
  const task: TaskSpec = BUILTIN_TASKS['approach-cow']!;
  const run = async (workers: number) => {
    const env = await createEnv({ task, numEnvs: 4, seed: 5, workers });
    try {
      const first = await env.reset([5, 6, 7, 8]);
      const trace: unknown[] = [first.obs, Array.from(first.features)];
      for (let k = 0; k < 60; k++) {
        const actions = Int32Array.from({ length: 4 }, (_, i) => (k * 7 + i * 3) % GAME_FACTS.actions.length);
        const r = await env.step(actions);
        trace.push(r.obs, r.info, Array.from(r.features));
      }
      return trace;
    } finally {
      await env.close();
    }
  };
  const local = await run(0);
  assert.deepEqual(await run(0), local);
  assert.deepEqual(await run(2), local);
});

test("an env worker's error reaches the command line as one line; its stack (the worker's frames) only with REWARDSMITH_DEBUG=1", async () => {
  // A real error inside the worker thread: its env held before its first step (the calling thread's env steps).
  const env = await createEnv({ task: BUILTIN_TASKS['approach-tree']!, numEnvs: 2, seed: 5, workers: 1 });
  let err: unknown;
  try {
    await env.reset([5, 6]);
    await env.step(Int32Array.from([0, HOLD_ACTION]));
  } catch (e) {
    err = e;
  } finally {
    await env.close();
  }
  assert.ok(err instanceof Error, 'the step failed');
  const printed = (debug: string) => {
    const saved = process.env.REWARDSMITH_DEBUG;
    process.env.REWARDSMITH_DEBUG = debug;
    let text = '';
    try {
      reportCommandError('train', err, { stdout: () => {}, stderr: (t) => (text += t) });
    } finally {
      if (saved === undefined) delete process.env.REWARDSMITH_DEBUG;
      else process.env.REWARDSMITH_DEBUG = saved;
    }
    return text;
  };
  assert.equal(printed(''), 'rewardsmith train: env worker: env 1 held before its first step\n');
  const debug = printed('1');
  assert.ok(debug.startsWith('rewardsmith train: env worker: env 1 held before its first step\n'), debug);
  assert.match(
    debug,
    /^in the env worker: Error: env 1 held before its first step\n +at SimBatch\.step \(.*runner[/\\]src[/\\]env[/\\]sim[/\\]vec\.ts:\d+:\d+\)$/m,
  );
});

test('shards: every env is stepped by exactly one thread, and the calling thread (which also gathers) takes no more than a worker', () => {
  for (const [numEnvs, parts] of [
    [64, 2],
    [100, 2],
    [8, 2],
    [2, 2],
    [5, 3],
    [64, 3],
    [1, 1],
  ] as const) {
    const sizes = shardSizes(numEnvs, parts);
    assert.equal(sizes.length, parts);
    assert.equal(
      sizes.reduce((a, b) => a + b, 0),
      numEnvs,
    );
    assert.ok(
      sizes.every((s) => s >= 1),
      `${numEnvs}/${parts}: ${sizes}`,
    );
    assert.ok(
      sizes.slice(1).every((s) => s >= sizes[0]!),
      `${numEnvs}/${parts}: ${sizes}`,
    );
  }
  assert.deepEqual(shardSizes(64, 2), [31, 33]);
});

test('a worker thread that dies mid-run fails the step with its exit code instead of hanging the batch', { timeout: 20_000 }, async () => {
  const env = await createEnv({ task: BUILTIN_TASKS['approach-tree']!, numEnvs: 4, seed: 5, workers: 1 });
  try {
    await env.reset([1, 2, 3, 4]);
    // The worker's thread goes away as a crash would take it (the test reaches into the shard to kill it).
    const shard = (env as unknown as { shards: { worker: { worker: { terminate(): Promise<number> } } }[] }).shards[0]!;
    await shard.worker.worker.terminate();
    await assert.rejects(env.step(new Int32Array(4)), /env worker exited with code 1/);
  } finally {
    await env.close();
  }
});

test('throughput smoke: a plains batch steps well over 1,000 env steps per CPU-second with the full observation', () => {
  const batch = new SimBatch(BUILTIN_TASKS['approach-tree']!, 8, 0);
  batch.reset([1, 2, 3, 4, 5, 6, 7, 8]);
  const actions = new Int32Array(8);
  for (let k = 0; k < 50; k++) batch.step(actions.map(() => (k * 5) % 14)); // generate the nearby chunks first
  // CPU time, not wall time: the test must not fail because other processes share the machine.
  const c0 = process.cpuUsage();
  for (let k = 0; k < 250; k++) batch.step(actions.map((_, i) => (k * 3 + i) % 14));
  const cpu = process.cpuUsage(c0);
  const rate = (8 * 250) / ((cpu.user + cpu.system) / 1e6);
  assert.ok(rate > 1000, `${rate.toFixed(0)} steps per CPU-second`);
});

test('equip selects a carried block and jump_place pillars the agent up one block with it', () => {
  const { env, y0, step } = stage('approach-tree');
  env.inventory.set('dirt', 3);
  step(act('equip'));
  step(act('no_op')); // settle on the floor: jump_place needs the feet on the ground
  let r = step(act('jump_place'));
  for (let i = 0; i < 20; i++) r = step(act('no_op'));
  assert.equal(env.world.stateAt(0, y0, 0), S.dirt);
  assert.equal(env.entity.pos.y, y0 + 1);
  assert.equal(r.info.inventory.dirt, 2);
  assert.equal(r.info.blockUnderFoot, 'dirt');
});

test('policy features: a log ahead shows in the wood slot and the LiDAR; once out of view, nothing in the features tells where it was', () => {
  const field = (name: string) => FEATURE_SPEC.fields.find((f) => f.name === name)!;
  const wood = field('nearest').offset + FEATURE_CLASSES.indexOf('wood') * 4;
  const { env, y0, step, features } = stage('approach-tree', { walls: true }); // walls keep the world's trees out of view
  assert.equal(features.length, env.featureSize);
  for (const id of Object.keys(BUILTIN_TASKS))
    assert.equal(new SimEnv(BUILTIN_TASKS[id]!).featureSize, FEATURE_SPEC.size, `${id}: the same features for every task`);
  env.world.setState(0, y0 + 1, -3, S.oak_log);
  step(act('no_op'));
  assert.equal(features[wood], 1, 'wood visible');
  assert.ok(features[wood + 1]! > 0.95 && features[wood + 1]! < 1, 'proximity 1 − d/64');
  // The middle LiDAR ray (row 2, column 4) points straight ahead at the log, 2.5 m away.
  const ray = field('lidar').offset + (2 * LIDAR_COLUMNS + 4) * (1 + FEATURE_CLASSES.length);
  assert.ok(Math.abs(features[ray]! - (1 - 2.5 / 64)) < 1e-3, `LiDAR proximity ${features[ray]}`);
  assert.equal(features[ray + 1 + FEATURE_CLASSES.indexOf('wood')], 1, 'LiDAR class wood');
  for (let i = 0; i < 6; i++) step(act('turn_right')); // 90° right: the log is out of view
  const withLog = Array.from(features);
  assert.equal(features[wood], 0);
  // The same history without the log: identical features (no memory of sightings, no bearing to targets).
  const other = stage('approach-tree', { walls: true });
  other.step(act('no_op'));
  for (let i = 0; i < 6; i++) other.step(act('turn_right'));
  assert.deepEqual(Array.from(other.features), withLog);
  assert.ok(withLog.every(Number.isFinite));
});
