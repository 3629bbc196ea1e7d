// `rewardsmith report`: the page a researcher opens after a run. Built from recorded runs (two seeds of one
// reward, trained for real, and the analyzer's lava fixture), opened in headless Chromium with the network
// cut off: it must render its charts with no console error and no request leaving the file, and show every
// rate with its episode count and interval. A screenshot is kept (REWARDSMITH_TEST_ARTIFACTS, else a temp dir).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeRun } from '../src/analyze/analyze';
import { readSuggestions, RUN_FILES } from '../src/records';
import { loadRun, renderReport, writeReport } from '../src/report/report';
import { cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';
import { watchedPage, withChromium } from './helpers/chromium';

const FIXTURES = path.join(__dirname, 'fixtures', 'runs');
const ROOT = path.join(__dirname, '..', '..');
// `rewardsmith report ARGS…` through the real dispatcher, this file's command lines in one process (helpers/cli-all.ts).
const session = cliSession(ROOT, 120_000);
after(() => session.close());
const reportCli = async (...args: string[]) => {
  const r = await session.run(['report', ...args]);
  return { status: r.code, stdout: r.out, stderr: r.err };
};

function copyRuns(): { dir: string; runs: string[] } {
  const dir = tempDir('rewardsmith-report-');
  const runs = ['tree-dense-s0', 'tree-dense-s1', 'lava-deaths'].map((name) => {
    cpSync(path.join(FIXTURES, name), path.join(dir, name), { recursive: true });
    return path.join(dir, name);
  });
  return { dir, runs };
}

test('the page holds curves, the evaluation table with counts and intervals, death causes, maps and patches; metrics.csv is written', async () => {
  const { dir, runs } = copyRuns();
  const { file, messages } = await writeReport(runs, path.join(dir, 'out', 'report.html'));
  const html = readFileSync(file, 'utf8');
  // Each run's held-out rate says over how many episodes, with its interval.
  assert.match(html, /of 10 episodes \(95 % CI \d+\.\d–\d+\.\d %\)/);
  assert.match(html, /bootstrap over 2 seeds × 20 episodes/);
  // Death causes of the lava run, failed-episode maps and the analyzer's lava finding with its patch.
  assert.match(html, /<td>lava<\/td><td class=num>3<\/td>/);
  assert.ok((html.match(/<figure class=map>/g) ?? []).length >= 3);
  assert.match(html, /death-lava/);
  assert.match(html, /<pre class=diff>/);
  assert.match(html, /rewardsmith apply .*lava-deaths --suggestion death-lava/);
  // Self-contained: no script, style or image from elsewhere.
  assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//i);
  const csv = readFileSync(path.join(runs[0]!, 'metrics.csv'), 'utf8').trim().split('\n');
  const ndjson = readFileSync(path.join(runs[0]!, 'metrics.ndjson'), 'utf8').trim().split('\n');
  assert.equal(
    csv[0],
    'update,frames,fps,mean_return,success_rate,episodes,policy_loss,value_loss,entropy,kl,wall_seconds,finished_episodes,finished_return,unfinished_return,approx_kl,clip_fraction,explained_variance,learning_rate,success_n,success_ci95_lo,success_ci95_hi',
  );
  assert.equal(csv.length, ndjson.length + 1);
  assert.equal(csv[1]!.split(',')[1], String(JSON.parse(ndjson[0]!).frames));
  // TensorBoard needs no native install: every run with metrics gets its event file (tensorboard.test.ts reads it).
  assert.equal(readdirSync(path.join(runs[0]!, 'tensorboard')).filter((f) => f.startsWith('events.out.tfevents.')).length, 1);
  assert.ok(messages.includes(`TensorBoard: tensorboard --logdir ${dir}`), messages.join('\n'));
});

test('the report opens offline in headless Chromium: charts drawn, no console error, no network request', { timeout: 120_000 }, async (t) => {
  const { dir, runs } = copyRuns();
  const { file } = await writeReport(runs, path.join(dir, 'report.html'));
  await withChromium(t, async (browser) => {
    const { page, problems, requests } = await watchedPage(browser, { viewport: { width: 1200, height: 1400 }, warnings: true });
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => (window as unknown as { Chart?: { getChart(id: string): unknown } }).Chart?.getChart('chart-success') !== undefined);
    const drawn = await page.evaluate(() => {
      const C = (window as unknown as { Chart: { getChart(id: string): { data: { datasets: { label: string; data: unknown[] }[] } } } }).Chart;
      return ['chart-success', 'chart-return'].map((id) =>
        C.getChart(id)!
          .data.datasets.filter((d) => d.data.length > 0)
          .map((d) => d.label),
      );
    });
    // Two seeds' success curves, each with its interval band (high + low) and the line.
    assert.equal(drawn[0]!.filter((l) => !/95 % CI/.test(l)).length, 2, JSON.stringify(drawn[0]));
    assert.equal(drawn[0]!.filter((l) => /95 % CI/.test(l)).length, 4);
    // Returns: two runs plus their mean over seeds.
    assert.ok(
      drawn[1]!.some((l) => /mean of 2 seeds/.test(l)),
      JSON.stringify(drawn[1]),
    );
    // The PPO curves these runs recorded are drawn too, one line per run.
    const ppo = await page.evaluate(() => {
      const C = (window as unknown as { Chart: { getChart(id: string): { data: { datasets: { data: unknown[] }[] } } | undefined } }).Chart;
      return ['chart-entropy', 'chart-value-loss'].map((id) => C.getChart(id)?.data.datasets.filter((d) => d.data.length > 0).length ?? -1);
    });
    assert.deepEqual(ppo, [2, 2]);
    const canvasPixels = await page.evaluate(() => (document.getElementById('chart-success') as HTMLCanvasElement).toDataURL().length);
    assert.ok(canvasPixels > 5000, 'the success chart has content');
    const artifacts = process.env.REWARDSMITH_TEST_ARTIFACTS ?? dir;
    mkdirSync(artifacts, { recursive: true });
    const shot = path.join(artifacts, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    await page.screenshot({ path: path.join(artifacts, 'report-top.png') });
    assert.ok(statSync(shot).size > 20_000);
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
  });
});

test('rewardsmith report: usage errors in the common format; the last line says where the page is', async () => {
  const { runs } = copyRuns();
  const ok = await reportCli(runs[0]!);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout.trim().split('\n').pop(), `report: ${path.join(runs[0]!, 'report.html')} (open it in a browser; it works offline)`);
  const missing = await reportCli(path.join(runs[0]!, 'nope'));
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /^rewardsmith report: .*nope: no such run folder\nRun `rewardsmith report --help` for its options\.\n$/);
  const usage = await reportCli();
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /^rewardsmith report: missing RUN\.\.\./);
  const help = await reportCli('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: rewardsmith report RUN\.\.\. \[options\]/);
});

