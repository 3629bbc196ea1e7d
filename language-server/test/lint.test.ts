// The reward-file rules on a corpus of realistic reward files: clean ones (ours, the paper's examples ported,
// the bundled runner/rewards) must get no error or warning; buggy ones carry `// expect: rule-id` on each
// defect's line. Measures precision and recall, checks that every quick fix removes what it fixes, and runs
// the headless `rewardsmith lint` CLI.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { RewardProject } from '../../runner/src/lint/analysis';
import { lintSnapshot, lintText, type RewardDiagnostic } from '../../runner/src/lint/rules';
import { applyEdits } from '../../runner/test/helpers/rule-tester';
import { tempDir } from '../../runner/test/helpers/tmp';
import { cliSession } from '../../runner/test/helpers/cli-all';

const root = path.join(__dirname, '..', '..');
const fixtures = path.join(__dirname, 'fixtures');
const rewardFile = /\.reward\.(ts|js)$/;

function filesIn(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => rewardFile.test(f))
        .sort()
        .map((f) => path.join(dir, f))
    : [];
}

const clean = [...filesIn(path.join(fixtures, 'clean')), ...filesIn(path.join(root, 'runner', 'rewards'))];
const buggy = filesIn(path.join(fixtures, 'buggy'));

/** `line:code` for every `// expect: a, b` annotation (0-based lines, like the diagnostics). */
function expectations(text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const m = /\/\/ expect: (.*)$/.exec(line);
    if (m) for (const code of m[1]!.split(',')) out.push(`${i}:${code.trim()}`);
  });
  return out;
}

const reported = (ds: RewardDiagnostic[]) => ds.filter((d) => d.severity === 'error' || d.severity === 'warning').map((d) => `${d.range.start.line}:${d.code}`);

