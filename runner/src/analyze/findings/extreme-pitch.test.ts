import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { applyWithPatch, lintProblems } from '../../../test/helpers/patch-check';
import { tempDir } from '../../../test/helpers/tmp';
import { probeBank } from '../../probe';
import { replayBank } from '../../probe/replay';
import { resolveTask } from '../../tasks';
import { patchReward } from '../patches';
import { extremePitch, type PitchLimitRequest } from './extreme-pitch';

testFinding(extremePitch, {
  quiet: [{ name: 'walking back and forth with a level view', run: 'back-and-forth', task: 'approach-cow' }],
  finds: [
    {
      name: 'looking at the floor',
      run: 'look-down',
      task: 'approach-pig',
      findings: [
        {
          id: 'extreme-pitch',
          episodeIds: [0, 1, 2, 3, 4, 5],
          message:
            /^6 failed episodes of 6 \(100 %\) held the pitch beyond ±30° for 16\+ steps with no pig in view \(6 looking down\), 32 steps on average out of the last 32/,
        },
      ],
    },
  ],
});

describe("analyzer finding extreme-pitch: its patch, replayed on approach-cow's probe bank", () => {
  const tmp = tempDir('rewardsmith-pitch-');
  const ROOT = path.resolve(__dirname, '../../../..');
  const COW = resolveTask('approach-cow');
  const file = path.join(ROOT, 'runner/rewards/approach-cow.dense.reward.ts');
  const text = readFileSync(file, 'utf8');
  const LIMIT = 15;
  const patched = (req: PitchLimitRequest, name: string) => {
    const p = patchReward(file, text, req);
    assert.equal(applyWithPatch(file, p.diff), p.patched);
    assert.deepEqual(lintProblems(file, p.patched), lintProblems(file, text));
    const out = path.join(tmp, name);
    writeFileSync(out, p.patched);
    return out;
  };

  test('a steep pitch with the cow in view is paid as written; staring down or up with no cow in view costs', async () => {
    const bank = probeBank(COW);
    const why = 'test.';
    const before = await replayBank(file, COW, bank);
    const after = await replayBank(patched({ kind: 'pitch-limit', degrees: LIMIT, targets: ['cow'], why }, 'spared.reward.ts'), COW, bank);
    // The old patch, a limit whatever is in view (suggestions recorded before targets were named still ask for it).
    const always = await replayBank(patched({ kind: 'pitch-limit', degrees: LIMIT, why }, 'always.reward.ts'), COW, bank);
    assert.equal(after.failure, null);
    let steepAtCow = 0,
      costlyAtCow = 0,
      steepUnseen = 0;
    bank.episodes.forEach((ep, e) => {
      const was = before.traces[e]!.values,
        now = after.traces[e]!.values,
        old = always.traces[e]!.values;
      // values[t] is call t + 1's reward, made from obs[t + 1] (the calls past `recorded` repeat a cut episode's tail).
      for (let t = 0; t < after.traces[e]!.recorded; t++) {
        const o = ep.obs[t + 1]!;
        if (Math.abs(o.position[4]) <= LIMIT) continue;
        if (o.nearest.cow) {
          steepAtCow++;
          assert.equal(now[t], was[t], `${ep.behaviour} episode ${e}, call ${t}: a cow in view, paid as written`);
          if (old[t]! < was[t]!) costlyAtCow++;
        } else {
          steepUnseen++;
          // sign(sparse) · 1 + sign(dense) · 0.1 with dense −1: the sparse part as written, the dense part −0.1.
          assert.ok(
            Math.abs(now[t]! - (Math.round(was[t]!) - 0.1)) < 1e-9,
            `${ep.behaviour} episode ${e}, call ${t}: no cow in view, dense −1 (${now[t]} for ${was[t]})`,
          );
        }
      }
    });
    assert.ok(steepAtCow > 0, 'some probe episodes look down or up with the cow in view');
    assert.ok(costlyAtCow > 0, 'a limit that holds with the cow in view costs those steps');
    assert.ok(steepUnseen > 0, 'the looking-down and looking-up probes stare with no cow in view');
  });
});
