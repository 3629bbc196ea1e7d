// `rewardsmith loop --no-llm`: its arguments, the experiment folder's files it refuses, and how the analyzer's
// findings become patch sets. The loop run end to end (a foundation, two iterations, resume) is in
// e2e/loop-no-llm.test.ts, part of `npm run test:e2e`.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { loopCommand } from '../src/llm/loop-command';
import { patchSets } from '../src/llm/loop';
import type { Suggestion } from '../src/analyze/analyze';
import { tempDir } from './helpers/tmp';

const WEAK = path.join(__dirname, 'fixtures/rewards/weak-approach-tree.reward.ts');
const SHORT_TASK = path.join(__dirname, 'fixtures/short-approach-tree.yaml');
const out = tempDir('loop-no-llm-');
after(() => rmSync(out, { recursive: true, force: true }));

test('loop: --init and --from-scratch exclude each other, and --demos needs the foundation', async () => {
  let text = '';
  const io = { stdout: (t: string) => void (text += t), stderr: (t: string) => void (text += t) };
  const base = ['--task', 'approach-tree', '--iterations', '1', '--out', path.join(out, 'x'), '--reward', WEAK, '--no-llm'];
  assert.equal(await loopCommand([...base, '--init', out, '--from-scratch'], io), 2);
  assert.match(text, /rewardsmith loop: --init and --from-scratch exclude each other/);
  text = '';
  assert.equal(await loopCommand([...base, '--from-scratch', '--demos', '3'], io), 2);
  assert.match(text, /rewardsmith loop: --demos sizes the foundation the loop builds, which --from-scratch replaces/);
  assert.ok(!existsSync(path.join(out, 'x')), 'nothing written');
});

test("loop: a candidate's reward file kept from an earlier run must be a plain file in the experiment folder: a link put in its place is refused, not trained", async () => {
  const dir = path.join(tempDir('loop-link-'), 'experiment');
  const attempt = path.join(dir, 'iteration-1', 'candidate-1', 'attempt-1');
  mkdirSync(attempt, { recursive: true });
  const planted = path.join(attempt, 'short-approach-tree.reward.ts');
  // Someone else's reward (a valid one, so that the old loop trained it) outside the folder.
  symlinkSync(path.join(__dirname, '../rewards/approach-tree.sparse.reward.ts'), planted);
  let text = '';
  const io = { stdout: (t: string) => void (text += t), stderr: (t: string) => void (text += t) };
  const args = ['--task', SHORT_TASK, '--iterations', '1', '--out', dir, '--steps', '1024', '--envs', '8', '--eval-episodes', '2', '--reward', WEAK];
  const code = await loopCommand([...args, '--no-llm', '--from-scratch'], io);
  assert.ok(!existsSync(path.join(attempt, 'run', 'summary.json')), 'the linked reward was trained');
  assert.notEqual(code, 0, text);
  assert.match(text, new RegExp(`${planted.replace(/[.]/g, '\\.')}: a symbolic link to .*approach-tree\\.sparse\\.reward\\.ts, outside`));
});

test('patch sets: findings answered by the same patch are all recorded as applied', () => {
  const approach = { kind: 'approach-record' as const, targets: ['oak_log', 'birch_log'], step: 0.1 };
  const finding = (id: string, episodes: number, patch: Suggestion['patch']): Suggestion =>
    ({ id, kind: id, share: 0, message: id, evidence: '', episodes: [], episode_ids: Array.from({ length: episodes }, (_, i) => i), patch }) as Suggestion;
  const suggestions = [
    finding('reward-gamed', 56, { ...approach, why: 'gamed.' }),
    finding('target-not-approached', 11, { ...approach, why: 'crept.' }),
    finding('reward-misaligned', 0, { kind: 'target-names', known: ['oak_log'], targets: ['oak_log', 'birch_log'], why: 'birch.' }),
  ];
  const sets = patchSets(WEAK, readFileSync(WEAK, 'utf8'), suggestions, 2, new Set());
  assert.deepEqual(
    sets.map((s) => s.ids),
    [
      ['reward-gamed', 'target-not-approached', 'reward-misaligned'],
      ['reward-gamed', 'target-not-approached'],
    ],
  );
});
