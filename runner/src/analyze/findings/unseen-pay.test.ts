import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { FIXTURE_RUNS } from '../../../test/helpers/finding-tester';
import { applyWithPatch } from '../../../test/helpers/patch-check';
import { tempDir } from '../../../test/helpers/tmp';
import { readEpisodes } from '../../records';
import { compilePythonReward, compileRewardFile, isPythonFile } from '../../reward/index';
import { resolveTask } from '../../tasks';
import type { FindingContext } from '../finding';
import { targetNames } from '../finding';
import { patchReward, PatchUnavailable, preparePatches } from '../patches';
import { rerunReward } from '../rerun';
import { unseenPay } from './unseen-pay';

const ROOT = path.resolve(__dirname, '../../../..');
const COW = resolveTask('approach-cow');
// Six approach-cow episodes under a reward that pays "+1 whenever the agent moved" when no cow is closer
// (runner/test/fixtures/runs/moved-bonus.reward.ts): the agent walks back and forth.
const RUN = path.join(FIXTURE_RUNS, 'back-and-forth');
const episodes = readEpisodes(RUN);
const failed = episodes.filter((e) => !e.success);

/** The detector's context with `file` re-run in the sandbox on the failed episodes' recorded steps. */
async function contextWith(file: string): Promise<FindingContext> {
  const r = await rerunReward(file, failed, false);
  if ('error' in r) throw new Error(r.error);
  return { episodes, failed, task: COW, reward: { names: new Set(['cow']), rerun: r.steps, rerunSource: 'sandbox' } };
}

const found = (ctx: FindingContext) => [unseenPay.find(ctx)].flat().filter((f) => !!f);