const PAYLOAD = '<img src=x onerror="document.title=\'pwned\'">';
// biome-ignore lint/suspicious/noExplicitAny: the tests edit records as plain JSON, any field
const editJson = (file: string, edit: (value: any) => void) => {
  const value = JSON.parse(readFileSync(file, 'utf8'));
  edit(value);
  writeFileSync(file, JSON.stringify(value, null, 2));
};

test('report writes no file through a symbolic link: a metrics.csv or report.html that links out of the run is refused', async () => {
  const { dir, runs } = copyRuns();
  const run = runs[0]!;
  for (const name of ['metrics.csv', 'report.html']) {
    const victim = path.join(dir, `victim-of-${name}`);
    writeFileSync(victim, 'precious\n');
    const link = path.join(run, name);
    rmSync(link, { force: true });
    symlinkSync(victim, link);
    const r = await reportCli(run);
    assert.equal(r.status, 1, r.stdout);
    assert.match(
      r.stderr,
      new RegExp(
        `^rewardsmith report: .*${name.replace('.', '\\.')} is a symbolic link \\(to .*victim-of-${name.replace('.', '\\.')}\\); refusing to write through it, nothing was written`,
      ),
    );
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', `${name}'s link target is untouched`);
    assert.ok(lstatSync(link).isSymbolicLink());
    rmSync(link);
  }
});

test('markup where a number belongs is refused by the checked readers, naming the file and the field', async () => {
  const { runs } = copyRuns();
  const tree = runs[0]!;
  editJson(path.join(tree, RUN_FILES.summary), (s) => (s.train.updates = PAYLOAD));
  const r = await reportCli(tree);
  assert.equal(r.status, 1);
  assert.equal(r.stderr, `rewardsmith report: ${path.join(tree, RUN_FILES.summary)}: train.updates must be a number, got a string\n`);
  assert.ok(!existsSync(path.join(tree, RUN_FILES.report)));

  const lava = runs[2]!;
  const analysis = await analyzeRun(lava);
  const file = path.join(lava, RUN_FILES.suggestions);
  writeFileSync(file, JSON.stringify({ version: 1, ...analysis }, null, 2));
  editJson(file, (a) => (a.suggestions[0].episodes[0].episode = PAYLOAD));
  assert.throws(() => readSuggestions(lava), {
    name: 'RunRecordError',
    message: `${file}: suggestions[0] (${analysis.suggestions[0]!.id}): episodes[0].episode must be a number, got a string`,
  });
  editJson(file, (a) => {
    a.suggestions[0].episodes[0].episode = 3;
    a.suggestions[0].episodes[0].steps = [1, PAYLOAD];
  });
  assert.throws(() => readSuggestions(lava), {
    message: `${file}: suggestions[0] (${analysis.suggestions[0]!.id}): episodes[0].steps must be [first, last] step numbers`,
  });
  const page = await reportCli(lava);
  assert.equal(page.status, 1);
  assert.match(page.stderr, /episodes\[0\]\.steps must be \[first, last\] step numbers/);
});

test('every value reaches the page escaped, numbers included, even when the records were not read through the checked readers', async () => {
  const { runs } = copyRuns();
  const run = await loadRun(runs[2]!);
  const hostile = structuredClone(run);
  hostile.name = PAYLOAD;
  (hostile.summary!.train as { updates: unknown }).updates = PAYLOAD;
  (hostile.summary as { seed: unknown }).seed = PAYLOAD;
  (hostile.analysis!.suggestions[0]!.episodes[0] as { episode: unknown }).episode = PAYLOAD;
  (hostile.analysis!.suggestions[0]!.episodes[0] as { steps: unknown }).steps = [PAYLOAD, PAYLOAD];
  (hostile.episodes[0] as { episode: unknown }).episode = PAYLOAD;
  const html = renderReport([hostile]);
  assert.doesNotMatch(html, /<img/i);
  assert.match(html, /&lt;img src=x onerror=&quot;document\.title=&#39;pwned&#39;&quot;&gt;/);
});

test('the page forbids inline handlers and foreign script: a payload that got into the markup does not run, and the charts still render', {
  timeout: 120_000,
}, async (t) => {
  const { dir, runs } = copyRuns();
  // A run folder whose very name is markup, and markup spliced raw into the page as if escaping had missed it.
  const named = path.join(dir, PAYLOAD.replace(/\//g, '_'));
  cpSync(runs[0]!, named, { recursive: true });
  const { file } = await writeReport([named, runs[1]!], path.join(dir, 'report.html'));
  const page0 = readFileSync(file, 'utf8');
  writeFileSync(file, page0.replace('<h2>Evaluation', `${PAYLOAD}<script>document.title='pwned by script'</script><h2>Evaluation`));
  await withChromium(t, async (browser) => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => (window as unknown as { Chart?: { getChart(id: string): unknown } }).Chart?.getChart('chart-success') !== undefined);
    await page.waitForTimeout(300);
    assert.match(await page.title(), /^Rewardsmith report: 2 runs$/, 'no injected handler or script ran');
    const datasets = await page.evaluate(
      () => (window as unknown as { Chart: { getChart(id: string): { data: { datasets: unknown[] } } } }).Chart.getChart('chart-success')!.data.datasets.length,
    );
    assert.ok(datasets >= 2, 'the success chart has its curves');
    // The blocked script and handler are console errors (the policy reporting them); nothing may throw.
    assert.deepEqual(
      problems.filter((p) => p.startsWith('pageerror')),
      [],
    );
  });
});

test('a sweep\'s or loop\'s folder is reported whole, its runs labelled by reward and seed (not all "seed-0")', async () => {
  const dir = tempDir('rewardsmith-report-sweep-');
  const sweep = path.join(dir, 'sweep');
  for (const [fixture, to] of [
    ['tree-dense-s0', 'approach-tree.dense/seed-0'],
    ['tree-dense-s1', 'approach-tree.dense/seed-1'],
    ['lava-deaths', 'lava/seed-0'],
  ] as const)
    cpSync(path.join(FIXTURES, fixture), path.join(sweep, 'runs', to), { recursive: true });
  writeFileSync(path.join(sweep, 'results.json'), '{}');
  const { file } = await writeReport([sweep]);
  assert.equal(file, path.join(sweep, 'report.html'));
  const html = readFileSync(file, 'utf8');
  const headings = [...html.matchAll(/<section class=run id="run-\d+"><h2>([^<]*)<\/h2>/g)].map((m) => m[1]);
  assert.deepEqual(headings, ['approach-tree.dense · seed 0', 'approach-tree.dense · seed 1', 'explore-diamond.dense · seed 2']);
  assert.doesNotMatch(html, /<h2>seed-0<\/h2>/);

  // A loop's candidates share their reward's name and seed: the folder below the loop tells them apart.
  const loop = path.join(dir, 'loop');
  for (const i of [1, 2]) cpSync(path.join(FIXTURES, 'tree-dense-s0'), path.join(loop, `iteration-${i}`, 'candidate-0', 'run'), { recursive: true });
  const loopHtml = readFileSync((await writeReport([loop])).file, 'utf8');
  assert.match(loopHtml, /<h2>approach-tree\.dense · seed 0 \(iteration-1\/candidate-0\/run\)<\/h2>/);
  assert.match(loopHtml, /<h2>approach-tree\.dense · seed 0 \(iteration-2\/candidate-0\/run\)<\/h2>/);
});

/** The charts' data embedded in a report page. */
function chartsOf(html: string): { id: string; series: { label: string; points: { x: number; y: number }[]; dashed?: boolean }[]; empty?: string }[] {
  const json = /<script type="application\/json" id=report-data>([^<]*)<\/script>/.exec(html)![1]!;
  return (JSON.parse(json) as { charts: ReturnType<typeof chartsOf> }).charts;
}

test('charts from the first update: returns of finished and still-running episodes apart, "no episode finished yet", the PPO curves', async () => {
  // A 2,048-frame approach-tree run (4 envs, 8 updates): no 2,000-step episode has finished yet. Recorded by
  // `rewardsmith train runner/rewards/approach-tree.dense.reward.ts --task approach-tree --envs 4 --steps 2048
  // --seed 3 --eval-episodes 2` (its metrics.ndjson, summary.json, reward.ts and eval/ kept).
  const dir = tempDir('rewardsmith-report-first-');
  const run = path.join(dir, 'first-updates');
  cpSync(path.join(FIXTURES, 'first-updates'), run, { recursive: true });
  const html = readFileSync((await writeReport([run])).file, 'utf8');
  const charts = new Map(chartsOf(html).map((c) => [c.id, c]));
  const metrics = readFileSync(path.join(run, 'metrics.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { frames: number; episodes: number });
  assert.equal(metrics[metrics.length - 1]!.episodes, 0, 'the fixture: no episode has finished');
  assert.match(charts.get('chart-success')!.empty!, /approach-tree\.dense · seed 3: no episode finished yet/);
  assert.match(html, /<p class=note>No success point yet for approach-tree\.dense · seed 3: no episode finished yet\.<\/p>/);
  const returns = charts.get('chart-return')!.series;
  const running = returns.find((s) => /episodes still running \(return so far\)/.test(s.label))!;
  assert.equal(running.dashed, true);
  assert.deepEqual(
    running.points.map((p) => p.x),
    metrics.map((m) => m.frames),
    'a point from the first update on',
  );
  assert.equal(returns.find((s) => /episodes finished in the update/.test(s.label))!.points.length, 0);
  for (const id of ['chart-entropy', 'chart-approx-kl', 'chart-clip-fraction', 'chart-value-loss', 'chart-explained-variance', 'chart-learning-rate']) {
    const chart = charts.get(id)!;
    assert.ok(chart, `${id} is on the page`);
    assert.equal(chart.series[0]!.points.length, metrics.length, `${id}: every update`);
    assert.match(html, new RegExp(`<canvas id="${id}">`));
  }
  // A run that predates a field says so instead of drawing nothing silently.
  const old = path.join(dir, 'old');
  cpSync(path.join(FIXTURES, 'tree-dense-s0'), old, { recursive: true });
  const oldCharts = new Map(chartsOf(readFileSync((await writeReport([old])).file, 'utf8')).map((c) => [c.id, c]));
  assert.match(oldCharts.get('chart-clip-fraction')!.empty!, /Not recorded by these runs/);
  assert.equal(oldCharts.get('chart-entropy')!.empty, undefined);
});
