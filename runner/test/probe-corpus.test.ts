// The probes on a corpus of realistic rewards (runner/test/fixtures/probe/corpus/): bug classes the lint rules
// were never told about (bug-*), rewards that pay a failure mode more than success (incentive-*), and clean
// rewards (clean-*, including the project's own rewards in runner/rewards/) on which nothing may be said. Each
// defect's line carries `// expect-probe: <code>`. Prints precision and recall of lint alone and of lint with
// probes, by flagged line (a warning or error on a marked line is a hit, anywhere else a false alarm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { checkReward, taskOfReward } from '../src/lint/check';
import type { RewardDiagnostic } from '../src/lint/rule';

const CORPUS = path.join(__dirname, 'fixtures', 'probe', 'corpus');
const PROJECT_REWARDS = path.join(__dirname, '..', 'rewards');

interface Score {
  hits: number;
  misses: number;
  falseAlarms: number;
}

const flaggedLines = (ds: RewardDiagnostic[]) =>
  new Set(ds.filter((d) => d.severity === 'error' || d.severity === 'warning').map((d) => d.range.start.line + 1));

function score(expected: Set<number>, flagged: Set<number>): Score {
  return {
    hits: [...expected].filter((l) => flagged.has(l)).length,
    misses: [...expected].filter((l) => !flagged.has(l)).length,
    falseAlarms: [...flagged].filter((l) => !expected.has(l)).length,
  };
}

const add = (a: Score, b: Score): Score => ({ hits: a.hits + b.hits, misses: a.misses + b.misses, falseAlarms: a.falseAlarms + b.falseAlarms });
const ZERO: Score = { hits: 0, misses: 0, falseAlarms: 0 };
const ratio = (n: number, d: number) => (d === 0 ? '—' : `${((100 * n) / d).toFixed(0)} % (${n}/${d})`);
const line = (name: string, s: Score, files: string) =>
  `${name.padEnd(16)} precision ${ratio(s.hits, s.hits + s.falseAlarms).padEnd(14)} recall ${ratio(s.hits, s.hits + s.misses).padEnd(14)} ${files}`;

test('the probe corpus: bug classes and paid failure modes flagged at their lines, clean rewards quiet', { timeout: 900_000 }, async () => {
  const files = [
    ...readdirSync(CORPUS)
      .filter((f) => f.endsWith('.reward.ts'))
      .map((f) => path.join(CORPUS, f)),
    ...readdirSync(PROJECT_REWARDS)
      .filter((f) => f.endsWith('.reward.ts') || f.endsWith('.reward.py'))
      .map((f) => path.join(PROJECT_REWARDS, f)),
  ];
  const byGroup = new Map<string, { lint: Score; probed: Score; files: number; filesFound: number; filesFoundLint: number }>();
  const report: string[] = [];
  const quietBroken: string[] = [];
  const projectWalkingAway: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const expected = new Set(text.split('\n').flatMap((l, i) => (/expect-probe:/.test(l) ? [i + 1] : [])));
    const group = path.basename(file).split('-')[0]!;
    const groupName = file.startsWith(PROJECT_REWARDS) ? 'project rewards' : group;
    const { diagnostics } = await checkReward(file, text, taskOfReward(file, text));
    const lintOnly = diagnostics.filter((d) => d.source === 'rewardsmith');
    const lint = score(expected, flaggedLines(lintOnly));
    const probed = score(expected, flaggedLines(diagnostics));
    const g = byGroup.get(groupName) ?? { lint: ZERO, probed: ZERO, files: 0, filesFound: 0, filesFoundLint: 0 };
    byGroup.set(groupName, {
      lint: add(g.lint, lint),
      probed: add(g.probed, probed),
      files: g.files + 1,
      filesFound: g.filesFound + (expected.size > 0 && probed.misses === 0 ? 1 : 0),
      filesFoundLint: g.filesFoundLint + (expected.size > 0 && lint.misses === 0 ? 1 : 0),
    });
    // The project's rewards pay walking away from their target nowhere (no walking-away warning, nor one listed among others).
    if (groupName === 'project rewards')
      for (const d of diagnostics)
        if (/walking away from the target/.test(d.message)) projectWalkingAway.push(`${path.basename(file)}:${d.range.start.line + 1}: ${d.message}`);
    for (const d of diagnostics)
      if ((d.severity === 'error' || d.severity === 'warning') && !expected.has(d.range.start.line + 1))
        quietBroken.push(`${path.relative(CORPUS, file)}:${d.range.start.line + 1}: ${d.code}: ${d.message}`);
    if (probed.misses > 0) report.push(`missed: ${path.basename(file)} lines ${[...expected].filter((l) => !flaggedLines(diagnostics).has(l)).join(', ')}`);
  }
  const total = [...byGroup.values()].reduce((a, g) => ({ lint: add(a.lint, g.lint), probed: add(a.probed, g.probed) }), { lint: ZERO, probed: ZERO });
  const lines = ['', 'probe corpus, by flagged line (warning or error):'];
  for (const [name, g] of byGroup) {
    const of = `${g.files} file(s)${name === 'clean' || name === 'project rewards' ? '' : `, ${g.filesFound} flagged at every marked line with probes, ${g.filesFoundLint} by lint alone`}`;
    lines.push(line(`${name}: lint`, g.lint, of), line(`${name}: + probes`, g.probed, ''));
  }
  lines.push(line('all: lint', total.lint, ''), line('all: + probes', total.probed, ''), ...report, ...quietBroken.map((q) => `false alarm: ${q}`));
  process.stdout.write(`${lines.join('\n')}\n`);
  // What the issue asks: ≥ 7 of 8 bug classes and ≥ 5 of 6 paid failure modes flagged at the right line, no false alarm.
  const bug = byGroup.get('bug')!;
  const incentive = byGroup.get('incentive')!;
  assert.ok(bug.filesFound >= Math.ceil((bug.files * 7) / 8), `bug classes flagged: ${bug.filesFound} of ${bug.files}`);
  assert.ok(incentive.filesFound >= Math.ceil((incentive.files * 5) / 6), `paid failure modes flagged: ${incentive.filesFound} of ${incentive.files}`);
  assert.equal(byGroup.get('clean')!.probed.falseAlarms, 0, quietBroken.join('\n'));
  assert.deepEqual(projectWalkingAway, []);
});
