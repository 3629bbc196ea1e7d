// The linter on a few hundred malformed versions of the bundled rewards (deletions, insertions,
// truncations, unbalanced brackets, unicode, runaway nesting), the way the language server meets them while
// someone types: one project per file, updated edit after edit. Every case must answer with diagnostics
// (an array, every range inside the file), never throw. `npm run bench lint` runs 10,000 and more.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RewardProject } from '../src/lint/analysis';
import { lintSnapshot, lintText, type RewardDiagnostic } from '../src/lint/rules';
import { bundledRewards, mutate, prng } from './helpers/lint-fuzz';

const CASES = 300;

test(`the linter answers every one of ${CASES} mutated bundled rewards, incrementally and from scratch`, { timeout: 600_000 }, () => {
  const rewards = bundledRewards();
  assert.ok(rewards.length >= 7);
  const random = prng(20261123);
  const projects = rewards.map((r) => new RewardProject(`/fuzz/${r.name}`, r.text));
  try {
    for (let n = 0; n < CASES; n++) {
      const k = n % rewards.length;
      const { text, kinds } = mutate(rewards[k]!.text, random);
      const label = `case ${n} (${rewards[k]!.name}: ${kinds.join(', ')})`;
      let found: RewardDiagnostic[];
      try {
        projects[k]!.update(text);
        found = lintSnapshot(projects[k]!.snapshot());
      } catch (err) {
        assert.fail(`${label} threw: ${(err as Error).stack}`);
      }
      assert.ok(Array.isArray(found), label);
      const lines = text.split('\n').length;
      for (const d of found) assert.ok(d.range.start.line >= 0 && d.range.start.line < lines + 1 && d.message.length > 0, `${label}: ${JSON.stringify(d)}`);
      // Every tenth case also from scratch, as `rewardsmith lint` sees a file.
      if (n % 10 === 0) assert.ok(Array.isArray(lintText(`/fuzz/fresh-${rewards[k]!.name}`, text)), label);
    }
  } finally {
    for (const p of projects) p.dispose();
  }
});
