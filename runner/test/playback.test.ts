// Episode playback: an evaluation recorded as a run records it (the episode recorder, the reward in its
// sandbox) is re-simulated from its seed and actions. Re-simulating must land on the recorded positions and
// final position, the timeline must carry the recorded rewards (and their dense and sparse terms), the frames
// must show the world, a long episode is drawn in the report's frame cap from its start to its last step, old records
// must still read, and `rewardsmith playback` writes a GIF or JSON. A
// mineflayer run is refused with the reason, by the command and in the report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { episodeActions, episodeRewards, readEpisodes, readSummary, RunRecordError, RUN_FILES, STEP_CODES, type PlaybackRecord } from '../src/records';
import { resolveTask, BUILTIN_TASKS } from '../src/tasks';
import { notesFor, PlaybackError, replayEpisode, replayEpisodes, replayShares } from '../src/playback/replay';
import { playbackCommand } from '../src/playback/command';
import { FRAME_HEIGHT, FRAME_PALETTE, FRAME_WIDTH, SKY_INDEX } from '../src/env/sim/frame';
import { SCALE_RULE } from '../src/schema';
import { playbackSection, REPORT_PLAYBACK } from '../src/report/playback';
import { writeReport } from '../src/report/report';
import { PLAYBACK_TASK_FILE, recordPlaybackRun } from './helpers/playback-run';
import { tempDir } from './helpers/tmp';

const FIXTURES = path.join(__dirname, 'fixtures', 'runs');
const task = resolveTask(PLAYBACK_TASK_FILE);

let recorded: Promise<{ dir: string; episodes: Awaited<ReturnType<typeof recordPlaybackRun>> }> | undefined;
/** One recorded run shared by the tests of this file (recording it is the slow part). */
function run() {
  recorded ??= (async () => {
    const dir = tempDir('rewardsmith-playback-');
    return { dir, episodes: await recordPlaybackRun(dir) };
  })();
  return recorded;
}

function io() {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (t: string) => void (out.stdout += t), stderr: (t: string) => void (out.stderr += t) } };
}

test('an evaluation records every action and reward compactly; re-simulating lands on every recorded position and the outcome', {
  timeout: 180_000,
}, async () => {
  const { dir, episodes } = await run();
  // What is on disk, read back through the checked reader.
  const stored = readEpisodes(dir);
  assert.equal(stored.length, episodes.length);
  for (const ep of stored) {
    assert.equal(ep.actions!.length, ep.steps, 'one action character per step');
    assert.equal(ep.reward_exports, 'dense_sparse');
    const rewards = episodeRewards(ep)!;
    assert.equal(rewards.length, ep.steps);
    assert.ok(Math.abs(rewards.reduce((a, b) => a + b, 0) - ep.return) < 1e-9, 'the per-step rewards add up to the return');
    // The last 32 steps the analyzer reads carry the same rewards.
    ep.lastSteps.forEach((s) => assert.equal(rewards[s.step - 1], s.reward));
    const p = replayEpisode(task, ep, { frames: false });
    assert.equal(p.reproduced, true, `episode ${ep.episode}: ${p.remarks.join(' ')}`);
    const last = ep.path[ep.path.length - 1]!;
    assert.deepEqual(p.rows[p.rows.length - 1]!.position, last, 'the re-simulated final position is the recorded one');
    assert.equal(p.every, 1);
    assert.equal(p.rows.length, ep.steps + 1);
    // The timeline is the recorded rewards, and the dense and sparse terms add up to them.
    p.rows.slice(1).forEach((r, i) => {
      assert.equal(r.reward, rewards[i]);
      assert.ok(Math.abs(r.dense! + r.sparse! - r.reward!) < 1e-9);
      assert.ok([0, SCALE_RULE.denseWeight].includes(Math.abs(r.dense!)));
      assert.ok([0, SCALE_RULE.sparseWeight].includes(Math.abs(r.sparse!)));
    });
  }
  assert.ok(
    stored.some((ep) => episodeRewards(ep)!.some((r) => r !== 0)),
    'some step was rewarded',
  );
});

