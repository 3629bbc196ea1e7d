// FindingTester for the analyzer's findings (the lint rules' RuleTester pattern): each finding's test file,
// beside it, lists recorded runs (runner/test/fixtures/runs, rolled out in the simulator) the detector must
// stay quiet on and runs it must find, with the failed episodes each finding explains. A finding that asks for
// a patch gets it written into a bundled reward: it must apply with GNU patch and the extension's applier,
// lint clean (patchReward refuses one that adds a diagnostic) and compile in the reward runtime.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { FindingContext, FindingOf, FindingRule } from '../../src/analyze/finding';
import { patchReward, type PatchRequest } from '../../src/analyze/patches';
import { readEpisodes } from '../../src/records';
import { compileRewardFile } from '../../src/reward/index';
import { resolveTask, type TaskSpec } from '../../src/tasks';
import { applyWithPatch } from './patch-check';
import { tempDir } from './tmp';

const ROOT = path.resolve(__dirname, '../../..');
export const FIXTURE_RUNS = path.join(ROOT, 'runner/test/fixtures/runs');

export interface RunCase {
  name: string;
  /** A fixture run folder under runner/test/fixtures/runs. */
  run: string;
  /** The task the run's episodes are judged against: a built-in id, or a task of its own. */
  task: string | TaskSpec;
  /** The names the reward file reads (RewardFacts.names); absent: no reward file. */
  rewardNames?: string[];
}

export interface FindsCase extends RunCase {
  /** One entry per finding the detector reports, in its order: id, the failed episodes it explains, a pattern of its message. */
  findings: { id: string; episodeIds: number[]; message: RegExp }[];
  /** The reward file the findings' patches are written into, relative to the repository; default: the run's copy of the reward it trained, as `rewardsmith analyze` does. */
  patchInto?: string;
}

/** The detector's context for a fixture run. */
export function contextOf(c: RunCase): FindingContext {
  const episodes = readEpisodes(path.join(FIXTURE_RUNS, c.run));
  return {
    episodes,
    failed: episodes.filter((e) => !e.success),
    task: typeof c.task === 'string' ? resolveTask(c.task) : c.task,
    reward: c.rewardNames ? { names: new Set(c.rewardNames) } : undefined,
  };
}

const found = (rule: FindingRule, ctx: FindingContext): FindingOf<string, PatchRequest>[] =>
  [rule.find(ctx)].flat().filter((f): f is FindingOf<string, PatchRequest> => !!f);

export function testFinding(rule: FindingRule, cases: { quiet: RunCase[]; finds: FindsCase[] }): void {
  describe(`analyzer finding ${rule.meta.id}`, () => {
    const tmp = tempDir(`rewardsmith-finding-${rule.meta.id}-`);
    it('has its metadata', () => {
      assert.ok(rule.meta.kinds.length > 0 && rule.meta.description.length > 0);
    });
    for (const c of cases.quiet) {
      it(`quiet: ${c.name}`, () => {
        assert.deepEqual(
          found(rule, contextOf(c)).map((f) => f.id),
          [],
        );
      });
    }
    for (const c of cases.finds) {
      it(`finds: ${c.name}`, () => {
        const ctx = contextOf(c);
        const findings = found(rule, ctx);
        assert.deepEqual(
          findings.map((f) => ({ id: f.id, episodeIds: f.episodeIds })),
          c.findings.map((f) => ({ id: f.id, episodeIds: f.episodeIds })),
        );
        findings.forEach((f, i) => {
          assert.match(f.message, c.findings[i]!.message);
          assert.ok(rule.meta.kinds.includes(f.kind), `${f.id}: its kind ${f.kind} is one the detector declares`);
          assert.ok(
            f.evidence.every((e) => f.episodeIds.includes(e.episode)),
            `${f.id}: evidence from the episodes it explains`,
          );
          assert.ok(!!f.patch !== !!f.noPatch, `${f.id}: asks for a patch or says why none is safe`);
          if (!f.patch) return;
          const file = c.patchInto ? path.join(ROOT, c.patchInto) : path.join(FIXTURE_RUNS, c.run, 'reward.ts');
          const p = patchReward(file, readFileSync(file, 'utf8'), f.patch);
          assert.equal(applyWithPatch(file, p.diff), p.patched);
          const out = path.join(tmp, `${f.id}.reward.ts`);
          writeFileSync(out, p.patched);
          compileRewardFile(out); // throws a located RewardError if the reward runtime rejects the patched file
        });
      });
    }
  });
}
