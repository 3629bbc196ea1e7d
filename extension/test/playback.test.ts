// The dashboard's playback comes from the CLI as a child process (`rewardsmith playback --format json`, as
// the extension host runs it); what arrives is checked before it reaches the webview. Here: a real rollout
// recorded by the CLI, played back by the CLI, read by the extension's checker; and damaged output refused.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parsePlaybackRecord, PLAYBACK_LIMITS } from '../src/core';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-dashboard-playback-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'runner/src/cli.ts'), ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    timeout: 240_000,
    maxBuffer: PLAYBACK_LIMITS.chars,
  });
}

test('a rollout recorded by the CLI plays back as a record the dashboard accepts', { timeout: 300_000 }, () => {
  const task = path.join(ROOT, 'runner/test/fixtures/short-approach-pig.yaml');
  const rollout = cli('rollout', '--task', task, '--steps', '600', '--envs', '4', '--workers', '0', '--seed', '3', '--out', path.join(dir, 'run'));
  assert.equal(rollout.status, 0, rollout.stderr);
  const played = cli('playback', path.join(dir, 'run'), '--episode', '0', '--format', 'json', '--max-frames', '40');
  assert.equal(played.status, 0, played.stderr);
  const record = parsePlaybackRecord(played.stdout);
  assert.equal(record.episode, 0);
  assert.equal(record.rows.length, record.frame_count);
  assert.ok(record.frame_count >= 2 && record.frame_count <= 41);
  assert.equal(record.reproduced, true, record.remarks.join(' '));
  // A rollout has no reward: the timeline says so rather than drawing zeros.
  assert.ok(record.rows.every((r) => r.reward === null));
  assert.match(record.remarks.join(' '), /no per-step rewards/);

  assert.throws(() => parsePlaybackRecord('rewardsmith playback: something went wrong'), /not JSON/);
  assert.throws(() => parsePlaybackRecord(JSON.stringify({ ...record, version: 2 })), /version 1/);
  assert.throws(() => parsePlaybackRecord(JSON.stringify({ ...record, rows: record.rows.slice(1) })), /one timeline row per frame/);
  assert.throws(() => parsePlaybackRecord(JSON.stringify({ ...record, frames_png: '"><script>' })), /base64 PNG/);
  assert.throws(() => parsePlaybackRecord(JSON.stringify({ ...record, width: 1e6 })), /frame size/);
});
