// Backend parity: one scripted action sequence on one seed, in the headless simulator and in the mineflayer
// backend against an embedded flying-squid (real server, real protocol), gives the same positions and the
// same observations. Tolerances (stated in runner/src/env/mineflayer/README.md):
// - positions and facing: equal to the observation's precision (1 mm, 0.001°): both backends step
//   prismarine-physics one tick per step on the same blocks;
// - nearest blocks: the same names, distances within 1 mm, angles within 0.001 rad;
// - health equal at every step;
// - inventory: the same final inventory; a gain may show up to 2 steps later on the server (its
//   set_slot packet arrives asynchronously).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILTIN_TASKS } from '../src/tasks';
import { GAME_FACTS, loadSchema, type ActionName } from '../src/schema';
import { SimEnv, makeMob } from '../src/env/sim/sim';
import { SimWorld } from '../src/env/sim/world';
import { mobSpawns } from '../src/env/game/worldgen';
import { mcData } from '../src/env/game/registry';
import { ViewResult, nearestDict, observeView, type BlockAccess, type ViewEntity, type ViewPose } from '../src/env/game/observe';
import { createMineflayerEnv, type MineflayerVecEnv } from '../src/env/mineflayer/index';
import type { StepObservation } from '../src/schema';

const SEED = 15; // a world whose spawn room lets the script walk > 0.5 m (the room's surroundings depend on the generated ores and caves)
const act = (a: ActionName) => GAME_FACTS.actions.indexOf(a);
// Walk into the spawn room's wall, look down and dig the stone under the wall, walk into the gap, turn,
// jump, strafe and back off: every movement action and a full dig (iron pickaxe on stone: 8 ticks).
const SCRIPT: ActionName[] = [
  ...Array<ActionName>(6).fill('forward'),
  'turn_down',
  'turn_down',
  'turn_down',
  ...Array<ActionName>(10).fill('attack'),
  'turn_up',
  'turn_up',
  'turn_up',
  ...Array<ActionName>(6).fill('forward'),
  'turn_right',
  'turn_right',
  'turn_right',
  'turn_right',
  ...Array<ActionName>(6).fill('forward'),
  'jump',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  'no_op',
  ...Array<ActionName>(4).fill('forward_jump'),
  ...Array<ActionName>(5).fill('back'),
  ...Array<ActionName>(4).fill('move_left'),
  ...Array<ActionName>(4).fill('move_right'),
  'turn_left',
  'turn_left',
  'turn_up',
];

/** Largest deviation seen between the backends, for the test's diagnostic (the README quotes it). */
const worst = { position: 0, distance: 0, angle: 0 };

function assertSameObservation(sim: StepObservation, mf: StepObservation, where: string, withMobs = true): void {
  if (!withMobs) {
    // Plains: the simulator's animals wander, flying-squid's stand still; compare the blocks only.
    sim = { ...sim, nearest: Object.fromEntries(Object.entries(sim.nearest).filter(([n]) => !loadSchema().mobs.has(n))) };
    mf = { ...mf, nearest: Object.fromEntries(Object.entries(mf.nearest).filter(([n]) => !loadSchema().mobs.has(n))) };
  }
  for (let k = 0; k < 5; k++) {
    worst.position = Math.max(worst.position, Math.abs(sim.position[k]! - mf.position[k]!));
    assert.ok(Math.abs(sim.position[k]! - mf.position[k]!) <= 1e-3 + 1e-9, `${where}: position[${k}] sim ${sim.position} vs mineflayer ${mf.position}`);
  }
  assert.equal(mf.health, sim.health, `${where}: health`);
  assert.deepEqual(Object.keys(mf.nearest).sort(), Object.keys(sim.nearest).sort(), `${where}: visible names`);
  for (const [name, [d, yaw, pitch]] of Object.entries(sim.nearest)) {
    const [d2, yaw2, pitch2] = mf.nearest[name]!;
    worst.distance = Math.max(worst.distance, Math.abs(d - d2));
    worst.angle = Math.max(worst.angle, Math.abs(yaw - yaw2), Math.abs(pitch - pitch2));
    assert.ok(Math.abs(d - d2) <= 1e-3 + 1e-9, `${where}: ${name} distance ${d} vs ${d2}`);
    assert.ok(Math.abs(yaw - yaw2) <= 1e-3 && Math.abs(pitch - pitch2) <= 1e-3, `${where}: ${name} angles ${[yaw, pitch]} vs ${[yaw2, pitch2]}`);
  }
}

