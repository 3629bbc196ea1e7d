// The sweep panel's logic without an editor: arguments from the settings, run rows from the runner's events,
// and the ranking with intervals once results.json exists.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { makeEvent, type RunnerEvent } from '../../runner/src/events';
import type { SweepResults } from '../../runner/src/records';
import { compareRates } from '../../runner/src/stats';
import { readSweepView, SweepProgress, sweepArgs, sweepHtml } from '../src/sweep-view';

const run = (run: string, state: Extract<RunnerEvent, { type: 'sweep_run' }>['state'], frames: number, extra: object = {}) =>
  makeEvent({
    type: 'sweep_run',
    run,
    reward: run.split('/')[0]!,
    seed: Number(run.split('-').pop()),
    state,
    job_id: state === 'pending' ? null : '41',
    run_dir: `/s/runs/${run}`,
    frames,
    total_frames: 1000,
    ...extra,
  });

test('the settings become sweep arguments, extra (Slurm) arguments before the event flag', () => {
  assert.deepEqual(
    sweepArgs('approach-tree', ['/w/a.reward.ts', '/w/b.reward.ts'], '/w/runs/sweep-1', {
      engine: 'slurm',
      seeds: 2,
      steps: 4096,
      extraArgs: ['--partition', 'gpu'],
    }),
    [
      'sweep',
      '--task',
      'approach-tree',
      '--rewards',
      '/w/a.reward.ts',
      '/w/b.reward.ts',
      '--seeds',
      '2',
      '--steps',
      '4096',
      '--engine',
      'slurm',
      '--out',
      '/w/runs/sweep-1',
      '--partition',
      'gpu',
      '--events',
      'ndjson',
    ],
  );
});

test('each run shows its latest state, job and progress; the notification line counts them', () => {
  const p = new SweepProgress();
  for (const e of [
    run('a/seed-0', 'pending', 0),
    run('b/seed-0', 'pending', 0),
    run('a/seed-0', 'running', 0),
    run('a/seed-0', 'running', 500),
    run('b/seed-0', 'failed', 0, { message: 'reward error (throw) at b.reward.ts:3:5: x <y>' }),
  ])
    p.apply(e);
  assert.equal(p.line(), '0/2 runs done · 1 running · 1 failed');
  p.apply(run('a/seed-0', 'completed', 1000, { success: { count: 3, n: 4 } }));
  assert.equal(p.line(), '1/2 runs done · 1 failed');
  const html = sweepHtml('Sweep', p, null, null, "default-src 'none'");
  assert.match(html, /<td>a\/seed-0<\/td><td>completed<\/td><td>41<\/td><td><progress max="100" value="100"><\/progress> 100 %<\/td><td>3\/4<\/td>/);
  assert.match(html, /failed: reward error \(throw\) at b\.reward\.ts:3:5: x &lt;y&gt;/, 'messages are escaped');
  assert.doesNotMatch(html, /<script/);
});

