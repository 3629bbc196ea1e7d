// A Python reward through the command line as a user runs it, all in one process (helpers/cli-all.ts):
// `train x.reward.py` (it used to fail with "Invalid character" at 1:1, the TypeScript compiler reading
// Python), `analyze` on the run (its patches are Python), and `loop --no-llm` on the reward, whose second
// iteration trains the analyzer's Python patches. Small budgets on approach-tree with 120-step episodes (a
// 2,000-step evaluation would cost most of the test): this is about the plumbing, not learning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { LoopResult } from '../../src/llm/loop-types';
import { lintText, loadPythonParser } from '../../src/lint/rules';
import { cliAll } from '../helpers/cli-all';
import { tempDir } from '../helpers/tmp';

const REWARD = path.join(__dirname, '..', 'fixtures', 'rewards', 'python', 'approach-tree.reward.py');
const TASK = path.join(__dirname, '..', 'fixtures', 'short-approach-tree.yaml');

test('train x.reward.py trains and evaluates it; analyze writes Python patches; loop --no-llm trains them', async () => {
  const dir = tempDir('rewardsmith-pytrain-');
  const run = path.join(dir, 'run');
  const loop = path.join(dir, 'loop');
  const budget = ['--task', TASK, '--steps', '128', '--envs', '2', '--eval-episodes', '2'];
  const [train, analyze, improve] = await cliAll(dir, [
    { args: ['train', REWARD, ...budget, '--rollout-steps', '32', '--workers', '1', '--out', run] },
    { args: ['analyze', run] },
    {
      args: ['loop', ...budget, '--iterations', '2', '--out', loop, '--reward', REWARD, '--no-llm', '--from-scratch', '--seed', '3'],
      env: { OPENAI_API_KEY: null },
    },
  ]);

  assert.equal(train!.code, 0, `${train!.err}\n${train!.out.slice(-2000)}`);
  assert.doesNotMatch(train!.err, /Invalid character/);
  assert.doesNotMatch(train!.err, /not probed|probe-not-run/, 'the pre-training check probes Python rewards too');
  assert.equal(readFileSync(path.join(run, 'reward.py'), 'utf8'), readFileSync(REWARD, 'utf8'), 'the run keeps its copy as reward.py');
  assert.ok(!existsSync(path.join(run, 'reward.ts')));
  const summary = JSON.parse(readFileSync(path.join(run, 'summary.json'), 'utf8')) as { eval?: { episodes?: number } };
  assert.equal(summary.eval?.episodes, 2, 'the run was evaluated');

  assert.equal(analyze!.code, 0, analyze!.err);
  assert.doesNotMatch(analyze!.out, /does not parse|written for TypeScript rewards only/);
  const patches = (JSON.parse(readFileSync(path.join(run, 'suggestions.json'), 'utf8')) as { suggestions: { id: string; diff?: string }[] }).suggestions;
  assert.ok(
    patches.some((s) => s.diff),
    `Python patches for the findings: ${patches.map((s) => s.id).join(', ')}`,
  );
  for (const s of patches.filter((x) => x.diff)) {
    assert.match(s.diff!, /^\+ +# Analyzer: /m, s.diff);
    assert.doesNotMatch(s.diff!, /^\+.*(\bconst |;$|===|!==)/m, `${s.id}: Python, not TypeScript`);
  }

  assert.equal(improve!.code, 0, `${improve!.err}\n${improve!.out.slice(-3000)}`);
  const result = JSON.parse(readFileSync(path.join(loop, 'results.json'), 'utf8')) as LoopResult;
  const [first, second] = result.iterations;
  assert.equal(first!.reward, 'iteration-1/short-approach-tree.reward.py', 'the loop keeps the reward in its own language');
  const candidate = second!.candidates[0]!;
  assert.equal(candidate.reward, 'iteration-2/candidate-1/attempt-1/short-approach-tree.reward.py');
  assert.ok(candidate.applied!.length > 0 && candidate.run, candidate.failure ?? 'a patch set was trained');
  const patched = readFileSync(path.join(loop, candidate.reward!), 'utf8');
  assert.match(patched, /# Analyzer: /);
  await loadPythonParser();
  const problems = lintText(candidate.reward!, patched).filter((d) => d.severity === 'error' || d.severity === 'warning');
  assert.deepEqual(problems, [], 'the patched reward lints clean');
});
