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
import { SimEnv } from '../src/env/sim/sim';
import { createMineflayerEnv } from '../src/env/mineflayer/index';
import type { StepObservation } from '../src/schema';

const SEED = 7;
const act = (a: ActionName) => GAME_FACTS.actions.indexOf(a);
// Walk into the spawn room's wall, look down and dig the stone under the wall, walk into the gap, turn,
// jump, strafe and back off: every movement action and a full dig (iron pickaxe on stone: 8 ticks).
const SCRIPT: ActionName[] = [
  ...Array<ActionName>(6).fill('forward'),
  'turn_down', 'turn_down', 'turn_down',
  ...Array<ActionName>(10).fill('attack'),
  'turn_up', 'turn_up', 'turn_up',
  ...Array<ActionName>(6).fill('forward'),
  'turn_right', 'turn_right', 'turn_right', 'turn_right',
  ...Array<ActionName>(6).fill('forward'),
  'jump', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op', 'no_op',
  ...Array<ActionName>(4).fill('forward_jump'),
  ...Array<ActionName>(5).fill('back'),
  ...Array<ActionName>(4).fill('move_left'),
  ...Array<ActionName>(4).fill('move_right'),
  'turn_left', 'turn_left', 'turn_up',
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

test('the same scripted actions on the same seed give the same positions and observations in the simulator and on flying-squid', { timeout: 90_000 }, async (t) => {
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
    const [x0, , z0] = simObs[0]!.position, [x1, , z1] = simObs.at(-1)!.position;
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
    ...Array<ActionName>(15).fill('forward'), 'turn_left', 'turn_left', ...Array<ActionName>(10).fill('forward_jump'),
    'turn_down', ...Array<ActionName>(10).fill('forward'), 'turn_right', ...Array<ActionName>(5).fill('move_right'),
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
    const [x0, , z0] = simObs[0]!.position, [x1, , z1] = simObs.at(-1)!.position;
    assert.ok(Math.hypot(x1 - x0, z1 - z0) > 3, 'the walk covers ground');
    t.diagnostic(`largest deviation so far: position ${worst.position}, distance ${worst.distance} m, angle ${worst.angle} rad`);
  } finally {
    await env.close();
  }
});
