// The simulator's output, bit for bit: every observation, info and policy feature vector of a few hundred
// random-policy steps of batches of envs (plains walking, plains attacking, underground with fluids and
// monsters; short episodes, so envs reset onto new worlds mid-run) hashes to the value recorded from the code
// before the simulator's allocation work (main 820a9e3). A speed change that alters a single bit of what a
// reward or the policy sees, or serves a chunk of an earlier world after a reset, changes the hash.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { GAME_FACTS } from '../src/schema';
import { Mulberry32 } from '../src/seeds';
import { SimBatch } from '../src/env/sim/vec';
import { BUILTIN_TASKS } from '../src/tasks';

/** JSON with −0 kept apart from 0 (JSON writes both as 0). */
const exact = (_key: string, v: unknown) => (Object.is(v, -0) ? '-0' : v);

/** sha256 (first 16 hex digits) of `steps` steps of `envs` envs of `taskId`, episodes cut at `maxSteps`. */
function simulatorHash(taskId: string, envs: number, steps: number, maxSteps: number): { hash: string; resets: number } {
  const batch = new SimBatch({ ...BUILTIN_TASKS[taskId]!, maxSteps }, envs, 0);
  const h = createHash('sha256');
  const first = batch.reset(Array.from({ length: envs }, (_, i) => 1000 + i));
  h.update(JSON.stringify(first.obs, exact));
  h.update(new Uint8Array(first.features.buffer));
  const rng = new Mulberry32(99);
  let resets = 0;
  for (let k = 0; k < steps; k++) {
    const actions = Int32Array.from({ length: envs }, () => Math.floor(rng.next() * GAME_FACTS.actions.length));
    const r = batch.step(actions);
    h.update(JSON.stringify([r.obs, r.info, r.resetObs], exact));
    h.update(new Uint8Array(r.features.buffer));
    for (const t of r.terminalFeatures) if (t) h.update(new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
    resets += r.resetObs.filter((o) => o !== null).length;
  }
  return { hash: h.digest('hex').slice(0, 16), resets };
}

const RECORDED: [task: string, envs: number, steps: number, maxSteps: number, hash: string][] = [
  ['approach-tree', 12, 400, 150, '0634a24abb1e27fe'],
  ['attack-cow', 12, 300, 110, '74ceffc5111ecddc'],
  ['explore-diamond', 6, 300, 110, '8b84474df7a55204'],
];

for (const [task, envs, steps, maxSteps, recorded] of RECORDED) {
  test(`${task}: ${envs} envs × ${steps} random steps (episodes of ${maxSteps}, resets included) give the recorded observations, infos and features bit for bit`, () => {
    const { hash, resets } = simulatorHash(task, envs, steps, maxSteps);
    assert.ok(resets >= envs, `every env reset at least once (${resets} resets)`);
    assert.equal(hash, recorded);
  });
}