/** Multiset difference a − b. */
function minus(a: string[], b: string[]): string[] {
  const left = [...b];
  return a.filter((x) => {
    const i = left.indexOf(x);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

test('corpus: precision and recall of the rules are 100 %', () => {
  assert.ok(clean.length >= 9, 'clean corpus present');
  assert.ok(buggy.length >= 10, 'buggy corpus present');
  let truePositives = 0;
  const falsePositives: string[] = [];
  const falseNegatives: string[] = [];
  const perRule = new Map<string, { tp: number; fn: number; fp: number }>();
  const bump = (code: string, k: 'tp' | 'fn' | 'fp') => {
    const r = perRule.get(code) ?? { tp: 0, fn: 0, fp: 0 };
    r[k]++;
    perRule.set(code, r);
  };
  for (const file of [...clean, ...buggy]) {
    const text = readFileSync(file, 'utf8');
    const expected = expectations(text);
    const got = reported(lintText(file, text));
    const fp = minus(got, expected);
    const fn = minus(expected, got);
    const tp = minus(expected, fn);
    truePositives += tp.length;
    for (const x of tp) bump(x.split(':')[1]!, 'tp');
    for (const x of fp) bump(x.split(':')[1]!, 'fp'), falsePositives.push(`${path.relative(root, file)}:${Number(x.split(':')[0]) + 1} ${x.split(':')[1]}`);
    for (const x of fn) bump(x.split(':')[1]!, 'fn'), falseNegatives.push(`${path.relative(root, file)}:${Number(x.split(':')[0]) + 1} ${x.split(':')[1]}`);
  }
  const precision = truePositives / (truePositives + falsePositives.length);
  const recall = truePositives / (truePositives + falseNegatives.length);
  const table = [...perRule]
    .sort()
    .map(([code, r]) => `  ${code.padEnd(28)} tp ${r.tp}  fp ${r.fp}  fn ${r.fn}`)
    .join('\n');
  console.log(
    `corpus: ${clean.length} clean + ${buggy.length} buggy files, ${truePositives} defects found; precision ${(precision * 100).toFixed(1)} %, recall ${(recall * 100).toFixed(1)} %\n${table}`,
  );
  assert.deepEqual(falsePositives, [], 'false positives');
  assert.deepEqual(falseNegatives, [], 'false negatives');
  // Every rule is exercised by the corpus.
  for (const rule of [
    'unknown-name',
    'wrong-kind-name',
    'global-data-uninitialised',
    'nearest-entry-unchecked',
    'index-out-of-range',
    'negative-index',
    'constant-condition',
    'scale-swapped',
    'scale-unscaled',
    'swapped-arguments',
    'undefined-return',
    'python-ism',
    'reward-contract',
    'unreachable-code',
    'reward-return',
    'attack-parameters',
    'unit-mismatch',
    'memory-write-then-compare',
    'first-step-index',
    'inventory-block-drop',
  ]) {
    assert.ok((perRule.get(rule)?.tp ?? 0) > 0, `corpus exercises ${rule}`);
  }
});

test("the README's rule list names every rule and what it catches", async () => {
  const { RULES } = await import('../../runner/src/lint/rules');
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  for (const r of RULES) {
    const id = r.meta.id === 'typescript' ? 'ts<code>' : r.meta.id;
    assert.ok(readme.includes(`| \`${id}\` | ${r.meta.description} |`), `README lists ${id}`);
  }
});

test('did-you-mean includes close names and semantic neighbours', () => {
  const text = readFileSync(path.join(fixtures, 'buggy', 'names.reward.ts'), 'utf8');
  const ds = lintText('names.reward.ts', text);
  const fixesFor = (name: string) => ds.find((d) => d.message.startsWith(`'${name}'`))?.fixes.map((f) => f.title) ?? [];
  assert.ok(
    fixesFor('magma').includes("Change 'magma' to 'lava'") && fixesFor('magma').includes("Change 'magma' to 'magma_block'"),
    'magma → lava, magma_block',
  );
  assert.equal(fixesFor('diamond')[0], "Change 'diamond' to 'diamond_ore'");
  assert.equal(fixesFor('wood')[0], "Change 'wood' to 'oak_log'");
  assert.match(ds.find((d) => d.message.startsWith("'diamond'"))!.message, /is an item, not a block or mob/);
  assert.match(ds.find((d) => d.message.startsWith("'water'"))!.message, /block that is never an item/);
});

test('each quick fix removes the diagnostic it fixes and adds no error', () => {
  let applied = 0;
  for (const file of buggy) {
    const text = readFileSync(file, 'utf8');
    // One project per file, re-checked incrementally after each fix, as the server does after an edit.
    const project = new RewardProject(file, text);
    const before = lintSnapshot(project.snapshot());
    const beforeErrors = reported(before);
    for (const d of before)
      for (const fix of d.fixes) {
        project.update(applyEdits(text, fix.edits));
        const after = reported(lintSnapshot(project.snapshot()));
        const name = `${path.basename(file)}:${d.range.start.line + 1} ${d.code} "${fix.title}"`;
        const lineShift = fix.edits.reduce((n, e) => n + (e.newText.match(/\n/g)?.length ?? 0) - (e.range.end.line - e.range.start.line), 0);
        const sameSpot = (x: string) => x === `${d.range.start.line + lineShift}:${d.code}` || x === `${d.range.start.line}:${d.code}`;
        assert.ok(after.filter(sameSpot).length < beforeErrors.filter((x) => x === `${d.range.start.line}:${d.code}`).length, `${name} removes the diagnostic`);
        const newCodes = minus(
          after.map((x) => x.split(':')[1]!),
          beforeErrors.map((x) => x.split(':')[1]!),
        );
        assert.deepEqual(newCodes, [], `${name} adds no new problem`);
        applied++;
      }
    project.dispose();
  }
  assert.ok(applied >= 60, `applied ${applied} fixes`);
});

// `rewardsmith lint ARGS…` through the real dispatcher, this file's command lines in one child process (runner/test/helpers/cli-all.ts).
const session = cliSession(root);
after(() => session.close());
const lintCli = async (...args: string[]) => {
  const r = await session.run(['lint', ...args]);
  return { code: r.code, stdout: r.out, stderr: r.err };
};

test('rewardsmith lint --format json prints the documented shape and exits 1 on errors', async () => {
  const bad = path.join(fixtures, 'buggy', 'paper-explore-diamond-printed.reward.ts');
  const good = path.join(fixtures, 'clean', 'paper-explore-diamond.reward.ts');
  const failed = await lintCli('--no-probe', '--format', 'json', bad, good);
  assert.equal(failed.code, 1);
  const diagnostics = JSON.parse(failed.stdout) as Record<string, unknown>[];
  assert.deepEqual(Object.keys(diagnostics[0]!).sort(), ['code', 'file', 'message', 'range', 'severity', 'source']);
  assert.deepEqual(
    diagnostics.map((d) => `${(d.range as { start: { line: number } }).start.line}:${d.code}`),
    ['9:unknown-name', '10:unknown-name', '13:global-data-uninitialised', '31:scale-swapped'],
  );
  assert.ok(diagnostics.every((d) => d.file === bad && d.source === 'rewardsmith' && d.severity === 'error'));
  // A clean file lints to []; a file that cannot be read is named on stderr and makes the exit code 2.
  const missing = await lintCli('--no-probe', '--format', 'json', good, path.join(root, 'does-not-exist.reward.ts'));
  assert.equal(missing.code, 2);
  assert.deepEqual(JSON.parse(missing.stdout), []);
  assert.match(missing.stderr, /^rewardsmith lint: .*does-not-exist.reward.ts: no such file\n$/);
});

test('rewardsmith lint: a file nested too deeply gets one located error and the other files keep their results', async () => {
  const dir = tempDir('lint-deep-');
  const head =
    'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {\n';
  const parens = path.join(dir, 'parens.reward.ts');
  writeFileSync(parens, `${head}  const x = ${'('.repeat(1000)}health${')'.repeat(1000)};\n  return x;\n}\n`);
  // Not deep in brackets but in the syntax tree: 5,000 else-ifs overflow TypeScript's recursion.
  const chain = path.join(dir, 'chain.reward.ts');
  writeFileSync(
    chain,
    `${head}  let r = 0;\n  if (health < 0) r = 0;\n${Array.from({ length: 5000 }, (_, i) => `  else if (health < ${i}) r = ${i};\n`).join('')}  return r;\n}\n`,
  );
  const bad = path.join(fixtures, 'buggy', 'paper-explore-diamond-printed.reward.ts');
  const failed = await lintCli('--no-probe', '--format', 'json', parens, chain, bad);
  assert.equal(failed.code, 1, failed.stderr);
  assert.doesNotMatch(failed.stderr, /Maximum call stack|at \w+ \(/);
  const got = (JSON.parse(failed.stdout) as { file: string; code: string; range: { start: { line: number; character: number } }; message: string }[]).map(
    (d) => `${path.basename(d.file)}:${d.range.start.line}:${d.range.start.character}:${d.code}`,
  );
  assert.deepEqual(got.slice(0, 2), [
    'parens.reward.ts:1:267:unanalysable', // the 256th parenthesis (the function's brace is the first level)
    'chain.reward.ts:0:0:unanalysable',
  ]);
  assert.deepEqual(
    got.slice(2).map((x) => {
      const [, line, , code] = x.split(':');
      return `${line}:${code}`;
    }),
    ['9:unknown-name', '10:unknown-name', '13:global-data-uninitialised', '31:scale-swapped'],
  );
});
