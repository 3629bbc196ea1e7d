// `rewardsmith report RUN… [--out report.html]`: one self-contained HTML page for a run or a set of runs —
// training curves with 95 % intervals, the evaluation table, death causes, maps of failed episodes and the
// analyzer's findings with their patches. Chart.js is inlined (no network: it opens offline, from a mail
// attachment or a cluster's scratch folder); everything else is plain HTML and SVG rendered here.
// Also writes the run's metrics as CSV and as a TensorBoard event file (tensorboard.ts, no native dependency).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CommandError, parseCommandArgs, requireExisting, runCommand, UsageError } from '../args';
import { UnsafePathError, writeAtomic } from '../files';
import {
  isRunFolder,
  METRICS_COLUMNS,
  metricsCsv,
  readEpisodes,
  readMetrics,
  readSummary,
  RUN_FILES,
  RunRecordError,
  runFoldersUnder,
  type EpisodeRecord,
  type RunSummary,
  type UpdateMetrics,
} from '../records';
import { bootstrapMean, formatRate, percentText, wilson, type RateEstimate } from '../stats';
import { analyzeRun, readAnalysis, type Analysis, type Suggestion } from '../analyze/analyze';
import { html, joinHtml, trusted, type Html } from './html';
import { PLAYBACK_STYLE, playbackScriptSources, playbackSection, reportPlaybacks } from './playback';
import type { Playback, PlaybackError } from '../playback/replay';
import { CURVES_SCRIPT, trainingCharts, type Chart } from './curves';
import { writeEventFile } from './tensorboard';

/** Everything the page shows about one run folder. */
export interface RunData {
  dir: string;
  name: string;
  summary: RunSummary | null;
  metrics: UpdateMetrics[];
  episodes: EpisodeRecord[];
  /** The analyzer's result: suggestions.json when the run has one, else computed now (not written). */
  analysis: Pick<Analysis, 'suggestions' | 'rewardFile'> | null;
  /** Why a part is missing (no evaluation yet, analyzer failed…), shown on the page instead of it. */
  notes: string[];
  /** The playback section's episodes re-simulated, or why they cannot be (`reportPlaybacks`). */
  playbacks?: Playback[] | PlaybackError;
}

const MAX_MAPS = 12;
const MAX_PATH_POINTS = 400;

export async function loadRun(dir: string): Promise<RunData> {
  requireExisting(dir, 'run folder');
  const notes: string[] = [];
  const summary = readSummary(dir) ?? null;
  const metrics = readMetrics(dir);
  let episodes: EpisodeRecord[] = [];
  if (existsSync(path.join(dir, RUN_FILES.episodes)) || existsSync(path.join(dir, RUN_FILES.failedEpisodes))) episodes = readEpisodes(dir);
  else notes.push('No evaluation episodes yet (the run has not finished, or ran with --eval-episodes 0).');
  if (!summary && metrics.length === 0 && episodes.length === 0) {
    throw new CommandError(
      `${dir}: not a run folder (no ${RUN_FILES.summary}, ${RUN_FILES.metrics} or ${RUN_FILES.episodes}), nor a sweep or loop folder with runs in it`,
    );
  }
  let analysis: RunData['analysis'] = null;
  const suggestionsFile = path.join(dir, RUN_FILES.suggestions);
  if (existsSync(suggestionsFile)) analysis = readAnalysis(dir)!;
  else if (episodes.length > 0) {
    try {
      analysis = await analyzeRun(dir);
    } catch (err) {
      notes.push(`The analyzer could not read this run: ${(err as Error).message}`);
    }
  }
  return { dir: path.resolve(dir), name: path.basename(path.resolve(dir)), summary, metrics, episodes, analysis, notes };
}

const pct = (x: number) => percentText(x);

function rateOf(episodes: EpisodeRecord[], pick: (e: EpisodeRecord) => boolean): RateEstimate {
  return wilson(episodes.filter(pick).length, episodes.length);
}

