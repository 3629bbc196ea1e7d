// The dashboard's playback comes from the CLI as a child process (`rewardsmith playback --format json`, as
// the extension host runs it); what arrives is checked before it reaches the webview. Here: a real rollout
// recorded by the CLI, played back by the CLI, read by the extension's checker; and damaged output refused.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pathToFileURL } from 'node:url';
import { readEpisodes, readSummary, type PlaybackRecord } from '../../runner/src/records';
import { parsePlaybackRecord, PLAYBACK_LIMITS } from '../src/core';
import type { PastRun } from '../src/dashboard/protocol';

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

let recorded: PlaybackRecord | undefined;
const RUN = path.join(dir, 'run');

test('a rollout recorded by the CLI plays back as a record the dashboard accepts', { timeout: 300_000 }, () => {
  const task = path.join(ROOT, 'runner/test/fixtures/short-approach-pig.yaml');
  const rollout = cli('rollout', '--task', task, '--steps', '600', '--envs', '4', '--workers', '0', '--seed', '3', '--out', RUN);
  assert.equal(rollout.status, 0, rollout.stderr);
  const played = cli('playback', RUN, '--episode', '0', '--format', 'json', '--max-frames', '40');
  assert.equal(played.status, 0, played.stderr);
  const record = parsePlaybackRecord(played.stdout);
  recorded = record;
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

const CHROMIUM = '/usr/bin/chromium';

test('the dashboard webview: ▶ beside a failed episode asks the host to play it; the playback it gets plays', { timeout: 300_000 }, async (t) => {
  if (!recorded) return t.skip('needs the recorded rollout of the test above');
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI) assert.fail(`${CHROMIUM} is missing`);
    return t.skip(`${CHROMIUM} not installed`);
  }
  // The webview bundle as the build makes it (browser, iife), in a page with the dashboard's elements and a
  // stand-in for VS Code's webview API that keeps what the webview posts.
  const esbuild = await import('esbuild');
  const bundle = path.join(dir, 'dashboard.js');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'extension/src/dashboard/main.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    outfile: bundle,
    logLevel: 'error',
  });
  const ids = ['live-label', 'live-status', 'live-result', 'success-note', 'eval', 'map-title', 'map-legend', 'playback', 'past'];
  const canvases = ['return', 'success', 'fps', 'entropy', 'approx-kl', 'clip-fraction', 'value-loss', 'explained-variance', 'learning-rate'];
  const page = path.join(dir, 'dashboard.html');
  writeFileSync(
    page,
    `<!doctype html><html><body>${ids.map((id) => `<div id="${id}"></div>`).join('')}
${canvases.map((c) => `<canvas id="chart-${c}"></canvas>`).join('')}<canvas id="map"></canvas>
<script>window.sent = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.sent.push(m) });</script>
<script src="dashboard.js"></script></body></html>`,
  );
  // A rollout has no training: the past-run table's training and evaluation figures are given here.
  const failed = readEpisodes(RUN).filter((e) => !e.success);
  const summary = {
    ...readSummary(RUN)!,
    reward_file: null,
    reward_sha256: null,
    wall_seconds: 1,
    backend: 'cpu',
    train: {
      updates: 0,
      frames: 0,
      mean_return: 0,
      success_rate: null,
      success: { count: 0, n: 0, rate: null, ci95: [0, 1] as [number, number], started_from_frame: 0, started_to_frame: 0, mean_return: null },
      entropy: 0,
      fps: 0,
    },
    eval: {
      episodes: 4,
      success_rate: 0,
      death_rate: 0,
      success: { count: 0, n: 4, rate: 0, ci95: [0, 0.49] as [number, number] },
      death: { count: 0, n: 4, rate: 0, ci95: [0, 0.49] as [number, number] },
      death_causes: {},
      avg_steps: 150,
      avg_distance_moved: 1,
    },
    generalisation_gap: null,
  };
  const past: PastRun = {
    name: 'run',
    dir: RUN,
    summary,
    metrics: [],
    failed: failed.map((e) => ({
      episode: e.episode,
      steps: e.steps,
      died: e.died,
      death_cause: e.deathCause,
      path: e.path.map(([x, , z]) => [x, z] as [number, number]),
      playable: e.actions !== undefined,
    })),
  };
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'],
  });
  try {
    const tab = await browser.newPage({ viewport: { width: 900, height: 1200 } });
    const problems: string[] = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    tab.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await tab.goto(pathToFileURL(page).href);
    await tab.evaluate((runs) => window.postMessage({ type: 'past-runs', runs }, '*'), [past]);
    const play = tab.locator('#map-legend button', { hasText: 'play' }).first();
    await play.click();
    const sent = await tab.evaluate(() => (window as unknown as { sent: unknown[] }).sent);
    const ask = sent.find((m) => (m as { type: string }).type === 'play') as { dir: string; episode: number };
    assert.deepEqual(ask, { type: 'play', dir: RUN, episode: failed[0]!.episode });
    // The host's answer: what `rewardsmith playback --format json` printed for that episode.
    const answer = cli('playback', RUN, '--episode', String(ask.episode), '--format', 'json', '--max-frames', '40');
    const record = parsePlaybackRecord(answer.stdout);
    await tab.evaluate((r) => window.postMessage({ type: 'playback', run: 'run', record: r }, '*'), record);
    await tab.waitForFunction(() => /^step 0 of \d+ · start/.test(document.querySelector('#playback .muted')?.textContent ?? ''));
    const pixels = () =>
      tab.evaluate(() => {
        const c = document.querySelector('#playback canvas.frame') as HTMLCanvasElement;
        return c.toDataURL();
      });
    const first = await pixels();
    const slider = tab.locator('#playback input[type=range]');
    await slider.fill(String(record.frame_count - 1));
    const readout = await tab.locator('#playback .muted').first().textContent();
    assert.match(readout ?? '', new RegExp(`^step ${record.rows[record.rows.length - 1]!.step} of ${record.steps} · `));
    assert.notEqual(await pixels(), first, 'the frame follows the slider');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