test('the same scripted actions on the same seed give the same positions and observations in the simulator and on flying-squid', {
  timeout: 90_000,
}, async (t) => {
  const task = BUILTIN_TASKS['explore-diamond']!;
  const sim = new SimEnv(task);
  const simFeatures = new Float32Array(sim.featureSize);
  const simObs: StepObservation[] = [sim.reset(SEED, simFeatures, 0)];
  const simInv: Record<string, number>[] = [];
  for (const a of SCRIPT) {
    const r = sim.step(act(a), simFeatures, 0);
    assert.equal(r.info.done, false, 'the script must not end the simulated episode');
    simObs.push(r.obs);
    simInv.push(r.info.inventory);
  }

  const env = await createMineflayerEnv({ task, numEnvs: 1, seed: SEED, backend: 'mineflayer' }, { timeoutMs: 20_000 });
  try {
    assert.equal(env.featureSize, sim.featureSize);
    const first = await env.reset([SEED]);
    assertSameObservation(simObs[0]!, first.obs[0]!, 'after reset');
    const mfInv: Record<string, number>[] = [];
    for (let i = 0; i < SCRIPT.length; i++) {
      const r = await env.step(Int32Array.of(act(SCRIPT[i]!)));
      assert.equal(r.info[0]!.done, false, `step ${i + 1}: the mineflayer episode ended (${JSON.stringify(r.info[0])})`);
      assertSameObservation(simObs[i + 1]!, r.obs[0]!, `step ${i + 1} (${SCRIPT[i]})`);
      mfInv.push(r.info[0]!.inventory);
    }
    // The dig happened in both: cobblestone gained, and at most 2 steps apart.
    const gained = (inv: Record<string, number>[]) => inv.findIndex((x) => (x.cobblestone ?? 0) > 0);
    assert.ok(gained(simInv) >= 0, 'the simulator dug the stone');
    assert.ok(gained(mfInv) >= 0, 'the server gave the cobblestone');
    assert.ok(Math.abs(gained(simInv) - gained(mfInv)) <= 2, `cobblestone at step ${gained(simInv)} (sim) vs ${gained(mfInv)} (server)`);
    assert.deepEqual(mfInv.at(-1), simInv.at(-1));
    // Moving at all: the script must have gone somewhere, or the comparison proves nothing.
    const [x0, , z0] = simObs[0]!.position,
      [x1, , z1] = simObs.at(-1)!.position;
    assert.ok(Math.hypot(x1 - x0, z1 - z0) > 0.5, 'the scripted path moves the agent');
    t.diagnostic(`largest deviation: position ${worst.position}, distance ${worst.distance} m, angle ${worst.angle} rad`);
  } finally {
    await env.close();
  }
});

test('plains: the same walk on the same seed gives the same positions and visible blocks in both backends', { timeout: 60_000 }, async (t) => {
  const task = BUILTIN_TASKS['approach-tree']!;
  const seed = 21;
  const script: ActionName[] = [
    ...Array<ActionName>(15).fill('forward'),
    'turn_left',
    'turn_left',
    ...Array<ActionName>(10).fill('forward_jump'),
    'turn_down',
    ...Array<ActionName>(10).fill('forward'),
    'turn_right',
    ...Array<ActionName>(5).fill('move_right'),
  ];
  const sim = new SimEnv(task);
  const f = new Float32Array(sim.featureSize);
  const simObs = [sim.reset(seed, f, 0), ...script.map((a) => sim.step(act(a), f, 0).obs)];
  const env = await createMineflayerEnv({ task, numEnvs: 1, seed, backend: 'mineflayer' }, { timeoutMs: 20_000 });
  try {
    assertSameObservation(simObs[0]!, (await env.reset([seed])).obs[0]!, 'after reset', false);
    for (let i = 0; i < script.length; i++) {
      const r = await env.step(Int32Array.of(act(script[i]!)));
      assert.equal(r.info[0]!.done, false, `step ${i + 1}: the episode ended`);
      assertSameObservation(simObs[i + 1]!, r.obs[0]!, `step ${i + 1} (${script[i]})`, false);
    }
    const [x0, , z0] = simObs[0]!.position,
      [x1, , z1] = simObs.at(-1)!.position;
    assert.ok(Math.hypot(x1 - x0, z1 - z0) > 3, 'the walk covers ground');
    t.diagnostic(`largest deviation so far: position ${worst.position}, distance ${worst.distance} m, angle ${worst.angle} rad`);
  } finally {
    await env.close();
  }
});

// ---- the observation from the bot's own protocol view vs the simulator's, mobs included ----

/** Largest deviation between the bot's protocol view and the simulator's over every compared pose. */
const viewWorst = { distance: 0, angle: 0, lidar: 0, poses: 0, names: 0 };

/**
 * Compares the observation computed from the bot's protocol view with the simulator's at the same pose:
 * the same visible names (blocks and mobs) with distances and angles within 1e-6, and the same LiDAR grid.
 */