test("re-simulating several episodes on two threads (the report's playback) gives each its own playback, frame for frame, in order", {
  timeout: 180_000,
}, async () => {
  const { dir } = await run();
  const stored = readEpisodes(dir);
  const suggestions = [{ id: 'S1', episodes: [{ episode: stored[1]!.episode, seed: stored[1]!.seed, steps: [2, 5] as [number, number], note: 'here' }] }];
  const opts = { maxFrames: REPORT_PLAYBACK.maxFrames, suggestions };
  // The env worker takes a share of these episodes (so this checks the two-thread path, not only one thread).
  const shares = replayShares(stored, opts);
  assert.ok(shares.theirs.length > 0 && shares.mine.length > 0, JSON.stringify(shares));
  assert.deepEqual(
    [...shares.mine, ...shares.theirs].sort(),
    stored.map((_, i) => i),
  );
  const one = stored.map((ep) => replayEpisode(task, ep, opts));
  const two = await replayEpisodes(task, stored, opts);
  assert.equal(two.length, one.length);
  two.forEach((p, i) => {
    assert.equal(p.episode, stored[i]!.episode, 'in the order asked');
    assert.ok(p.frames.length > 1 && p.frames.every((f) => f.length === FRAME_WIDTH * FRAME_HEIGHT));
    assert.deepEqual(p, one[i], `episode ${p.episode}: the same frames, rows and notes as one thread makes`);
  });
  assert.equal(two[1]!.notes.length, 1, "the analyzer's note reaches the worker's replay too");
});

test('a record whose actions were changed is caught: re-simulation says from which step it leaves the record', { timeout: 180_000 }, async () => {
  const { episodes } = await run();
  const ep = episodes.find((e) => e.steps > 40)!;
  const actions = episodeActions(ep)!;
  // Step 20 turns instead of what was recorded: the agent ends elsewhere.
  actions[19] = actions[19] === 3 ? 4 : 3;
  const p = replayEpisode(task, { ...ep, actions: actions.map((a) => STEP_CODES[a]).join('') }, { frames: false });
  assert.equal(p.reproduced, false);
  assert.match(p.remarks.join(' '), /from step (2\d|3\d|4\d) on/);
});

test('frames show the world from the agent: sky above, ground below on the plains, and turning changes the picture', { timeout: 180_000 }, async () => {
  const { episodes } = await run();
  const ep = episodes[0]!;
  const p = replayEpisode(task, ep, { maxFrames: 60 });
  assert.ok(p.frames.length <= 61 && p.frames.length >= 2);
  assert.equal(p.frames[0]!.length, FRAME_WIDTH * FRAME_HEIGHT);
  assert.ok(FRAME_PALETTE.length <= 256);
  // At the start the agent looks level: the top row is sky, the bottom row is not.
  const first = p.frames[0]!;
  const row = (f: Uint8Array, y: number) => f.subarray(y * FRAME_WIDTH, (y + 1) * FRAME_WIDTH);
  assert.ok(
    row(first, 0).every((v) => v === SKY_INDEX),
    'top row is sky',
  );
  assert.ok(
    row(first, FRAME_HEIGHT - 1).every((v) => v !== SKY_INDEX),
    'bottom row is ground',
  );
  assert.ok(new Set(first).size >= 3, 'more than sky and one colour');
  assert.ok(
    p.frames.some((f) => f.some((v, i) => v !== first[i])),
    'the picture changes as the agent moves and turns',
  );
});

