// A Python reward through the command line as a user runs it: `train x.reward.py` (it used to fail with
// "Invalid character" at 1:1, the TypeScript compiler reading Python), then `analyze` on the run. Small
// budgets: this is about the plumbing (the run's reward.py copy, evaluation, analysis), not learning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const REWARD = path.join(__dirname, 'fixtures', 'rewards', 'python', 'approach-tree.reward.py');

function cli(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', TSX, path.join(ROOT, 'runner/src/cli.ts'), ...args], { encoding: 'utf8', cwd, timeout: 400_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('train x.reward.py trains and evaluates on the Python reward; analyze reads the run', () => {
  const dir = tempDir('rewardsmith-pytrain-');
  const run = path.join(dir, 'run');
  const args = ['--task', 'approach-tree', '--steps', '128', '--envs', '2', '--rollout-steps', '32', '--eval-episodes', '2', '--workers', '1'];
  const r = cli(dir, 'train', REWARD, ...args, '--out', run, '--events', 'ndjson');
  assert.equal(r.code, 0, `${r.err}\n${r.out.slice(-2000)}`);
  assert.doesNotMatch(r.err, /Invalid character/);
  assert.equal(readFileSync(path.join(run, 'reward.py'), 'utf8'), readFileSync(REWARD, 'utf8'), 'the run keeps its copy as reward.py');
  assert.ok(!existsSync(path.join(run, 'reward.ts')));
  const summary = JSON.parse(readFileSync(path.join(run, 'summary.json'), 'utf8')) as { eval?: { episodes?: number } };
  assert.ok(summary.eval, 'the run was evaluated');
  const a = cli(dir, 'analyze', run);
  assert.equal(a.code, 0, a.err);
  assert.doesNotMatch(a.out, /does not parse/);
});
