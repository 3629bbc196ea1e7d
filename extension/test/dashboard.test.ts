// The run dashboard's webview as shipped (the markup of extension/src/dashboard.ts, the bundle of
// dashboard/main.ts) in headless Chromium, fed the progress events of a real run in which no episode finished
// (runner/test/fixtures/runs/first-updates): every chart has a line from the first update, the success chart
// says why it is empty, and the status line does not pass "return 0.00" off as a return.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeEvent } from '../../runner/src/events';
import { rateRecord, readMetrics } from '../../runner/src/records';
import { compareRates } from '../../runner/src/stats';
import { watchedPage, withChromium } from '../../runner/test/helpers/chromium';
import { writeDashboardPage } from './helpers/dashboard-page';

const ROOT = path.join(__dirname, '..', '..');

test('dashboard: charts from the first update, the PPO curves, and "no episode finished yet"', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-dashboard-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const page0 = await writeDashboardPage(dir);
  const metrics = readMetrics(path.join(ROOT, 'runner/test/fixtures/runs/first-updates'));
  const events = [
    makeEvent({
      type: 'started',
      command: 'train',
      task: 'approach-tree',
      reward_file: null,
      run_dir: dir,
      backend: 'wasm',
      env: 'sim',
      total_frames: 2048,
      num_envs: 4,
      resumed_from_frames: 0,
    }),
    ...metrics.map((m) => makeEvent({ type: 'progress', ...m, total_frames: 2048 })),
  ];
  await withChromium(
    t,
    async (browser) => {
      const { page, problems } = await watchedPage(browser, { viewport: { width: 1100, height: 1400 } });
      await page.goto(pathToFileURL(page0).href);
      await page.evaluate((evs) => {
        // A run refused before training, then the user trains anyway: the new run starts without the old verdict.
        window.postMessage({ type: 'live-start', label: 'refused' }, '*');
        const refused = { v: 2, t: 0, type: 'finished', ok: false, run_dir: '', summary: null, error: 'refused before training', check_errors: 1 };
        window.postMessage({ type: 'event', event: refused }, '*');
        window.postMessage({ type: 'live-start', label: 'approach-tree (live)' }, '*');
        for (const event of evs) window.postMessage({ type: 'event', event }, '*');
      }, events);
      await page.waitForFunction((n) => /2,048 \/ 2,048 frames/.test(document.getElementById('live-status')!.textContent ?? '') && n > 0, metrics.length);
      assert.equal(await page.evaluate(() => document.getElementById('live-result')!.textContent), '', "the refused run's verdict is gone");
      const label = (id: string) => page.evaluate((i) => document.getElementById(i)!.getAttribute('aria-label') ?? '', id);
      const n = metrics.length;
      assert.match(await label('chart-return'), new RegExp(`still running \\(return so far\\): ${n} points`));
      assert.match(await label('chart-return'), /episodes finished in the update: 0 points/);
      for (const id of ['chart-entropy', 'chart-approx-kl', 'chart-clip-fraction', 'chart-value-loss', 'chart-explained-variance', 'chart-learning-rate'])
        assert.match(await label(id), new RegExp(`: ${n} points`), id);
      assert.equal(await page.evaluate(() => document.getElementById('success-note')!.textContent), 'No success point yet: no episode has finished yet.');
      const status = await page.evaluate(() => document.getElementById('live-status')!.textContent ?? '');
      assert.match(status, /no episode finished yet, running -?\d+\.\d\d so far/);
      assert.doesNotMatch(status, /return 0\.00/);
      const artifacts = process.env.REWARDSMITH_TEST_ARTIFACTS ?? dir;
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: path.join(artifacts, 'dashboard-first-updates.png'), fullPage: true });
      assert.deepEqual(problems, []);
    },
    { files: true },
  );
});

test('dashboard: a fine-tuned run below its starting policy is named, live and among past runs', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-dashboard-below-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const page0 = await writeDashboardPage(dir);
  // The figures: the foundation held 22 of 100 held-out worlds, the fine-tuned run 11 of 100.
  const success = rateRecord(11, 100);
  const death = rateRecord(0, 100);
  const below = {
    checkpoint: '/runs/foundation/checkpoint',
    start: rateRecord(22, 100),
    difference: compareRates(success, rateRecord(22, 100)),
    message:
      "held-out success 11.0 % of 100 episodes (95 % CI 6.3–18.6 %) is below its starting policy's 22.0 % of 100 episodes (95 % CI 15.0–31.1 %) (/runs/foundation/checkpoint): −11.0 pts [−19.6, −2.3] (90 % CI); fine-tuning on this reward lost ground.",
  };
  const evalSummary = { episodes: 100, success_rate: 0.11, death_rate: 0, success, death, death_causes: {}, avg_steps: 1800, avg_distance_moved: 20 };
  const event = makeEvent({ type: 'eval', ...evalSummary, generalisation_gap: null, below_start: below });
  const summary = {
    task: 'approach-cow',
    reward_file: '/work/cow.reward.ts',
    reward_sha256: null,
    seed: 7,
    env: 'sim',
    env_steps: 256_000,
    wall_seconds: 600,
    backend: 'js',
    train: {
      updates: 125,
      frames: 256_000,
      mean_return: 1,
      success_rate: 0.1,
      success: { ...rateRecord(10, 100), started_from_frame: 0, started_to_frame: 1 },
      entropy: 1,
      fps: 1000,
    },
    eval: evalSummary,
    generalisation_gap: null,
    below_start: below,
  };
  const past = [{ name: 'cow-fine-tuned', dir, summary, metrics: [], failed: [], findings: [] }];
  await withChromium(
    t,
    async (browser) => {
      const { page, problems } = await watchedPage(browser, { viewport: { width: 1100, height: 1400 } });
      await page.goto(pathToFileURL(page0).href);
      await page.evaluate(
        ([ev, runs]) => {
          window.postMessage({ type: 'live-start', label: 'approach-cow (live)' }, '*');
          window.postMessage({ type: 'event', event: ev }, '*');
          window.postMessage({ type: 'past-runs', runs }, '*');
        },
        [event, past] as const,
      );
      await page.waitForFunction(() => /cow-fine-tuned/.test(document.getElementById('past')!.textContent ?? ''));
      const live = await page.evaluate(() => document.getElementById('eval')!.textContent ?? '');
      assert.match(live, /⚠ Below its starting policy: held-out success 11\.0 % of 100 episodes .* is below its starting policy's 22\.0 % of 100 episodes/);
      const row = await page.evaluate(() =>
        Array.from(document.querySelectorAll('#past tr'), (tr) => tr.textContent ?? '').find((text) => text.startsWith('against its starting policy')),
      );
      assert.match(row ?? '', /⚠ below: held-out success 11\.0 % .* −11\.0 pts \[−19\.6, −2\.3\] \(90 % CI\)/);
      assert.deepEqual(problems, []);
    },
    { files: true },
  );
});
