import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { applyWithPatch, lintProblems, VARIABLE_DENSE_REWARD } from '../../../test/helpers/patch-check';
import { tempDir } from '../../../test/helpers/tmp';
import { probeBank } from '../../probe/index';
import { compileRewardFile } from '../../reward/index';
import type { StepObservation } from '../../schema';
import { resolveTask } from '../../tasks';
import { patchReward, preparePatches } from '../patches';
import { denseSign, rewardsOn } from '../rerun';
import { timeoutTargetUnseen } from './timeout-target-unseen';

testFinding(timeoutTargetUnseen, {
  quiet: [{ name: 'a spinning agent with the tree in view', run: 'spin-in-place', task: 'approach-tree' }],
  finds: [
    {
      name: 'a random walk that never saw a cow',
      run: 'sparse-random',
      task: 'approach-cow',
      findings: [
        {
          id: 'timeout-target-unseen',
          episodeIds: [1, 2, 3, 4],
          message:
            /^4 failed episodes of 6 \(67 %\) ran out of time without the target \(cow\) in view at the end; they visited 11 distinct 4 m cells on average\.$/,
        },
      ],
    },
  ],
});

describe('analyzer finding timeout-target-unseen: its patch', () => {
  const tmp = tempDir('rewardsmith-timeout-');
  test('a reward whose dense term is a variable gets the exploration bonus just before the return', () => {
    const file = path.join(tmp, 'variable-explore.reward.ts');
    const text = VARIABLE_DENSE_REWARD + '\n';
    writeFileSync(file, text);
    const p = patchReward(file, text, { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log', 'birch_log'], why: 'explore.' });
    assert.match(p.patched, /GLOBAL_DATA\.visited_cells\.add\(cell_key\);\n +dense = 1;\n +\}\n +\}\n  return Math\.sign\(sparse\)/);
    assert.equal(applyWithPatch(file, p.diff), p.patched);
    compileRewardFile(file, p.patched);
    assert.deepEqual(lintProblems(file, p.patched), lintProblems(file, text));
    // Applied twice, the second analysis finds the bonus already there.
    assert.throws(() => patchReward(file, p.patched, { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log'], why: 'again.' }), /already pays/);
  });
});

// A reward whose dense term pays nothing of its own, in each language: what the patched file pays is the patches'.
const PLAIN_DENSE = {
  'plain.reward.ts': [
    '// task: approach-cow',
    'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {',
    '  function dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA) {',
    '    return 0;',
    '  }',
    "  const cow = current_nearest_blocks['cow'];",
    '  const sparse = cow !== undefined && cow[0] < 2 ? 1 : 0;',
    '  return Math.sign(sparse) * 1 + Math.sign(dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA)) * 0.1;',
    '}',
    '',
  ].join('\n'),
  'plain.reward.py': [
    '# task: approach-cow',
    'import numpy as np',
    '',
    '',
    'def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):',
    '    def dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA):',
    '        return 0',
    '',
    '    cow = current_nearest_blocks.get("cow")',
    '    sparse = 1 if cow is not None and cow[0] < 2 else 0',
    '    return np.sign(sparse) * 1 + np.sign(dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA)) * 0.1',
    '',
  ].join('\n'),
};

describe('analyzer finding timeout-target-unseen: its patch composed with the approach patch', () => {
  const tmp = tempDir('rewardsmith-timeout-compose-');
  const explore = { kind: 'exploration-bonus' as const, cellSize: 4, targets: ['cow'], why: 'explore.' };
  const approach = { kind: 'approach-record' as const, targets: ['cow'], step: 0.1, why: 'approach.' };
  // Real simulator episodes of approach-cow (the probe bank: successes, a random policy, failure modes).
  const episodes = probeBank(resolveTask('approach-cow')).episodes.map((e) => e.obs);
  const cell = (o: StepObservation) => `${Math.floor(o.position[0] / 4)},${Math.floor(o.position[2] / 4)}`;

  test('with two targets, the exploration and approach patches read the same list of target names, in either order (TypeScript and Python)', async () => {
    const targets = ['cow', 'pig'];
    for (const [name, text] of Object.entries(PLAIN_DENSE)) {
      await preparePatches(name);
      for (const order of [
        [explore, approach],
        [approach, explore],
      ]) {
        const patched = order.reduce((t, req) => patchReward(path.join(tmp, name), t, { ...req, targets }).patched, text);
        const lists = patched.match(/^(const )?TARGET_NAMES\w* = .*$/gm) ?? [];
        assert.deepEqual(
          lists.map((l) => l.replace(/ *(\/\/|#).*/, '')),
          [name.endsWith('.py') ? 'TARGET_NAMES = ["cow", "pig"]' : "const TARGET_NAMES = ['cow', 'pig'];"],
          `${name}, ${order[0]!.kind} first:\n${patched}`,
        );
        assert.match(
          patched,
          name.endsWith('.py')
            ? /^ +if nearest_target\(current_nearest_blocks\) is not None:$/m
            : /^ +if \(nearest_target\(current_nearest_blocks\) !== undefined\) GLOBAL_DATA\.target_seen = true;/m,
        );
      }
    }
  });

  for (const [name, text] of Object.entries(PLAIN_DENSE)) {
    for (const order of [
      [explore, approach],
      [approach, explore],
    ]) {
      test(`${name}, ${order[0]!.kind} first: searching pays a new cell only until a cow was first seen (re-run in the sandbox on the probe bank's episodes)`, async () => {
        await preparePatches(name);
        const file = path.join(tmp, `${order[0]!.kind}-first.${name}`);
        const patched = order.reduce((t, req) => patchReward(file, t, req).patched, text);
        writeFileSync(file, patched);
        const rewards = await rewardsOn(file, episodes, false);
        let searched = 0;
        const afterSight: string[] = [];
        episodes.forEach((obs, e) => {
          let seen = obs[0]!.nearest.cow !== undefined;
          const visited = new Set([cell(obs[0]!)]);
          rewards[e]!.forEach((reward, i) => {
            const [now, before] = [obs[i + 1]!, obs[i]!];
            const fresh = !visited.has(cell(now));
            visited.add(cell(now));
            seen ||= now.nearest.cow !== undefined;
            if (now.nearest.cow !== undefined || before.nearest.cow !== undefined || !fresh) return;
            if (!seen) searched += denseSign(reward) > 0 ? 1 : 0;
            else if (denseSign(reward) > 0) afterSight.push(`episode ${e} step ${i + 1}`);
          });
        });
        assert.ok(searched > 10, `the search pays new cells before a cow is seen (${searched} steps)`);
        assert.deepEqual(afterSight, [], 'a new cell paid after a cow was seen and lost');
      });
    }
  }
});
