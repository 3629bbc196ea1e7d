// `rewardsmith rollout` as a user runs it: a child process (this file's command lines in one, helpers/cli-all.ts),
// summary.json and episode records on disk.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EpisodeRecord, RateRecord } from '../src/records';
import { cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const root = path.join(__dirname, '..', '..');
const fixture = path.join(__dirname, 'fixtures', 'short-approach-cow.yaml');

const session = cliSession(root);
after(() => session.close());
async function rollout(args: string[]) {
  const r = await session.run(['rollout', ...args]);
  return { status: r.code, stdout: r.out, stderr: r.err };
}

test('rollout writes summary.json and episode records, reproducibly by seed', async (t) => {
  const dirs = [tempDir('rs-rollout-'), tempDir('rs-rollout-')];
  t.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const summaries = [];
  for (const [k, out] of dirs.entries()) {
    // The second run steps the same envs in worker threads: results must not depend on that.
    const r = await rollout([
      '--task',
      fixture,
      '--policy',
      'random',
      '--steps',
      '2400',
      '--seed',
      '3',
      '--envs',
      '8',
      '--workers',
      k === 0 ? '0' : '2',
      '--out',
      out,
    ]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /short-approach-cow \(sim, random\): 2400 steps/);
    summaries.push({ summary: JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8')) as Record<string, unknown>, stdout: r.stdout });
  }
  const s = summaries[0]!.summary;
  assert.equal(s.task, 'short-approach-cow');
  assert.equal(s.env, 'sim');
  assert.equal(s.env_steps, 2400);
  assert.ok((s.episodes as number) >= 8 * Math.floor(300 / 150) - 8, `episodes ${s.episodes}`);
  for (const k of ['success_rate', 'death_rate', 'wall_seconds']) assert.equal(typeof s[k], 'number', k);
  const observed = s.observed as Record<string, number>;
  assert.ok(observed.grass_block! > 0 && observed.grass_block! <= 2400);
  for (const [name, count] of Object.entries(observed)) assert.ok(count <= 2400, name);
  for (const k of ['episodes', 'episodes_unfinished', 'success_rate', 'death_rate', 'success', 'death', 'observed', 'death_causes'])
    assert.deepEqual(summaries[1]!.summary[k], s[k], k);

  const records = readFileSync(path.join(dirs[0]!, 'eval', 'episodes.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as EpisodeRecord);
  assert.equal(records.length, s.episodes);
  for (const r of records) {
    assert.ok(r.lastSteps.length <= 32 && r.lastSteps.length > 0);
    assert.equal(r.path.length, r.steps + 1);
    assert.ok(r.success || r.truncated || r.died);
    if (r.truncated) assert.equal(r.steps, 150);
    assert.equal(typeof r.seed, 'number');
    assert.ok(typeof r.final.blockUnderFoot === 'string' && r.final.blockUnderFoot.length > 0);
  }
  const rate = records.filter((r) => r.success).length / records.length;
  assert.equal(rate, s.success_rate);
  // Each rate says over how many finished episodes, with its Wilson 95 % interval, in summary.json and on stdout.
  const success = s.success as RateRecord;
  assert.equal(success.n, s.episodes);
  assert.equal(success.rate, s.success_rate);
  assert.ok(success.ci95[0] <= success.rate! && success.rate! <= success.ci95[1] && success.ci95[1] - success.ci95[0] > 0);
  assert.equal((s.death as RateRecord).n, s.episodes);
  assert.match(
    summaries[0]!.stdout,
    new RegExp(`success \\d+\\.\\d % of ${s.episodes} episodes \\(95 % CI [\\d.]+–[\\d.]+ %\\), deaths \\d+\\.\\d % of ${s.episodes} episodes \\(95 % CI`),
  );
});

test('rollout: episodes cut off by the step budget are counted apart, not in the rates; none finished is said, not 0.0 %', async (t) => {
  const out = tempDir('rs-rollout-');
  t.after(() => rmSync(out, { recursive: true, force: true }));
  const run = async (steps: number, envs: number) => {
    const dir = path.join(out, String(steps));
    const r = await rollout(['--task', fixture, '--steps', String(steps), '--envs', String(envs), '--seed', '3', '--workers', '0', '--out', dir]);
    assert.equal(r.status, 0, r.stderr);
    return { stdout: r.stdout, s: JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8')) as Record<string, unknown> };
  };
  // 200 steps per env with 150-step episodes: each env finishes one episode and is 50 steps into the next.
  const some = await run(1600, 8);
  assert.equal(some.s.episodes_unfinished, 8);
  assert.equal((some.s.success as RateRecord).n, some.s.episodes);
  assert.match(
    some.stdout,
    new RegExp(
      `: 1600 steps, ${some.s.episodes} finished episodes, 8 still running when the step budget ran out \\(not counted\\); success .* of ${some.s.episodes} episodes \\(95 % CI`,
    ),
  );
  // 10 steps per env: no episode ends, so there is no rate to give.
  const none = await run(20, 2);
  assert.equal(none.s.episodes, 0);
  assert.equal(none.s.episodes_unfinished, 2);
  assert.deepEqual(none.s.success, { count: 0, n: 0, rate: null, ci95: [0, 1] });
  assert.match(none.stdout, /: 20 steps, 0 finished episodes, 2 still running when the step budget ran out \(not counted\): no success or death rate/);
  assert.doesNotMatch(none.stdout, /\d %/);
});

test('rollout rejects bad options with a clear message and exit code 2', async () => {
  let r = await rollout(['--task', 'approach-tree', '--steps', 'many', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--steps must be an integer/);
  r = await rollout(['--task', 'approach-tree', '--frobnicate', '1', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown option --frobnicate/);
  r = await rollout(['--task', 'approach-tree']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--out DIR is required/);
  r = await rollout(['--task', 'approach-dragon', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown task "approach-dragon" \(did you mean approach-cow\?\); built-in tasks: explore-diamond/);
  const missing = path.join(tmpdir(), 'rs-no-such-checkpoint');
  r = await rollout(['--task', 'approach-tree', '--policy', missing, '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /neither "random" nor a checkpoint folder/);
});
