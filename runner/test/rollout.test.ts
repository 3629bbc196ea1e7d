// `rewardsmith rollout` as a user runs it: a child process, summary.json and episode records on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EpisodeRecord } from '../src/records';
import { tempDir } from './helpers/tmp';

const root = path.join(__dirname, '..', '..');
const fixture = path.join(__dirname, 'fixtures', 'short-approach-cow.yaml');

function rollout(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'runner/src/cli.ts'), 'rollout', ...args], { cwd: root, encoding: 'utf8' });
}

test('rollout writes summary.json and episode records, reproducibly by seed', (t) => {
  const dirs = [tempDir('rs-rollout-'), tempDir('rs-rollout-')];
  t.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const summaries = dirs.map((out, k) => {
    // The second run steps the same envs in worker threads: results must not depend on that.
    const r = rollout([
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
    return JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8')) as Record<string, unknown>;
  });
  const s = summaries[0]!;
  assert.equal(s.task, 'short-approach-cow');
  assert.equal(s.env, 'sim');
  assert.equal(s.env_steps, 2400);
  assert.ok((s.episodes as number) >= 8 * Math.floor(300 / 150) - 8, `episodes ${s.episodes}`);
  for (const k of ['success_rate', 'death_rate', 'wall_seconds']) assert.equal(typeof s[k], 'number', k);
  const observed = s.observed as Record<string, number>;
  assert.ok(observed.grass_block! > 0 && observed.grass_block! <= 2400);
  for (const [name, count] of Object.entries(observed)) assert.ok(count <= 2400, name);
  for (const k of ['episodes', 'success_rate', 'death_rate', 'observed', 'death_causes']) assert.deepEqual(summaries[1]![k], s[k], k);

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
});

test('rollout rejects bad options with a clear message and exit code 2', () => {
  let r = rollout(['--task', 'approach-tree', '--steps', 'many', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--steps must be an integer/);
  r = rollout(['--task', 'approach-tree', '--frobnicate', '1', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown option --frobnicate/);
  r = rollout(['--task', 'approach-tree']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--out DIR is required/);
  r = rollout(['--task', 'approach-dragon', '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown task "approach-dragon"; built-in tasks: explore-diamond/);
  const missing = path.join(tmpdir(), 'rs-no-such-checkpoint');
  r = rollout(['--task', 'approach-tree', '--policy', missing, '--out', tmpdir()]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /neither "random" nor a checkpoint folder/);
});