test('the report draws a long episode in at most its frame cap, from the start to the last step, and says how it sampled', { timeout: 180_000 }, async () => {
  const dir = tempDir('rewardsmith-playback-long-');
  const [ep] = await recordPlaybackRun(dir, 1, 11, path.join(__dirname, 'fixtures', 'long-approach-pig.yaml'));
  assert.ok(ep && ep.steps > REPORT_PLAYBACK.maxFrames, `a ${ep?.steps}-step episode, longer than the cap`);
  const html = playbackSection(readSummary(dir) ?? null, [ep], []);
  const data = JSON.parse(/<script type="application\/json" class=pb-data>(.*?)<\/script>/s.exec(html)![1]!) as {
    every: number;
    height: number;
    rows: { step: number }[];
  };
  const every = Math.ceil(ep.steps / REPORT_PLAYBACK.maxFrames);
  assert.equal(data.every, every);
  assert.ok(data.rows.length <= REPORT_PLAYBACK.maxFrames + 1, `${data.rows.length} frames`);
  assert.deepEqual(
    data.rows.map((r) => r.step),
    [...Array.from({ length: Math.floor(ep.steps / every) + 1 }, (_, k) => k * every), ...(ep.steps % every ? [ep.steps] : [])],
    'the start, every k-th step, and the last step',
  );
  // One picture per row in the sprite (its PNG header's height), so the slider's every position has a frame.
  const png = Buffer.from(/src="data:image\/png;base64,([^"]+)"/.exec(html)![1]!, 'base64');
  assert.equal(png.readUInt32BE(20), data.rows.length * data.height);
  assert.match(html, new RegExp(`${ep.steps} steps · one frame every ${every} steps`));
  assert.match(html, new RegExp(`at most ${REPORT_PLAYBACK.maxFrames} frames each`));
  assert.doesNotMatch(html, /does not follow the record/, 're-simulating followed the recorded path');
});

test('records written before playback still read; playback says it cannot play them, and why', () => {
  const episodes = readEpisodes(path.join(FIXTURES, 'lava-deaths'));
  assert.ok(episodes.length > 0);
  assert.equal(episodes[0]!.actions, undefined);
  assert.throws(
    () => replayEpisode(BUILTIN_TASKS['explore-diamond']!, episodes[0]!),
    (e: Error) => e instanceof PlaybackError && /no recorded actions/.test(e.message),
  );
  const html = playbackSection(null, episodes, []);
  assert.match(html, /predate playback/);
});