describe('analyzer finding unseen-pay', () => {
  const tmp = tempDir('rewardsmith-finding-unseen-pay-');

  test('finds: a "keep moving" bonus that pays the agent for walking about with no cow in view', async () => {
    const [f] = found(await contextWith(path.join(RUN, 'reward.ts')));
    assert.ok(f);
    assert.deepEqual(f.episodeIds, [0, 3]);
    assert.match(
      f.message,
      /^The reward pays for not finishing while no target is in view: re-run in the sandbox .*, the dense term was positive on 84 % of the 62 steps with no cow in view that entered no new 4 m cell; in 2 failed episodes of 6 \(33 %\) it paid on most of them\.$/,
    );
    assert.ok(f.evidence.every((e) => f.episodeIds.includes(e.episode)));
  });

  test('quiet: the bundled approach-cow reward, which pays only new cells with no cow in view, re-run on the same episodes', async () => {
    assert.deepEqual(found(await contextWith(path.join(ROOT, 'runner/rewards/approach-cow.dense.reward.ts'))), []);
  });

  for (const [file, language] of [
    [path.join(RUN, 'reward.ts'), 'TypeScript'],
    [path.join(ROOT, 'runner/test/fixtures/rewards/python/moved-bonus.reward.py'), 'Python'],
  ] as const)
    test(`the ${language} patch, re-run in the sandbox on the same recorded steps: nothing pays with no cow in view but new ground; with a cow in view the reward is as written`, async () => {
      await preparePatches(file);
      await patchedRerun(file);
    });

  /** Patches `file` for the finding its re-run shows, re-runs the patched file on the same steps and checks what changed. */
  async function patchedRerun(file: string): Promise<void> {
    const text = readFileSync(file, 'utf8');
    const [f] = found(await contextWith(file));
    assert.ok(f, `${path.basename(file)}: the finding on its own re-run`);
    assert.deepEqual(f.episodeIds, [0, 3]);
    const p = patchReward(file, text, f.patch!);
    assert.equal(applyWithPatch(file, p.diff), p.patched);
    const patched = path.join(tmp, `moved-bonus.patched${path.extname(file) === '.py' ? '.reward.py' : '.reward.ts'}`);
    writeFileSync(patched, p.patched);
    if (isPythonFile(patched)) compilePythonReward(patched, p.patched);
    else compileRewardFile(patched);
    const before = await contextWith(file);
    const after = await contextWith(patched);
    assert.deepEqual(found(after), [], 'the finding is gone on the same episodes');
    const targets = targetNames(COW);
    let inView = 0;
    for (const ep of failed) {
      const was = new Map(before.reward!.rerun!.get(ep.episode)!.map((r) => [r.step, r]));
      const now = after.reward!.rerun!.get(ep.episode)!;
      for (const r of now) {
        const i = ep.lastSteps.findIndex((s) => s.step === r.step);
        const seen = [ep.lastSteps[i]!, ep.lastSteps[i - 1]!].some((s) => targets.some((t) => s.nearest[t]));
        if (seen) {
          inView++;
          assert.equal(r.reward, was.get(r.step)!.reward, `episode ${ep.episode} step ${r.step}: a cow in view, the reward as written`);
        } else if (r.dense > 0) {
          // The only pay left with no cow in view is the first visit to a 4 m cell, counted from the first step re-run.
          const [x, , z] = ep.lastSteps[i]!.position;
          const cell = `${Math.floor(x / 4)},${Math.floor(z / 4)}`;
          const earlier = ep.lastSteps.slice(1, i).some((s) => `${Math.floor(s.position[0] / 4)},${Math.floor(s.position[2] / 4)}` === cell);
          assert.ok(!earlier, `episode ${ep.episode} step ${r.step}: paid with no cow in view in a cell visited before`);
        } else assert.ok(r.dense <= 0);
      }
    }
    assert.ok(inView > 0, 'some steps had a cow in view');
  }

  test('the patch wraps an exported dense of the dense/sparse layout, keeps its export, and is not applied twice', () => {
    const file = path.join(ROOT, 'runner/test/fixtures/rewards/weak-approach-tree.dense-sparse.reward.ts');
    const req = { kind: 'unseen-pay' as const, targets: ['oak_log', 'birch_log'], cellSize: 4, why: 'test.' };
    const p = patchReward(file, readFileSync(file, 'utf8'), req);
    assert.match(
      p.patched,
      /^export function dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA\) \{$/m,
    );
    assert.match(
      p.patched,
      /^function dense_as_written\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions\) \{$/m,
    );
    const out = path.join(tmp, 'dense-sparse.patched.reward.ts');
    writeFileSync(out, p.patched);
    compileRewardFile(out);
    assert.throws(
      () => patchReward(out, p.patched, req),
      (e: Error) => e instanceof PatchUnavailable && /already pays only new ground/.test(e.message),
    );
  });

  test('in Python, the patch wraps a top-level dense of the dense/sparse layout with the contract prefix it needs, and is not applied twice', async () => {
    const file = path.join(ROOT, 'runner/test/fixtures/rewards/python/dense-sparse.reward.py');
    await preparePatches(file);
    const req = { kind: 'unseen-pay' as const, targets: ['oak_log', 'birch_log'], cellSize: 4, why: 'test.' };
    const p = patchReward(file, readFileSync(file, 'utf8'), req);
    assert.match(p.patched, /^def dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA\):$/m);
    assert.match(p.patched, /^def dense_as_written\(current_nearest_blocks, previous_nearest_blocks\):$/m);
    assert.match(p.patched, /^ {4}dense_as_written_value = dense_as_written\(current_nearest_blocks, previous_nearest_blocks\)$/m);
    const out = path.join(tmp, 'dense-sparse.patched.reward.py');
    writeFileSync(out, p.patched);
    compilePythonReward(out, p.patched);
    assert.throws(
      () => patchReward(out, p.patched, req),
      (e: Error) => e instanceof PatchUnavailable && /already pays only new ground/.test(e.message),
    );
  });

  test('refuses the dense terms it cannot wrap, for the same reason in TypeScript and Python', async () => {
    await preparePatches('x.reward.py');
    const contract = 'current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA';
    const req = { kind: 'unseen-pay' as const, targets: ['cow'], cellSize: 4, why: 'test.' };
    const cases: [string, string, string, RegExp][] = [
      [
        'a dense variable',
        `export function reward_function(${contract}) {\n  let d = 0;\n  if (health < 5) d = -1;\n  return Math.sign(0) * 1 + Math.sign(d) * 0.1;\n}\n`,
        `def reward_function(${contract}):\n    d = 0\n    if health < 5:\n        d = -1\n    return np.sign(0) * 1 + np.sign(d) * 0.1\n`,
        /the dense term is a variable, not a function/,
      ],
      [
        'a parameter that is not a plain name',
        `export function reward_function(${contract}) {\n  function dense(...rest) {\n    return rest.length;\n  }\n  return Math.sign(0) * 1 + Math.sign(dense(1)) * 0.1;\n}\n`,
        `def reward_function(${contract}):\n    def dense(*rest):\n        return len(rest)\n    return np.sign(0) * 1 + np.sign(dense(1)) * 0.1\n`,
        /the dense function has a parameter that is not a plain name \(destructured, rest or star\), so it cannot be wrapped/,
      ],
      [
        'a nested dense whose enclosing function lacks parameters',
        'export function reward_function(current_nearest_blocks, previous_nearest_blocks) {\n  function dense() {\n    return 1;\n  }\n  return Math.sign(0) * 1 + Math.sign(dense()) * 0.1;\n}\n',
        'def reward_function(current_nearest_blocks, previous_nearest_blocks):\n    def dense():\n        return 1\n    return np.sign(0) * 1 + np.sign(dense()) * 0.1\n',
        /enclosing function does not take past_agent_positions, GLOBAL_DATA$/,
      ],
      [
        "a top-level dense whose parameters are not the contract's prefix",
        `export function dense(health) {\n  return health;\n}\nexport function reward_function(${contract}) {\n  return Math.sign(0) * 1 + Math.sign(dense(health)) * 0.1;\n}\n`,
        `def dense(health):\n    return health\n\n\ndef reward_function(${contract}):\n    return np.sign(0) * 1 + np.sign(dense(health)) * 0.1\n`,
        /parameters are not the contract's prefix \(current_nearest_blocks, .*\), so it cannot be wrapped$/,
      ],
    ];
    for (const [what, typescript, python, reason] of cases) {
      const refusals = [
        ['refused.reward.ts', typescript],
        ['refused.reward.py', python],
      ].map(([name, text]) => {
        try {
          patchReward(path.join(tmp, name!), text!, req);
        } catch (e) {
          if (e instanceof PatchUnavailable) return e.message;
          throw e;
        }
        return 'patched';
      });
      assert.match(refusals[0]!, reason, `TypeScript, ${what}`);
      assert.equal(refusals[1], refusals[0], `Python, ${what}: the same reason`);
    }
  });
});
