// Playback of probe episodes: a reward that pays turning in place (the probe corpus's incentive-turning) gets a
// probe-incentive warning naming the probe episode that shows it; `rewardsmith lint` prints the command that
// plays it, and that command re-simulates the bank's episode (landing on every recorded position) with a
// timeline that is, step for step, what the probes' replay of this reward paid on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkReward, playProbeCommand } from '../src/lint/check';
import { playbackCommand } from '../src/playback/command';
import { probeBank, replayBank } from '../src/probe/index';
import type { PlaybackRecord } from '../src/records';
import { resolveTask } from '../src/tasks';

const FILE = path.join(__dirname, 'fixtures', 'probe', 'corpus', 'incentive-turning.reward.ts');

function io() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (t: string) => void (out.stdout += t), stderr: (t: string) => void (out.stderr += t) } };
}

test("a probe warning names its probe episode; playing it shows the bank's episode with this reward's per-step rewards", { timeout: 240_000 }, async () => {
  const task = resolveTask('approach-cow');
  const bank = probeBank(task);
  const text = readFileSync(FILE, 'utf8');
  const { diagnostics } = await checkReward(FILE, text, task);
  const incentive = diagnostics.find((d) => d.code === 'probe-incentive');
  assert.ok(incentive?.probeEpisode, JSON.stringify(diagnostics));
  const episode = bank.episodes[incentive.probeEpisode - 1]!;
  assert.equal(episode.behaviour, 'turn', 'the episode shown is the behaviour the warning names (turning in place)');
  assert.match(incentive.message, /^turning in place is paid/);
  assert.equal(playProbeCommand(FILE, incentive), `rewardsmith playback ${FILE} --probe ${incentive.probeEpisode}`);

  const a = io();
  assert.equal(await playbackCommand([FILE, '--probe', String(incentive.probeEpisode), '--format', 'json'], a.io), 0, a.out.stderr);
  const record = JSON.parse(a.out.stdout) as PlaybackRecord;
  assert.deepEqual(record.probe, {
    number: incentive.probeEpisode,
    of: bank.episodes.length,
    behaviour: 'turn',
    description: 'turning in place',
    reward_file: FILE,
  });
  assert.equal(record.reproduced, true, record.remarks.join(' '));
  assert.equal(record.every, 1);
  assert.equal(record.rows.length, episode.obs.length);
  assert.equal(record.frame_count, record.rows.length);
  // Step for step what the probes' own replay of the reward paid on this episode.
  const replay = await replayBank(FILE, task, bank);
  const paid = replay.traces[incentive.probeEpisode - 1]!;
  assert.deepEqual(
    record.rows.slice(1).map((r) => r.reward),
    Array.from(paid.values.subarray(0, paid.recorded)),
  );
  assert.ok(record.rows.slice(1).every((r) => r.reward === 0.05 && r.action === 'turn_left'));
  assert.match(record.remarks.join(' '), /Probe episode \d+ of \d+ of approach-cow's probe bank: turning in place/);

  // A behaviour's name plays its first episode; the text summary says what it is.
  const b = io();
  assert.equal(await playbackCommand([FILE, '--probe', 'turn', '--max-frames', '20'], b.io), 0, b.out.stderr);
  assert.match(b.out.stdout, /^probe episode \d+ of \d+ \(turning in place, world \d+, approach-cow\): .* after \d+ steps\nreturn 20\.000\n/);

  const c = io();
  assert.equal(await playbackCommand([FILE, '--probe', 'trun'], c.io), 2);
  assert.match(
    c.out.stderr,
    /^rewardsmith playback: --probe trun: approach-cow's probe bank has episodes 1–\d+ and the behaviours teacher, .*; did you mean turn\?\n/,
  );
  const d = io();
  assert.equal(await playbackCommand([FILE, '--probe', '999'], d.io), 2);
  assert.match(d.out.stderr, /--probe 999: approach-cow's probe bank has episodes 1–/);
  const e = io();
  assert.equal(await playbackCommand([FILE, '--probe', '1', '--episode', '0'], e.io), 2);
  assert.match(e.out.stderr, /--episode and --probe: choose one/);
});