function assertSameView(
  bot: { blocks: BlockAccess; entities: ViewEntity[]; pose: ViewPose },
  sim: { blocks: BlockAccess; entities: ViewEntity[] },
  where: string,
): void {
  const a = new ViewResult(),
    b = new ViewResult();
  observeView(bot.blocks, bot.pose, bot.entities, a);
  observeView(sim.blocks, bot.pose, sim.entities, b);
  const mf = nearestDict(a),
    si = nearestDict(b);
  assert.deepEqual(Object.keys(mf).sort(), Object.keys(si).sort(), `${where}: visible names (bot's view vs simulator)`);
  for (const [name, [d, yaw, pitch]] of Object.entries(si)) {
    const [d2, yaw2, pitch2] = mf[name]!;
    viewWorst.distance = Math.max(viewWorst.distance, Math.abs(d - d2));
    viewWorst.angle = Math.max(viewWorst.angle, Math.abs(yaw - yaw2), Math.abs(pitch - pitch2));
    assert.ok(Math.abs(d - d2) <= 1e-6, `${where}: ${name} at ${d2} m in the bot's view, ${d} m in the simulator's`);
    assert.ok(Math.abs(yaw - yaw2) <= 1e-6 && Math.abs(pitch - pitch2) <= 1e-6, `${where}: ${name} angles ${[yaw2, pitch2]} vs ${[yaw, pitch]}`);
  }
  for (let i = 0; i < a.lidarDist.length; i++) {
    const same = a.lidarDist[i] === b.lidarDist[i] || Math.abs(a.lidarDist[i]! - b.lidarDist[i]!) <= 1e-6;
    if (Number.isFinite(a.lidarDist[i]) && Number.isFinite(b.lidarDist[i]))
      viewWorst.lidar = Math.max(viewWorst.lidar, Math.abs(a.lidarDist[i]! - b.lidarDist[i]!));
    assert.ok(same, `${where}: LiDAR ray ${i} at ${a.lidarDist[i]} m in the bot's view, ${b.lidarDist[i]} m in the simulator's`);
    if (Number.isFinite(a.lidarDist[i]))
      assert.equal(a.lidarState[i], b.lidarState[i], `${where}: LiDAR ray ${i} hits state ${a.lidarState[i]} vs ${b.lidarState[i]}`);
  }
  viewWorst.poses++;
  viewWorst.names += Object.keys(si).length;
}

