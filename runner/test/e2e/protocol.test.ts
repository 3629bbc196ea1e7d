// The paper's protocol: the scripted teacher solves the tasks, `pretrain` writes a checkpoint that `eval` and
// `train --init` accept (with the fine-tuning terms recorded and switchable), and `table` runs a small
// configuration end to end, resumes without redoing finished cells and refuses to mix budgets.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { resolveTask } from '../../src/tasks';
import { recordDemonstrations } from '../../src/pretrain/pretrain';
import type { RunSummary } from '../../src/records';
import { readStoredConfig } from '../../src/runs/config';
import { cliSession } from '../helpers/cli-all';
import { tempDir } from '../helpers/tmp';

const ROOT = path.resolve(__dirname, '../../..');
const tmp = () => tempDir('rewardsmith-protocol-');
// `rewardsmith ARGS…` through the real dispatcher, this file's command lines in one process (helpers/cli-all.ts).
const session = cliSession(ROOT, 240_000);
after(() => session.close());
const cli = async (...args: string[]) => {
  const r = await session.run(args);
  return { status: r.code, stdout: r.out, stderr: r.err };
};
const json = <T>(file: string) => JSON.parse(readFileSync(file, 'utf8')) as T;

test('the scripted teacher reaches a tree, a cow and diamond ore in its demonstrations', () => {
  // Underground the teacher reaches diamond ore on the first two worlds (140 and 163 steps; on the third it runs out
  // of its 60,000 steps, which took this test ~4 of its 4.5 minutes, so it stops at two); no start is where lava runs
  // onto it at once (on the first world it did, within 41 steps).
  for (const [task, episodes, minWins] of [
    ['approach-tree', 4, 3],
    ['approach-cow', 4, 3],
    ['explore-diamond', 2, 2],
  ] as const) {
    const d = recordDemonstrations(resolveTask(task), episodes, 3, 0);
    const wins = d.episodes.filter((e) => e.success).length;
    assert.ok(wins >= minWins, `${task}: teacher succeeded in ${wins}/${episodes} (steps ${d.episodes.map((e) => e.steps).join(', ')})`);
    assert.equal(d.actions.length, d.features.length / d.featureSize, 'one teacher label per recorded feature row');
  }
});