test('a malformed actions string is a located record error', () => {
  const dir = tempDir('rewardsmith-playback-bad-');
  const ep = readFileSync(path.join(FIXTURES, 'lava-deaths', RUN_FILES.episodes), 'utf8')
    .trim()
    .split('\n')[0]!;
  const parsed = JSON.parse(ep);
  parsed.actions = '5'.repeat(parsed.steps - 1);
  writeFileSync(path.join(dir, 'summary.json'), '{}');
  const file = path.join(dir, RUN_FILES.episodes);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(parsed)}\n`);
  assert.throws(
    () => readEpisodes(dir),
    (e: Error) => e instanceof RunRecordError && /episodes\.ndjson:1: actions must be a string of one character per step/.test(e.message),
  );
  parsed.actions = `${'5'.repeat(parsed.steps - 1)}!`;
  writeFileSync(file, `${JSON.stringify(parsed)}\n`);
  assert.throws(
    () => readEpisodes(dir),
    (e: Error) => e instanceof RunRecordError && /invalid code "!" at step/.test(e.message),
  );
});

test('rewardsmith playback: a GIF of the episode, JSON for the dashboard, usage errors in the common format', { timeout: 180_000 }, async () => {
  const { dir, episodes } = await run();
  const ep = episodes.find((e) => !e.success) ?? episodes[0]!;
  const gif = path.join(tempDir('rewardsmith-playback-gif-'), 'ep.gif');
  const a = io();
  assert.equal(await playbackCommand([dir, '--episode', String(ep.episode), '--out', gif, '--max-frames', '40'], a.io), 0, a.out.stderr);
  const bytes = readFileSync(gif);
  assert.equal(bytes.subarray(0, 6).toString('ascii'), 'GIF89a');
  assert.equal(bytes.readUInt16LE(6), FRAME_WIDTH);
  assert.equal(bytes.readUInt16LE(8), FRAME_HEIGHT);
  // One image descriptor (0x2c after a graphic control extension) per frame.
  const frames = bytes.toString('latin1').split('\x21\xf9\x04').length - 1;
  assert.ok(frames >= 2 && frames <= 41, `${frames} frames`);
  assert.match(a.out.stderr, /playback: .*ep\.gif \(\d+ frames, (one per step|one every \d+ steps)\)/);

  const b = io();
  assert.equal(await playbackCommand([dir, '--episode', String(ep.episode), '--format', 'json'], b.io), 0, b.out.stderr);
  const record = JSON.parse(b.out.stdout) as PlaybackRecord;
  assert.equal(record.version, 1);
  assert.equal(record.episode, ep.episode);
  assert.equal(record.frame_count, record.rows.length);
  assert.equal(record.rows[record.rows.length - 1]!.step, ep.steps);
  assert.equal(Buffer.from(record.frames_png, 'base64').subarray(1, 4).toString('ascii'), 'PNG');
  assert.equal(record.reproduced, true);

  const c = io();
  assert.equal(await playbackCommand([dir, '--episode', '999'], c.io), 2);
  assert.match(c.out.stderr, /^rewardsmith playback: --episode 999: no such episode in .*episodes\.ndjson \(episodes 0–\d+\)\n/);
  const d = io();
  assert.equal(await playbackCommand([dir, '--out', 'ep.png'], d.io), 2);
  assert.match(d.out.stderr, /--out ep\.png: playback writes an animated GIF; name it \*\.gif/);
  const e = io();
  assert.equal(await playbackCommand([path.join(FIXTURES, 'lava-deaths'), '--episode', '2'], e.io), 1);
  assert.match(e.out.stderr, /^rewardsmith playback: .*lava-deaths: episode 2 has no recorded actions/);
});

test("the analyzer's notes on an episode: its own steps kept, malformed steps from a damaged suggestions.json dropped, text made text", () => {
  const suggestions = [
    {
      id: 'death-lava',
      episodes: [
        { episode: 3, seed: 1, steps: [12, 40] as [number, number], note: 'lava in view' },
        { episode: 4, seed: 2, note: 'other episode' },
      ],
    },
    { id: 'crafted', episodes: [{ episode: 3, seed: 1, steps: ['"><b>', 2] as unknown as [number, number], note: 42 as unknown as string }] },
  ];
  assert.deepEqual(notesFor(3, suggestions), [
    { suggestion: 'death-lava', steps: [12, 40], note: 'lava in view' },
    { suggestion: 'crafted', steps: null, note: '42' },
  ]);
  assert.deepEqual(notesFor(5, suggestions), []);
});

test('a mineflayer run (a real rollout on the embedded flying-squid) is not re-simulated: playback and the report say why, nothing breaks', async () => {
  // runner/test/fixtures/runs/mineflayer-rollout: `rollout --env mineflayer`; its records carry actions like any.
  const dir = path.join(tempDir('rewardsmith-playback-mineflayer-'), 'run');
  cpSync(path.join(FIXTURES, 'mineflayer-rollout'), dir, { recursive: true });
  assert.ok(readEpisodes(dir).every((e) => e.actions !== undefined));
  const why =
    /the run used the mineflayer backend: its episodes were played on a Minecraft server, whose world the simulator does not re-create, so they cannot be re-simulated/;
  const a = io();
  assert.equal(await playbackCommand([dir, '--episode', '0', '--format', 'json'], a.io), 1);
  assert.match(a.out.stderr, new RegExp(`^rewardsmith playback: ${dir}: ${why.source} \\(playback covers simulator runs\\)\\n$`));
  assert.equal(a.out.stdout, '');
  const { file } = await writeReport([dir]);
  const page = readFileSync(file, 'utf8');
  assert.match(page, new RegExp(`<h3>Episode playback</h3><p class=muted>No playback: ${why.source}`));
  assert.match(page, /<dt>rollout<\/dt><dd>45 steps on mineflayer, no training<\/dd>/);
});