async function until(what: string, ready: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("plains with animals: the bot's protocol view (blocks and entities from flying-squid) gives the simulator's observation at every pose, and a changed block or a moved animal is caught", {
  timeout: 90_000,
}, async (t) => {
  const task = BUILTIN_TASKS['approach-tree']!;
  // A seed whose animals stand near the spawn, so that the look-around sees some.
  let seed = 1;
  const probe = new SimEnv(task);
  const f = new Float32Array(probe.featureSize);
  for (; seed < 200; seed++) {
    probe.reset(seed, f, 0);
    const p = probe.entity.pos;
    if (mobSpawns(seed).some((m) => Math.hypot(m.x - p.x, m.z - p.z) < 24)) break;
  }
  const simSide = { blocks: new SimWorld(task.world, seed) as BlockAccess, entities: mobSpawns(seed).map(makeMob) as ViewEntity[] };
  const env: MineflayerVecEnv = await createMineflayerEnv({ task, numEnvs: 1, seed, backend: 'mineflayer' }, { timeoutMs: 20_000 });
  try {
    const first = await env.reset([seed]);
    // The server has sent every animal and every chunk within 64 m (both arrive after the episode start).
    const allSent = () => {
      const pv = env.protocolView(0);
      const cx = Math.floor(pv.pose.x) >> 4,
        cz = Math.floor(pv.pose.z) >> 4;
      for (let dx = -4; dx <= 4; dx++) for (let dz = -4; dz <= 4; dz++) if (!pv.blocks.hasColumn(cx + dx, cz + dz)) return false;
      return pv.entities.length === simSide.entities.length;
    };
    await until('the animals and the chunks within 64 m', allSent, 15_000);
    assertSameView(env.protocolView(0), simSide, 'after reset');
    assert.deepEqual(
      nearestDict(
        (() => {
          const v = new ViewResult();
          const pv = env.protocolView(0);
          observeView(pv.blocks, pv.pose, pv.entities, v);
          return v;
        })(),
      ),
      first.obs[0]!.nearest,
      "the env's observation is this view",
    );
    // Look around (24 × 15°), up and down, and walk: every pose compared.
    const script: ActionName[] = [
      ...Array<ActionName>(24).fill('turn_left'),
      'turn_down',
      ...Array<ActionName>(8).fill('turn_right'),
      'turn_up',
      'turn_up',
      ...Array<ActionName>(8).fill('forward'),
      ...Array<ActionName>(4).fill('turn_right'),
      ...Array<ActionName>(6).fill('forward_jump'),
      'turn_down',
    ];
    let sawMob = 0;
    for (let i = 0; i < script.length; i++) {
      const r = await env.step(Int32Array.of(act(script[i]!)));
      assert.equal(r.info[0]!.done, false, `step ${i + 1}: the episode ended`);
      await until('the chunks within 64 m', allSent); // a new chunk column's chunks arrive after the move
      assertSameView(env.protocolView(0), simSide, `step ${i + 1} (${script[i]})`);
      if (Object.keys(r.obs[0]!.nearest).some((n) => loadSchema().mobs.has(n))) sawMob++;
    }
    assert.ok(sawMob > 0, 'the look-around saw animals (else the entity comparison proves nothing)');

    const measured = { ...viewWorst };
    // Negative controls: the comparison must fail when the server's world differs from the simulator's.
    // 1. A block the simulator does not have, 3 m ahead at eye level.
    const pv = env.protocolView(0);
    const bx = Math.floor(pv.pose.x - Math.sin(pv.pose.yaw) * 3),
      by = Math.floor(pv.pose.y + 1.62),
      bz = Math.floor(pv.pose.z - Math.cos(pv.pose.yaw) * 3);
    const server = env.embeddedServer(0)!;
    const diamond = mcData.blocksByName.diamond_ore!.defaultState!;
    const Vec3 = (await import('vec3')).Vec3;
    server.serv.setBlock(server.serv.overworld, new Vec3(bx, by, bz), diamond);
    await until('the block change to reach the bot', () => env.protocolView(0).blocks.stateAt(bx, by, bz) === diamond);
    assert.throws(() => assertSameView(env.protocolView(0), simSide, 'server block changed'), /visible names|diamond_ore|LiDAR/);
    server.serv.setBlock(server.serv.overworld, new Vec3(bx, by, bz), 0);
    await until('the block to be removed', () => env.protocolView(0).blocks.stateAt(bx, by, bz) === 0);
    assertSameView(env.protocolView(0), simSide, 'block restored');
    // 2. An animal moved 2 m on the server: turn until one is in view, move it, and the views must differ.
    let visibleMob: string | undefined;
    for (let k = 0; k < 24 && !visibleMob; k++) {
      const r = await env.step(Int32Array.of(act('turn_left')));
      visibleMob = Object.keys(r.obs[0]!.nearest).find((n) => loadSchema().mobs.has(n));
    }
    assert.ok(visibleMob, 'an animal in view for the moved-animal check');
    assertSameView(env.protocolView(0), simSide, 'before moving the animal');
    const near = env.protocolView(0);
    const target = near.entities
      .filter(
        (e) =>
          nearestDict(
            (() => {
              const v = new ViewResult();
              observeView(near.blocks, near.pose, [e], v);
              return v;
            })(),
          )[visibleMob!],
      )
      .sort((p, q) => Math.hypot(p.x - near.pose.x, p.z - near.pose.z) - Math.hypot(q.x - near.pose.x, q.z - near.pose.z))[0]!;
    const serverMob = (
      Object.values(server.serv.entities) as { type: string; position: { x: number; y: number; z: number }; teleport(p: unknown): void }[]
    ).find((e) => e.type !== 'player' && Math.abs(e.position.x - target.x) < 1e-6 && Math.abs(e.position.z - target.z) < 1e-6)!;
    assert.ok(serverMob, 'the animal on the server');
    serverMob.teleport(new Vec3(target.x + 2, target.y, target.z + 2));
    await until('the move to reach the bot', () =>
      env.protocolView(0).entities.some((e) => Math.abs(e.x - (target.x + 2)) < 1e-3 && Math.abs(e.z - (target.z + 2)) < 1e-3),
    );
    let caught = '';
    assert.throws(
      () => assertSameView(env.protocolView(0), simSide, 'server animal moved'),
      (e: Error) => {
        caught = e.message.split('\n')[0]!;
        return new RegExp(`${visibleMob}|visible names|LiDAR`).test(e.message);
      },
    );
    t.diagnostic(
      `bot's protocol view vs simulator: ${measured.poses} poses, ${measured.names} sightings compared; largest deviation: distance ${measured.distance} m, angle ${measured.angle} rad, LiDAR ${measured.lidar} m (seed ${seed}); caught: a diamond_ore placed on the server, and "${caught}"`,
    );
  } finally {
    await env.close();
  }
});