test('with results, the ranking lists mean success with its interval and difference to the leader, and rewards with no completed run say so', () => {
  const results: SweepResults = {
    version: 1,
    task: 'approach-tree',
    steps: 1000,
    seeds: [0, 1],
    engine: 'local',
    wall_seconds: 12,
    runs: [],
    rewards: [
      {
        reward: 'sparse',
        reward_file: '/w/s.reward.ts',
        seeds: 2,
        episodes: 8,
        mean_success: 0.25,
        ci95: [0, 0.5],
        mean_deaths: 0,
        rank: 2,
        versus_leader: compareRates({ count: 2, n: 8 }, { count: 5, n: 8 }),
      },
      { reward: 'broken', reward_file: '/w/x.reward.ts', seeds: 0, episodes: 0, mean_success: null, ci95: null, mean_deaths: null, rank: null },
      {
        reward: 'dense',
        reward_file: '/w/d.reward.ts',
        seeds: 2,
        episodes: 8,
        mean_success: 0.625,
        ci95: [0.375, 0.875],
        mean_deaths: 0,
        rank: 1,
        versus_leader: null,
      },
    ],
  };
  const html = sweepHtml('Sweep', new SweepProgress(), results, '<svg></svg>', "default-src 'none'");
  const order = [...html.matchAll(/<tr><td>(\d|—)<\/td><td>(\w+)<\/td>/g)].map((m) => m[2]);
  assert.deepEqual(order, ['dense', 'sparse', 'broken']);
  assert.match(html, /<td>62\.5 %<\/td><td>\[37\.5, 87\.5\] %<\/td><td>leader<\/td><td>2 seeds, 8 episodes<\/td>/);
  assert.match(html, /<td>25\.0 %<\/td><td>\[0\.0, 50\.0\] %<\/td><td>−37\.5 pts \[−[\d.]+, \+[\d.]+\] \(90 % CI\)<\/td>/);
  assert.match(html, /<td>broken<\/td><td colspan="4">no completed run<\/td>/);
});

test("every value of a sweep's results.json reaches the panel escaped, a number's field holding markup too (the folder may be someone else's)", () => {
  const markup = '<img src=x onerror=alert(1)>';
  const results = {
    version: 1,
    task: 'approach-tree',
    steps: 1000,
    seeds: [0],
    engine: 'local',
    wall_seconds: 1,
    runs: [],
    rewards: [
      {
        reward: markup,
        reward_file: '/w/s.reward.ts',
        seeds: markup,
        episodes: markup,
        mean_success: 0.5,
        ci95: [0, 1],
        mean_deaths: 0,
        rank: markup,
        versus_leader: null,
      },
    ],
  } as unknown as SweepResults;
  const progress = new SweepProgress();
  progress.apply(run('a/seed-0', 'failed', 0, { message: markup }));
  const html = sweepHtml(markup, progress, results, '<svg></svg>', "default-src 'none'");
  assert.ok(!html.includes(markup), html);
  assert.equal(html.split('&lt;img src=x onerror=alert(1)&gt;').length - 1, 7, 'title twice, the run message, reward, rank, seeds, episodes');
});

test("the panel's plot is the sweep folder's own results.svg, shown as an image: a link out of the folder is refused and said, naming it", () => {
  const root = mkdtempSync(path.join(tmpdir(), 'sweep-view-'));
  try {
    const sweep = path.join(root, 'sweep');
    mkdirSync(sweep);
    writeFileSync(path.join(sweep, 'results.json'), JSON.stringify({ runs: [], rewards: [] }));
    // Markup from a folder that may be someone else's: a link in it must not become part of the panel.
    const plot = '<svg xmlns="http://www.w3.org/2000/svg"><a href="https://example.com/login"><text>sign in</text></a></svg>';
    writeFileSync(path.join(sweep, 'results.svg'), plot);
    const said: string[] = [];
    const view = readSweepView(sweep, (m) => said.push(m));
    assert.equal(view.svg, plot);
    const html = sweepHtml('Sweep', new SweepProgress(), view.results, view.svg, "default-src 'none'");
    assert.ok(html.includes(`<img alt="held-out success per reward, with intervals" src="data:image/svg+xml;base64,${Buffer.from(plot).toString('base64')}">`));
    assert.doesNotMatch(html, /<svg|example\.com/);

    writeFileSync(path.join(root, 'secret.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><text>not the sweep</text></svg>');
    rmSync(path.join(sweep, 'results.svg'));
    symlinkSync(path.join(root, 'secret.svg'), path.join(sweep, 'results.svg'));
    assert.deepEqual(
      readSweepView(sweep, (m) => said.push(m)),
      { results: null, svg: null },
    );
    assert.deepEqual(said, [
      `${path.join(sweep, 'results.svg')}: a symbolic link to ${path.join(realpathSync(root), 'secret.svg')}, outside ${sweep}; not read`,
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
