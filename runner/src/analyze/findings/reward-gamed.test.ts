import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import type { EpisodeRecord } from '../../records';
import { resolveTask } from '../../tasks';
import { findFailures } from '../findings';
import { rewardGamed } from './reward-gamed';

testFinding(rewardGamed, {
  quiet: [{ name: 'one success is no yardstick for the returns', run: 'spin-in-place', task: 'approach-tree', rewardNames: ['oak_log'] }],
  finds: [
    {
      name: 'the weak approach-tree reward: failing pays more than succeeding',
      run: 'weak-tree',
      task: 'approach-tree',
      rewardNames: ['oak_log'],
      findings: [
        {
          id: 'reward-gamed',
          episodeIds: [1, 2, 3, 4, 7, 8, 9, 11, 12, 14, 15, 16, 17, 18, 19, 21, 22, 23, 25, 27, 28, 29],
          message:
            /^The reward is gamed: in 22 failed episodes of 22 \(100 %\) it paid for not finishing\. Failing pays more than succeeding: mean return 146\.5 over 22 failed episodes, 68\.1 over 8 successful ones; 22 failed episodes earned more than the successful mean\.$/,
        },
      ],
    },
  ],
});

describe('analyzer finding reward-gamed: returns', () => {
  test('failed episodes whose last steps look like an honest approach but that earned more than the successes: gamed', () => {
    // Measured on seed 7 from the foundation: 34 of 60 failed episodes walked ~290 m, had the log in view and were
    // closing in at walking pace in their last 32 steps, and earned 100–184 against the successes' mean of 55:
    // the weak reward pays each approach again after turning away. Nothing in the last steps shows it; the return does.
    const approach = (episode: number, success: boolean, ret: number): EpisodeRecord => {
      const steps = success ? 300 : 2000;
      const lastSteps = Array.from({ length: 32 }, (_, i) => ({
        step: steps - 31 + i,
        action: 'forward',
        reward: 0.1,
        position: [i * 0.2, 64, 0, 0, 0] as [number, number, number, number, number],
        inventory_change: {},
        nearest: { oak_log: [success ? 7 - i * 0.2 : 20 - i * 0.2, 0, 0] as [number, number, number] },
        health: 10,
      }));
      const path: [number, number, number][] = Array.from({ length: steps + 1 }, (_, i) => [Math.sin(i / 40) * 20, 64, (i % 400) * 0.1]);
      const last = lastSteps[lastSteps.length - 1]!;
      return {
        episode,
        seed: 1000 + episode,
        success,
        steps,
        died: false,
        deathCause: null,
        truncated: !success,
        return: ret,
        distanceMoved: 50,
        lastSteps,
        final: { health: 10, inventory: {}, nearest: last.nearest, blockUnderFoot: 'grass_block', died: false },
        path,
      };
    };
    const episodes = [
      approach(0, true, 40),
      approach(1, true, 55),
      approach(2, true, 70),
      approach(3, false, 160),
      approach(4, false, 140),
      approach(5, false, 30),
    ];
    const findings = findFailures(episodes, resolveTask('approach-tree'), true, { names: new Set(['oak_log']) });
    const gamed = findings.find((f) => f.id === 'reward-gamed');
    assert.ok(gamed, findings.map((f) => f.id).join(', '));
    assert.deepEqual(gamed.episodeIds, [3, 4], 'the two failures that out-earned the successes, not the one that earned less');
    assert.match(
      gamed.message,
      /Failing pays more than succeeding: mean return 110 over 3 failed episodes, 55 over 3 successful ones; 2 failed episodes earned more than the successful mean/,
    );
    assert.match(gamed.evidence[0]!.note, /^return 160 over 2000 steps without success, above the 55 mean of the 3 successful episodes; walked \d+ m/);
    assert.equal(gamed.patch?.kind, 'approach-record');
  });
});
