// The dashboard's playback comes from the CLI as a child process (`rewardsmith playback --format json`, as
// the extension host runs it); what arrives is checked before it reaches the webview. Here: a real rollout
// recorded by the CLI, played back by the CLI, read by the extension's checker; and damaged output refused. Then
// the webview: an evaluated, analysed run read as the host reads past runs; ▶ on a failed episode and on a
// finding's evidence ask the host to play it, and the answer plays (from the cited step).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pathToFileURL } from 'node:url';
import { parsePlaybackRecord, PLAYBACK_LIMITS } from '../src/core';
import { readPastRuns } from '../src/dashboard/past-runs';
import { watchedPage, withChromium } from '../../runner/test/helpers/chromium';
import { cliSession } from '../../runner/test/helpers/cli-all';
import { recordPlaybackRun } from '../../runner/test/helpers/playback-run';
import { writeDashboardPage } from './helpers/dashboard-page';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-dashboard-playback-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// `rewardsmith ARGS…` through the real dispatcher, this file's command lines in one child process
// (runner/test/helpers/cli-all.ts); what it prints must fit what the host reads (PLAYBACK_LIMITS.chars).
const session = cliSession(ROOT, 240_000);
after(() => session.close());
async function cli(...args: string[]) {
  const r = await session.run(args);
  assert.ok(r.out.length <= PLAYBACK_LIMITS.chars, `rewardsmith ${args[0]} printed ${r.out.length} characters, more than the host reads`);
  return { status: r.code, stdout: r.out, stderr: r.err };
}

const RUN = path.join(dir, 'run');

test('a rollout recorded by the CLI plays back as a record the dashboard accepts', { timeout: 300_000 }, async () => {
  const task = path.join(ROOT, 'runner/test/fixtures/short-approach-pig.yaml');
  const rollout = await cli('rollout', '--task', task, '--steps', '600', '--envs', '4', '--workers', '0', '--seed', '3', '--out', RUN);
  assert.equal(rollout.status, 0, rollout.stderr);
  const played = await cli('playback', RUN, '--episode', '0', '--format', 'json', '--max-frames', '40');
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

const EVALUATED = path.join(dir, 'runs', 'evaluated');

test("the dashboard webview: ▶ beside a failed episode, or beside a finding's evidence, plays it there (at the cited step)", {
  timeout: 300_000,
}, async (t) => {
  // An evaluated run with the analyzer's findings, read as the extension host reads past runs.
  mkdirSync(EVALUATED, { recursive: true });
  await recordPlaybackRun(EVALUATED);
  const analyzed = await cli('analyze', EVALUATED);
  assert.equal(analyzed.status, 0, analyzed.stderr);
  const runs = readPastRuns(dir);
  assert.deepEqual(
    runs.map((r) => r.dir),
    [EVALUATED],
    'the rollout (no training, no evaluation) is not listed',
  );
  const [past] = runs;
  const finding = past!.findings.find((f) => f.evidence.some((e) => e.steps && e.playable));
  assert.ok(finding, `a finding cites a playable episode's steps: ${JSON.stringify(past!.findings)}`);
  const cited = finding.evidence.find((e) => e.steps && e.playable)!;
  const page = await writeDashboardPage(dir);
  await withChromium(
    t,
    async (browser) => {
      const { page: tab, problems } = await watchedPage(browser, { viewport: { width: 900, height: 1400 } });
      await tab.goto(pathToFileURL(page).href);
      await tab.evaluate((runs) => window.postMessage({ type: 'past-runs', runs }, '*'), runs);
      const sent = () => tab.evaluate(() => (window as unknown as { sent: { type: string }[] }).sent.filter((m) => m.type === 'play'));
      // What the host answers: `rewardsmith playback --format json` for the episode asked for.
      const answer = async (episode: number) =>
        parsePlaybackRecord((await cli('playback', EVALUATED, '--episode', String(episode), '--format', 'json', '--max-frames', '40')).stdout);
      const readout = () => tab.locator('#playback .muted').first().textContent();

      await tab.locator('#map-legend button', { hasText: 'play' }).first().click();
      const failed = past!.failed[0]!;
      assert.deepEqual((await sent())[0], { type: 'play', dir: EVALUATED, episode: failed.episode });
      const record = await answer(failed.episode);
      await tab.evaluate((r) => window.postMessage({ type: 'playback', run: 'evaluated', record: r }, '*'), record);
      await tab.waitForFunction(() => /^step 0 of \d+ · start/.test(document.querySelector('#playback .muted')?.textContent ?? ''));
      const pixels = () => tab.evaluate(() => (document.querySelector('#playback canvas.frame') as HTMLCanvasElement).toDataURL());
      const first = await pixels();
      await tab.locator('#playback input[type=range]').fill(String(record.frame_count - 1));
      assert.match((await readout()) ?? '', new RegExp(`^step ${record.rows[record.rows.length - 1]!.step} of ${record.steps} · `));
      assert.notEqual(await pixels(), first, 'the frame follows the slider');

      // A finding's evidence: its episode, opened at the first step it cites, the finding's note marked.
      assert.match((await tab.locator('#findings-title').textContent()) ?? '', new RegExp(`^Findings on runs/evaluated: ${past!.findings.length}$`));
      const label = `▶ episode ${cited.episode}, steps ${cited.steps![0]}–${cited.steps![1]}`;
      await tab.locator('#findings li', { hasText: finding.id }).locator('button', { hasText: label }).first().click();
      assert.deepEqual((await sent())[1], { type: 'play', dir: EVALUATED, episode: cited.episode, step: cited.steps![0] });
      const evidence = await answer(cited.episode);
      await tab.evaluate(({ r, step }) => window.postMessage({ type: 'playback', run: 'evaluated', record: r, step }, '*'), {
        r: evidence,
        step: cited.steps![0],
      });
      const shown = evidence.rows.find((row) => row.step >= cited.steps![0])!;
      await tab.waitForFunction((s) => new RegExp(`^step ${s} of `).test(document.querySelector('#playback .muted')?.textContent ?? ''), shown.step);
      assert.match((await readout()) ?? '', new RegExp(`^step ${shown.step} of ${evidence.steps} · `));
      assert.match((await tab.locator('#playback .pb-note.active').allTextContents()).join(' | '), new RegExp(finding.id));
      const artifacts = process.env.REWARDSMITH_TEST_ARTIFACTS ?? dir;
      mkdirSync(artifacts, { recursive: true });
      await tab.screenshot({ path: path.join(artifacts, 'dashboard-finding-playback.png'), fullPage: true });
      assert.deepEqual(problems, []);
    },
    { files: true },
  );
});