test("pretrain writes a checkpoint that eval reads and train --init fine-tunes with the paper's terms recorded", async () => {
  const dir = tmp();
  const foundation = path.join(dir, 'foundation');
  const r = await cli('pretrain', '--task', 'approach-tree', '--out', foundation, '--demos', '3', '--epochs', '5', '--eval-episodes', '6');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /teacher: [\d.]+ % of 3 episodes \(95 % CI/);
  assert.match(r.stdout, /held-out success: [\d.]+ % of 6 episodes \(95 % CI [\d.]+–[\d.]+ %\)/);
  // Progress like train's, stage by stage (stderr is a pipe here: a line per tenth, and the last one).
  assert.match(r.stderr, /\[#+\] recording demonstrations 3\/3 episodes {2}\d+:\d\d elapsed, done {2}teacher succeeded in \d/);
  assert.match(r.stderr, /\[#+\] behaviour cloning 5\/5 epochs {2}\d+:\d\d elapsed, done {2}loss \d+\.\d{3}/);
  assert.match(r.stderr, /behaviour cloning 1\/5 epochs/, 'each epoch is shown as it ends');
  assert.match(r.stderr, /evaluating the foundation policy on 6 held-out worlds\n[\s\S]*\[#+\] evaluating 6\/6 episodes/);
  const policy = json<{ worldSeeds: number[]; task: string }>(path.join(foundation, 'checkpoint/policy.json'));
  assert.equal(policy.task, 'approach-tree');
  assert.ok(policy.worldSeeds.length >= 3);
  // Held out means held out: no evaluation world is one the teacher demonstrated on.
  const evalSeeds = readFileSync(path.join(foundation, 'eval/episodes.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { seed: number }).seed);
  assert.equal(evalSeeds.length, 6);
  assert.deepEqual(
    evalSeeds.filter((s) => policy.worldSeeds.includes(s)),
    [],
  );

  // Running pretrain again into the same folder is refused without --overwrite (nothing is lost).
  const again = await cli('pretrain', '--task', 'approach-tree', '--out', foundation, '--demos', '1');
  assert.equal(again.status, 1);
  assert.match(again.stderr, /^rewardsmith pretrain: .*already holds a checkpoint; pass --overwrite/);

  // A foundation not evaluated says so, not "no finished episode yet" (as if its evaluation were still to come).
  const unevaluated = await cli(
    'pretrain',
    '--task',
    'approach-tree',
    '--out',
    path.join(dir, 'unevaluated'),
    '--demos',
    '1',
    '--epochs',
    '1',
    '--eval-episodes',
    '0',
  );
  assert.equal(unevaluated.status, 0, unevaluated.stderr);
  assert.match(unevaluated.stdout, /^foundation policy: not evaluated \(--eval-episodes 0\)$/m);

  // eval accepts the reward-less checkpoint.
  const ev = await cli('eval', foundation, '--task', 'approach-tree', '--episodes', '3', '--out', path.join(dir, 'eval'));
  assert.equal(ev.status, 0, ev.stderr);
  assert.equal(json<RunSummary>(path.join(dir, 'eval/summary.json')).eval.episodes, 3);

  const reward = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
  const paper = await cli(
    'train',
    reward,
    '--task',
    'approach-tree',
    '--init',
    foundation,
    '--out',
    path.join(dir, 'paper'),
    '--steps',
    '1024',
    '--envs',
    '4',
    '--eval-episodes',
    '2',
  );
  assert.equal(paper.status, 0, paper.stderr);
  const config = readStoredConfig(path.join(dir, 'paper'))!;
  assert.equal(config.init, foundation);
  assert.equal(config.hyperparameters.klCoef, 0.125);
  assert.equal(config.hyperparameters.valuePretrainUpdates, 2);
  assert.equal(config.hyperparameters.normaliseReturns, true);
  assert.equal(config.hyperparameters.returnMomentum, 0.7);
  // The first two updates train the value function only: the policy has not moved from the foundation (KL 0).
  const metrics = readFileSync(path.join(dir, 'paper/metrics.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kl: number; policy_loss: number });
  assert.equal(metrics[0]!.kl, 0);
  assert.ok(
    metrics.slice(2).some((m) => m.kl > 0),
    'policy updates after value pre-training move away from the foundation',
  );
  // The held-out evaluation of the fine-tuned run also skips the teacher's worlds.
  const state = json<{ trainingSeeds: number[] }>(path.join(dir, 'paper/checkpoint/state.json'));
  for (const s of policy.worldSeeds) assert.ok(state.trainingSeeds.includes(s));

  const off = await cli(
    'train',
    reward,
    '--task',
    'approach-tree',
    '--init',
    foundation,
    '--out',
    path.join(dir, 'off'),
    '--steps',
    '512',
    '--envs',
    '4',
    '--eval-episodes',
    '1',
    '--kl-coef',
    '0',
    '--value-pretrain-updates',
    '0',
    '--return-norm',
    'off',
  );
  assert.equal(off.status, 0, off.stderr);
  const offConfig = readStoredConfig(path.join(dir, 'off'))!;
  assert.deepEqual(
    [offConfig.hyperparameters.klCoef, offConfig.hyperparameters.valuePretrainUpdates, offConfig.hyperparameters.normaliseReturns],
    [0, 0, false],
  );
  const bad = await cli('train', reward, '--task', 'approach-tree', '--out', path.join(dir, 'bad'), '--return-norm', 'maybe');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^rewardsmith train: --return-norm must be one of on, off, got "maybe"/);
  rmSync(dir, { recursive: true, force: true });
});

test('table runs a small configuration end to end, resumes without redoing finished cells, and refuses mixed budgets', async () => {
  const out = path.join(tmp(), 'table');
  const args = ['table', '--out', out, '--tasks', 'approach-tree', '--seeds', '1,2', '--steps', '1024', '--demos', '1', '--eval-episodes', '2', '--envs', '4'];
  const first = await cli(...args);
  assert.equal(first.status, 0, first.stderr);
  const md = readFileSync(path.join(out, 'table.md'), 'utf8');
  assert.match(md, /\| task \| foundation \| foundation \+ sparse \| foundation \+ dense \| paper: sparse \| paper: Auto MC-Reward \|/);
  assert.match(md, /\| approach-tree \| [\d.]+ \[[\d.]+, [\d.]+\] \| [\d.]+ \[[\d.]+, [\d.]+\] \| [\d.]+ \[[\d.]+, [\d.]+\] \| 4\.3 \| 73\.4 \|/);
  assert.match(md, /Machine: .*wall time/);
  const csv = readFileSync(path.join(out, 'table.csv'), 'utf8').trim().split('\n');
  assert.equal(csv.length, 1 + 3 * 3, 'a header, then per method two seeds and the aggregate');
  assert.deepEqual(
    csv.filter((l) => l.includes(',all,')).map((l) => l.split(',')[1]),
    ['foundation', 'sparse', 'dense'],
  );
  const svg = readFileSync(path.join(out, 'table.svg'), 'utf8');
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.match(/<rect x="[\d.]+" y="[\d.]+" width="40"/g) ?? []).length, 3, 'one bar per method');
  assert.equal((svg.match(/paper \(MineDojo\), /g) ?? []).length, 2, "the paper's sparse and dense figures beside the bars");

  // Resume: finished cells are read back, not redone; a lost cell is redone alone.
  const denseSummary = path.join(out, 'approach-tree/seed-2/dense/summary.json');
  const sparseSummary = path.join(out, 'approach-tree/seed-1/sparse/summary.json');
  const sparseTime = statSync(sparseSummary).mtimeMs;
  rmSync(denseSummary);
  const second = await cli(...args);
  assert.equal(second.status, 0, second.stderr);
  assert.equal(statSync(sparseSummary).mtimeMs, sparseTime, 'a finished cell is not rerun');
  assert.ok(existsSync(denseSummary));
  assert.match(second.stderr, /approach-tree seed 2: foundation \+ dense \(1,024 frames, resuming\)/);
  assert.doesNotMatch(second.stderr, /seed 1: foundation \+ sparse \(/);

  const mixed = await cli(...args.map((a) => (a === '1024' ? '2048' : a)));
  assert.equal(mixed.status, 1);
  assert.match(mixed.stderr, /^rewardsmith table: .*steps 1024.*steps 2048 would mix budgets/);

  const typo = await cli('table', '--out', out, '--tasks', 'approach-tre');
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /rewardsmith table: --tasks: .*approach-tree/);
  writeFileSync(path.join(out, 'README.md'), '# x\n\n<!-- rewardsmith table: start -->\nold\n<!-- rewardsmith table: end -->\n\nafter\n');
  const readme = await cli(...args, '--readme', path.join(out, 'README.md'));
  assert.equal(readme.status, 0, readme.stderr);
  const text = readFileSync(path.join(out, 'README.md'), 'utf8');
  assert.doesNotMatch(text, /\nold\n/);
  assert.match(text, /Generated by `rewardsmith table .*--steps 1024/);
  assert.match(text, /\| approach-tree \|.*\n[\s\S]*after\n$/);
  // The plot travels with the README: a link into the run folder breaks for anyone without that folder.
  assert.match(text, /The plot .*: `docs\/table\.svg`/);
  assert.ok(existsSync(path.join(out, 'docs', 'table.svg')));
  assert.match(text, /resumed cells measured earlier/);
});