/** Runs of one reward on one task (seeds of one experiment), pooled in the table and the curves. */
function groupsOf(runs: RunData[]): { label: string; runs: RunData[] }[] {
  const groups = new Map<string, RunData[]>();
  for (const r of runs) {
    if (!r.summary) continue;
    const key = `${r.summary.task} · ${r.summary.reward_file ? path.basename(r.summary.reward_file) : 'no reward'}${r.summary.reward_sha256 ? ` · ${r.summary.reward_sha256.slice(0, 8)}` : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups].filter(([, rs]) => rs.length > 1).map(([label, rs]) => ({ label, runs: rs }));
}

function evaluationTable(runs: RunData[]): Html {
  const rows = runs.map((r) => {
    const s = r.summary;
    const success = rateOf(r.episodes, (e) => e.success);
    const deaths = rateOf(r.episodes, (e) => e.died);
    const avgSteps = r.episodes.length ? r.episodes.reduce((t, e) => t + e.steps, 0) / r.episodes.length : Number.NaN;
    return html`<tr><td>${r.name}</td><td>${s?.task ?? '—'}</td><td>${s?.reward_file ? path.basename(s.reward_file) : '—'}</td><td class=num>${s?.seed ?? '—'}</td>
<td class=num>${(s?.env_steps ?? 0).toLocaleString('en-US')}</td><td>${formatRate(success)}</td><td>${formatRate(deaths)}</td><td class=num>${Number.isNaN(avgSteps) ? '—' : avgSteps.toFixed(0)}</td></tr>`;
  });
  const pooled = groupsOf(runs).map((g) => {
    const est = bootstrapMean(g.runs.map((r) => r.episodes.map((e) => (e.success ? 1 : 0))));
    const text =
      est.n === 0
        ? '—'
        : `${pct(est.mean)} (95 % CI ${(100 * est.ci95[0]).toFixed(1)}–${pct(est.ci95[1])}, bootstrap over ${est.groups} seeds × ${est.n} episodes)`;
    return html`<tr class=pooled><td colspan=5>${g.label} — ${g.runs.length} runs pooled</td><td colspan=3>${text}</td></tr>`;
  });
  return html`<table class=eval><thead><tr><th>run</th><th>task</th><th>reward</th><th>seed</th><th>frames</th><th>success (held-out)</th><th>deaths</th><th>avg steps</th></tr></thead>
<tbody>${joinHtml(rows, '\n')}${joinHtml(pooled, '\n')}</tbody></table>`;
}

function deathCauses(r: RunData): Html {
  const causes = new Map<string, number>();
  for (const e of r.episodes) if (e.died) causes.set(e.deathCause ?? 'other', (causes.get(e.deathCause ?? 'other') ?? 0) + 1);
  if (r.episodes.length === 0) return html`<p class=muted>No evaluation episodes.</p>`;
  if (causes.size === 0) return html`<p>No deaths in ${r.episodes.length} evaluation episodes.</p>`;
  const rows = [...causes]
    .sort((a, b) => b[1] - a[1])
    .map(([cause, k]) => {
      const w = wilson(k, r.episodes.length);
      // A bar drawn as SVG, not a style attribute: the page's policy allows no inline styles but its sheet.
      return html`<tr><td>${cause}</td><td class=num>${k}</td><td><svg class=bar width="200" height="10" aria-hidden="true"><rect height="10" width="${(2 * 100 * w.rate).toFixed(1)}"/></svg> ${formatRate(w)}</td></tr>`;
    });
  return html`<table class=causes><thead><tr><th>cause</th><th>deaths</th><th>share of evaluation episodes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Top-down map (x right, z down, as on a Minecraft map) of one episode's path, equal scale on both axes. */
function episodeMap(e: EpisodeRecord): Html {
  const step = Math.max(1, Math.ceil(e.path.length / MAX_PATH_POINTS));
  const pts = e.path.filter((_, i) => i % step === 0 || i === e.path.length - 1).map(([x, , z]) => [x, z] as const);
  const xs = pts.map((p) => p[0]),
    zs = pts.map((p) => p[1]);
  const minX = Math.min(...xs),
    maxX = Math.max(...xs),
    minZ = Math.min(...zs),
    maxZ = Math.max(...zs);
  const span = Math.max(4, maxX - minX, maxZ - minZ);
  const size = 150,
    pad = 10;
  const cx = (minX + maxX) / 2,
    cz = (minZ + maxZ) / 2;
  const px = (x: number) => pad + ((x - cx) / span + 0.5) * (size - 2 * pad);
  const pz = (z: number) => pad + ((z - cz) / span + 0.5) * (size - 2 * pad);
  const line = pts.map(([x, z]) => `${px(x).toFixed(1)},${pz(z).toFixed(1)}`).join(' ');
  const [sx, sz] = pts[0] ?? [0, 0];
  const [ex, ez] = pts[pts.length - 1] ?? [0, 0];
  const outcome = e.died ? `died: ${e.deathCause ?? 'other'}` : e.truncated ? 'ran out of time' : 'failed';
  return html`<figure class=map><svg viewBox="0 0 ${size} ${size}" width="${size}" height="${size}" role=img aria-label="path of episode ${e.episode}">
<rect width="${size}" height="${size}" class=ground /><polyline points="${line}" class=path />
<circle cx="${px(sx).toFixed(1)}" cy="${pz(sz).toFixed(1)}" r=4 class=start /><path d="M${(px(ex) - 4).toFixed(1)},${(pz(ez) - 4).toFixed(1)} l8,8 m0,-8 l-8,8" class=end />
<text x="${size - 4}" y="${size - 4}" text-anchor=end class=scale>${span.toFixed(0)} m across</text></svg>
<figcaption>episode ${e.episode} · seed ${e.seed}<br>${outcome} · ${e.steps} steps</figcaption></figure>`;
}

function diffHtml(diff: string): Html {
  const lines = diff
    .trimEnd()
    .split('\n')
    .map((l) => {
      const cls = l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : l.startsWith('@@') ? 'hunk' : '';
      return html`<span class="${cls}">${l}</span>`;
    });
  return joinHtml(lines, '\n');
}

function findings(r: RunData): Html {
  if (!r.analysis) return html`<p class=muted>No analysis (no evaluation episodes).</p>`;
  const list: Suggestion[] = r.analysis.suggestions;
  if (list.length === 0) return html`<p>The analyzer found no failure pattern.</p>`;
  const finding = (s: Suggestion) => {
    const evidence = s.episodes.slice(0, 3).map((e) => html`<li>episode ${e.episode}${e.steps ? `, steps ${e.steps[0]}–${e.steps[1]}` : ''}: ${e.note}</li>`);
    const more = s.episodes.length > 3 && html`<li class=muted>… ${s.episodes.length - 3} more</li>`;
    const patch = s.diff
      ? html`<p>Patch to ${r.analysis!.rewardFile ?? 'the reward'} — apply with <code>rewardsmith apply ${r.dir} --suggestion ${s.id}</code></p><pre class=diff>${diffHtml(s.diff)}</pre>`
      : s.patchUnavailable && html`<p class=muted>No patch: ${s.patchUnavailable}.</p>`;
    return html`<div class=finding><h4>${s.id} <span class=muted>· ${pct(s.share)} of examined episodes</span></h4><p>${s.message}</p>
<ul>${evidence}${more}</ul>
${patch}</div>`;
  };
  return joinHtml(list.map(finding), '\n');
}

function runSection(r: RunData, i: number): Html {
  const s = r.summary;
  const failed = r.episodes.filter((e) => !e.success);
  const facts = s
    ? html`<dl><dt>task</dt><dd>${s.task}</dd><dt>reward</dt><dd>${s.reward_file ?? '—'}</dd><dt>seed</dt><dd>${s.seed}</dd>
${
  // A rollout's summary (rewardsmith rollout, on the simulator or a Minecraft server) has no training.
  s.train
    ? html`<dt>training</dt><dd>${s.train.frames.toLocaleString('en-US')} frames, ${s.train.updates} updates, ${s.wall_seconds.toFixed(0)} s, backend ${s.backend}</dd>`
    : html`<dt>rollout</dt><dd>${(s.env_steps ?? 0).toLocaleString('en-US')} steps on ${s.env ?? 'sim'}, no training</dd>`
}</dl>`
    : html`<p class=muted>No summary.json: training has not finished.</p>`;
  const maps =
    failed.length === 0
      ? html`<p>None.</p>`
      : html`<p>${failed.length} of ${r.episodes.length} evaluation episodes failed${failed.length > MAX_MAPS ? `; the first ${MAX_MAPS} are shown` : ''}. Top-down paths: ● start, ✕ end.</p><div class=maps>${failed.slice(0, MAX_MAPS).map(episodeMap)}</div>`;
  return html`<section class=run id="run-${i}"><h2>${r.name}</h2><p class=muted>${r.dir}</p>${facts}
${r.notes.map((n) => html`<p class=note>${n}</p>`)}
<h3>Death causes</h3>${deathCauses(r)}
<h3>Failed episodes</h3>${maps}
<h3>Episode playback</h3>${trusted(playbackSection(s, r.episodes, r.analysis?.suggestions ?? [], `run-${i}-playback`, r.playbacks))}
<h3>Analyzer findings and patches</h3>${findings(r)}</section>`;
}

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#1d232a;background:#fff}
h1{font-size:22px;margin-bottom:4px}h2{border-top:1px solid #d5d9de;padding-top:16px;margin-top:32px}h3{margin:18px 0 6px}h4{margin:6px 0}
table{border-collapse:collapse;margin:8px 0}th,td{border-bottom:1px solid #e3e6ea;padding:4px 8px;text-align:left;vertical-align:top}td.num{text-align:right}
tr.pooled td{background:#f3f6fa;font-weight:600}.muted{color:#66707a}.note{background:#fff7e0;padding:6px 10px;border-left:3px solid #e0a800}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0}dt{color:#66707a}dd{margin:0}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:16px}.chart{height:280px;position:relative}.ppo{grid-template-columns:1fr 1fr 1fr}.ppo .chart{height:200px}.caption{font-size:12px;color:#66707a}
.bar{vertical-align:middle}.bar rect{fill:#c0392b}
.maps{display:flex;flex-wrap:wrap;gap:10px}.map{margin:0;font-size:12px;text-align:center}.ground{fill:#eef3e8;stroke:#c9d3bf}
.path{fill:none;stroke:#2c6fbb;stroke-width:1.5}.start{fill:#2e9d4a}.end{stroke:#c0392b;stroke-width:2.5}.scale{font-size:9px;fill:#66707a}
.finding{border:1px solid #e3e6ea;border-radius:4px;padding:8px 12px;margin:10px 0}pre.diff{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}
pre .add{color:#1a7f37;background:#e6ffec}pre .del{color:#cf222e;background:#ffebe9}pre .hunk{color:#8250df}code{background:#f0f2f4;padding:0 3px}`;

/** One chart's canvas, its caption, and why it has no points where that is so. */
function chartHtml(c: Chart): Html {
  return html`<div><h4>${c.title}</h4><div class=chart><canvas id="${c.id}"></canvas></div>${c.empty ? html`<p class=note>${c.empty}</p>` : ''}<p class=caption>${c.caption}</p></div>\n`;
}

/** Chart.js's standalone build, inlined so the page needs no network. */
function chartJsSource(): string {
  const require = createRequire(__filename);
  let file: string;
  try {
    // Beside the bundle (dist/, where the build copies it), else in the installed package: its exports map
    // hides dist/, but the standalone UMD build sits beside the CommonJS entry.
    file = path.join(__dirname, 'chart.umd.min.js');
    if (!existsSync(file)) file = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');
    if (!existsSync(file)) throw new Error(file);
  } catch {
    throw new CommandError('chart.js is not installed next to the runner (it is a dependency of rewardsmith: reinstall the package)');
  }
  return readFileSync(file, 'utf8');
}

/** A Content-Security-Policy source for an inline script or style: the sha256 of its exact text. */
const sha256Source = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The whole page for these runs. Its Content-Security-Policy lets nothing load and nothing run but the two
 * scripts and the style sheet it carries, each allowed by the hash of its text: no inline event handler,
 * injected script or style attribute runs or applies, even if markup got past the escaping.
 */
export function renderReport(runs: RunData[], generatedAt = new Date()): string {
  const charts = trainingCharts(runs, groupsOf(runs));
  const data = JSON.stringify({ charts }).replace(/</g, '\\u003c');
  const title = runs.length === 1 ? `Rewardsmith report: ${runs[0]!.name}` : `Rewardsmith report: ${runs.length} runs`;
  const hasCurves = runs.some((r) => r.metrics.length > 0);
  const chartJs = chartJsSource().replace(/<\/script/gi, '<\\/script');
  const sections = joinHtml(runs.map(runSection), '\n');
  const playbackScripts = playbackScriptSources(sections.text);
  const styleSheet = `${STYLE}\n${PLAYBACK_STYLE}`;
  const policy = [
    "default-src 'none'",
    `script-src ${[chartJs, CURVES_SCRIPT, ...playbackScripts].map(sha256Source).join(' ')}`,
    `style-src ${sha256Source(styleSheet)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const curves = hasCurves
    ? html`<div class=charts>${charts.slice(0, 2).map(chartHtml)}</div>
<h3>PPO</h3><div class="charts ppo">${charts.slice(2).map(chartHtml)}</div>`
    : html`<p class=muted>No metrics.ndjson: these runs have no training curves.</p>`;
  return html`<!doctype html>
<html lang=en><head><meta charset=utf-8><meta name=viewport content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<title>${title}</title><style>${trusted(styleSheet)}</style></head><body>
<h1>${title}</h1><p class=muted>Generated ${generatedAt.toISOString()} by <code>rewardsmith report</code>. Rates are over the episodes named beside them, with 95 % Wilson intervals.</p>
<h2>Evaluation on held-out worlds</h2>${evaluationTable(runs)}
<h2>Training curves</h2>${curves}
${sections}
<script>${trusted(chartJs)}</script>
<script type="application/json" id=report-data>${trusted(data)}</script>
<script>${trusted(CURVES_SCRIPT)}</script>
${playbackScripts.map((source) => html`<script>${trusted(source)}</script>\n`)}</body></html>
`.text;
}

/** Curves TensorBoard shows, as `train/<column>`: every metrics.csv column but the step's own counters. */
const TENSORBOARD_TAGS = METRICS_COLUMNS.filter((c) => c !== 'update' && c !== 'frames' && c !== 'wall_seconds');

/** metrics.csv beside metrics.ndjson and a TensorBoard event file in RUN/tensorboard/, step = training frames. */
export async function writeMetricExports(run: RunData): Promise<{ csv: string | null; tensorboard: string | null; tensorboardError: string | null }> {
  if (run.metrics.length === 0) return { csv: null, tensorboard: null, tensorboardError: null };
  const csv = path.join(run.dir, RUN_FILES.metricsCsv);
  writeAtomic(run.dir, csv, metricsCsv(run.metrics));
  // metrics.ndjson keeps seconds since the run started; its last line was written at the file's mtime.
  const last = run.metrics[run.metrics.length - 1]!;
  const started = statSync(path.join(run.dir, RUN_FILES.metrics)).mtimeMs / 1000 - (last.wall_seconds ?? 0);
  const steps = run.metrics.map((m) => ({
    step: m.frames,
    wallTime: started + (m.wall_seconds ?? 0),
    scalars: TENSORBOARD_TAGS.flatMap((c) => (typeof m[c] === 'number' ? [{ tag: `train/${c}`, value: m[c] as number }] : [])),
  }));
  const dir = path.join(run.dir, RUN_FILES.tensorboard);
  try {
    writeEventFile(dir, steps, started);
  } catch (err) {
    return { csv, tensorboard: null, tensorboardError: `TensorBoard file not written: ${(err as Error).message}` };
  }
  return { csv, tensorboard: dir, tensorboardError: null };
}

export const REPORT_SPEC = {
  command: 'report',
  summary:
    "Writes one self-contained HTML page (opens offline) for one run or a set of runs: curves with 95 % intervals, the evaluation\ntable, death causes, maps of failed episodes and the analyzer's findings with patches. Also writes RUN/metrics.csv and\na TensorBoard event file in RUN/tensorboard/ (tensorboard --logdir RUN/tensorboard).",
  positionals: 'RUN...',
  epilog: 'A RUN may also be a sweep or loop folder: its runs are reported, labelled by reward and seed.',
  minPositionals: 1,
  maxPositionals: 1000,
  options: {
    out: {
      type: 'string',
      valueName: 'FILE',
      description: `where to write the page (default: RUN/${RUN_FILES.report} for one run, ./report.html for several)`,
    },
  },
} as const;

/**
 * How a run is named on the page: by its reward and seed (a sweep's runs are all folders named seed-N), with
 * the folder's path below the runs' common folder where that alone leaves two runs alike (a loop's
 * candidates share a reward name); by its folder name when it has no summary.
 */
export function labelRuns(runs: RunData[]): void {
  const byRewardAndSeed = runs.map((r) =>
    r.summary
      ? `${r.summary.reward_file ? path.basename(r.summary.reward_file).replace(/\.reward\.[jt]s$/, '') : 'no reward'} · seed ${r.summary.seed}`
      : r.name,
  );
  const dirs = runs.map((r) => r.dir.split(path.sep));
  let common = 0;
  while (dirs.every((d) => d.length > common + 1 && d[common] === dirs[0]![common])) common++;
  runs.forEach((r, i) => {
    const label = byRewardAndSeed[i]!;
    const alike = byRewardAndSeed.filter((l) => l === label).length > 1;
    r.name = alike ? `${label} (${dirs[i]!.slice(common).join('/')})` : label;
  });
}

function commonFolder(dirs: string[]): string {
  const parts = dirs.map((d) => path.resolve(d).split(path.sep));
  let n = 0;
  while (parts.every((p) => p.length > n && p[n] === parts[0]![n])) n++;
  return parts[0]!.slice(0, n).join(path.sep) || path.sep;
}

/** The run folders a report argument stands for: itself, or the runs inside a sweep's or loop's folder. */
function runFoldersOf(dir: string): string[] {
  if (isRunFolder(dir) || !statSync(dir).isDirectory()) return [dir];
  const inside = runFoldersUnder(dir);
  return inside.length > 0 ? inside : [dir];
}

/** Writes the report of these run folders (or sweep and loop folders); returns the page's path and lines to tell the user. */
export async function writeReport(runDirs: string[], out?: string): Promise<{ file: string; messages: string[] }> {
  const runs: RunData[] = [];
  for (const dir of runDirs.flatMap((d) => runFoldersOf(requireExisting(d, 'run folder')))) {
    try {
      runs.push(await loadRun(dir));
    } catch (err) {
      if (err instanceof RunRecordError) throw new CommandError(err.message);
      throw err;
    }
  }
  labelRuns(runs);
  for (const run of runs) run.playbacks = await reportPlaybacks(run.summary, run.episodes, run.analysis?.suggestions ?? []);
  const messages: string[] = [];
  const written: string[] = [];
  // One folder given (a run, a sweep, a loop): the page goes into it; several: into the current folder.
  const file = path.resolve(out ?? (runDirs.length === 1 ? path.join(runDirs[0]!, RUN_FILES.report) : 'report.html'));
  try {
    for (const run of runs) {
      const ex = await writeMetricExports(run);
      if (ex.tensorboardError) messages.push(ex.tensorboardError);
      if (ex.tensorboard) written.push(ex.tensorboard);
    }
    writeAtomic(path.dirname(file), file, renderReport(runs));
  } catch (err) {
    if (err instanceof UnsafePathError) throw new CommandError(err.message);
    throw err;
  }
  // TensorBoard finds event files below its logdir, one run per folder: the runs' common folder shows them all.
  if (written.length > 0) messages.push(`TensorBoard: tensorboard --logdir ${written.length === 1 ? written[0] : commonFolder(written)}`);
  return { file, messages };
}

export async function reportCommand(argv: string[]): Promise<number> {
  return runCommand('report', async () => {
    const { values, positionals } = parseCommandArgs(REPORT_SPEC, argv);
    if (values.out !== undefined && !/\.html?$/i.test(values.out)) throw new UsageError(`--out ${values.out}: the report is an HTML page; name it *.html`);
    const { file, messages } = await writeReport(positionals, values.out);
    for (const m of messages) process.stderr.write(`${m}\n`);
    process.stdout.write(`report: ${file} (open it in a browser; it works offline)\n`);
    return 0;
  });
}
