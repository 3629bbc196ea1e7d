// The run dashboard, running inside the webview (browser bundle, strict CSP: no inline script, no eval).
// Live curves come from the runner's events as the host forwards them; past runs from their records.
import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip, type ChartDataset } from 'chart.js';
import type { RunnerEvent } from '../../../runner/src/events';
import type { RateRecord } from '../../../runner/src/records';
import { rateText, trainingSuccessText } from '../core';
import type { DashboardMessage, FailedPath, PastRun, WebviewMessage } from './protocol';
import { showPlayback, showPlaybackText } from './player';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Legend, Tooltip);

declare function acquireVsCodeApi(): { postMessage(message: WebviewMessage): void };
const vscode = acquireVsCodeApi();

const PALETTE = ['#4e9ee8', '#e8734e', '#59b56a', '#c678dd', '#e5c07b', '#56b6c2', '#d19a66', '#98c379', '#e06c75', '#61afef'];
const cssVar = (name: string, fallback: string) => getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
Chart.defaults.color = cssVar('--vscode-foreground', '#ccc');
Chart.defaults.borderColor = cssVar('--vscode-panel-border', 'rgba(128,128,128,0.3)');
Chart.defaults.animation = false;

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function lineChart(canvasId: string, yLabel: string, yMax?: number): Chart<'line', { x: number; y: number }[]> {
  return new Chart(byId<HTMLCanvasElement>(canvasId), {
    type: 'line',
    data: { datasets: [] },
    options: {
      parsing: false,
      normalized: true,
      maintainAspectRatio: false,
      elements: { point: { radius: 0 }, line: { borderWidth: 2 } },
      scales: {
        x: { type: 'linear', title: { display: true, text: 'frames' } },
        y: { title: { display: true, text: yLabel }, ...(yMax === undefined ? {} : { min: 0, max: yMax }) },
      },
      plugins: { legend: { display: true, position: 'bottom' } },
    },
  });
}

/** Per-update PPO curves: [canvas id, metrics field, y axis]. */
const PPO_CHARTS = [
  ['chart-entropy', 'entropy', 'policy entropy (nats)'],
  ['chart-approx-kl', 'approx_kl', 'approximate KL(old ‖ new)'],
  ['chart-clip-fraction', 'clip_fraction', 'clip fraction'],
  ['chart-value-loss', 'value_loss', 'value loss'],
  ['chart-explained-variance', 'explained_variance', 'explained variance'],
  ['chart-learning-rate', 'learning_rate', 'learning rate'],
] as const;
type PpoKey = (typeof PPO_CHARTS)[number][1];

const charts = {
  return: lineChart('chart-return', 'episode return'),
  success: lineChart('chart-success', 'success rate (%)', 100),
  fps: lineChart('chart-fps', 'frames / s'),
  ...Object.fromEntries(PPO_CHARTS.map(([id, key, label]) => [key, lineChart(id, label)])),
} as Record<'return' | 'success' | 'fps' | PpoKey, Chart<'line', { x: number; y: number }[]>>;

type Series = ChartDataset<'line', { x: number; y: number }[]>;
function series(label: string, color: string, dashed = false): Series {
  return { label, data: [], borderColor: color, backgroundColor: color, borderDash: dashed ? [5, 4] : [] };
}

type Metrics = PastRun['metrics'][number];
/** A metrics field as a number, or NaN (a gap in the line) where the run has none. */
const value = (m: Metrics, key: keyof Metrics) => (typeof m[key] === 'number' ? (m[key] as number) : Number.NaN);

// --- live run -------------------------------------------------------------------------------------------
interface LiveSeries {
  /** Mean return of the episodes that finished in each update, and the partial return of those still running. */
  finished: Series;
  running: Series;
  success: Series;
  fps: Series;
  ppo: Record<PpoKey, Series>;
}
let live: LiveSeries | undefined;
let liveFailed: FailedPath[] = [];
let pastRuns: PastRun[] = [];

function startLive(label: string): void {
  live = {
    finished: series(`${label}: episodes finished in the update`, PALETTE[0]),
    running: { ...series(`${label}: still running (return so far)`, PALETTE[0]), borderDash: [2, 3], borderWidth: 1 },
    success: series(label, PALETTE[0]),
    fps: series(label, PALETTE[0]),
    ppo: Object.fromEntries(PPO_CHARTS.map(([, key]) => [key, series(label, PALETTE[0])])) as Record<PpoKey, Series>,
  };
  liveFailed = [];
  byId('live-label').textContent = label;
  byId('live-status').textContent = 'starting…';
  // The previous run's verdict (a failure, a refusal) is not this run's.
  byId('live-result').textContent = '';
  byId('live-result').className = '';
  byId('success-note').textContent = '';
  byId('eval').replaceChildren(textEl('p', 'Evaluation runs after training.', 'muted'));
  redrawCharts();
  drawMap();
}

function onEvent(e: RunnerEvent): void {
  if (!live) startLive(e.type === 'started' ? `${e.task} (live)` : 'live run');
  const s = live!;
  switch (e.type) {
    case 'started':
      byId('live-label').textContent = `${e.task} · ${e.reward_file?.split(/[\\/]/).pop() ?? 'sparse reward'} (live)`;
      byId('live-status').textContent =
        `training on ${e.env} with ${e.num_envs} envs, backend ${e.backend}, ${e.total_frames.toLocaleString()} frames${e.resumed_from_frames ? `, resumed at ${e.resumed_from_frames.toLocaleString()}` : ''}`;
      break;
    case 'progress':
      // From the first update: the returns of episodes that finished in it (once any has) and of those running.
      if (typeof e.finished_return === 'number') s.finished.data.push({ x: e.frames, y: e.finished_return });
      else if (e.finished_return === undefined && e.episodes > 0) s.finished.data.push({ x: e.frames, y: e.mean_return });
      if (typeof e.unfinished_return === 'number') s.running.data.push({ x: e.frames, y: e.unfinished_return });
      if (e.success_rate !== null) s.success.data.push({ x: e.frames, y: e.success_rate * 100 });
      s.fps.data.push({ x: e.frames, y: e.fps });
      for (const [, key] of PPO_CHARTS) s.ppo[key].data.push({ x: e.frames, y: value(e, key) });
      byId('success-note').textContent = successNote(e);
      byId('live-status').textContent =
        `${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${Math.round(e.fps)} fps · ${returnText(e)} · ${trainingSuccessText(e.success)} · ${e.episodes} episodes finished`;
      redrawCharts();
      break;
    case 'eval':
      // The event carries summary.json's `eval` fields, so the live run's row is drawn as a past run's.
      byId('eval').replaceChildren(
        evalTable([['live run', e]]),
        ...(e.generalisation_gap ? [textEl('p', `⚠ ${e.generalisation_gap.message}`, 'result failed')] : []),
        ...(e.below_start ? [textEl('p', `⚠ Below its starting policy: ${e.below_start.message}`, 'result failed')] : []),
      );
      break;
    case 'episode_failed':
      liveFailed.push({ episode: e.episode, steps: e.steps, died: e.died, death_cause: e.death_cause, path: e.path, playable: false });
      drawMap();
      break;
    case 'reward_error':
      byId('live-status').textContent = `reward error at ${e.file}:${e.line}:${e.column}: ${e.message}`;
      break;
    case 'finished':
      byId('live-result').textContent = e.ok ? `Finished: ${byId('live-status').textContent}` : `Failed: ${e.error ?? 'see the Rewardsmith output'}`;
      byId('live-result').className = e.ok ? 'result ok' : 'result failed';
      break;
    default:
      break;
  }
}

/** Why the success chart has no point yet, said under it: no episode has finished, or no window has ended. */
function successNote(e: Metrics): string {
  if (e.success_rate !== null) return '';
  return e.episodes === 0
    ? 'No success point yet: no episode has finished yet.'
    : `No success point yet: ${e.episodes} episode${e.episodes === 1 ? '' : 's'} finished, but no window of started episodes has ended.`;
}

/** The update's returns as the status line says them. */
function returnText(e: Metrics): string {
  const running = typeof e.unfinished_return === 'number' ? `, running ${e.unfinished_return.toFixed(2)} so far` : '';
  if (typeof e.finished_return === 'number') return `return ${e.finished_return.toFixed(2)} (${e.finished_episodes} finished this update${running})`;
  return e.episodes === 0 ? `no episode finished yet${running}` : `return ${e.mean_return.toFixed(2)} (last finished${running})`;
}

function redrawCharts(): void {
  const past = pastRuns.map((r, i) => ({ run: r, color: PALETTE[(i + 1) % PALETTE.length] }));
  const pastSeries = (pick: (m: Metrics) => number) =>
    past.map(({ run, color }) => ({ ...series(run.name, color, true), data: run.metrics.map((m) => ({ x: m.frames, y: pick(m) })) }));
  // A past run's return: of the episodes that finished in each update where it has them, else its last-100 mean.
  const pastReturn = (m: Metrics) => (m.finished_return !== undefined ? value(m, 'finished_return') : m.episodes > 0 ? m.mean_return : Number.NaN);
  charts.return.data.datasets = [...(live ? [live.finished, live.running] : []), ...pastSeries(pastReturn)];
  charts.success.data.datasets = [
    ...(live ? [live.success] : []),
    ...pastSeries((m) => (m.success_rate === null || m.success_rate === undefined ? Number.NaN : m.success_rate * 100)),
  ];
  charts.fps.data.datasets = [...(live ? [live.fps] : []), ...pastSeries((m) => m.fps)];
  for (const [, key] of PPO_CHARTS) charts[key].data.datasets = [...(live ? [live.ppo[key]] : []), ...pastSeries((m) => value(m, key))];
  for (const c of Object.values(charts)) {
    c.update();
    // What the chart shows, for screen readers: each line and how many points it has.
    const lines = c.data.datasets.map((d) => `${d.label}: ${d.data.filter((p) => Number.isFinite(p.y)).length} points`);
    c.canvas.setAttribute('aria-label', lines.join('; ') || 'no data yet');
  }
}

// --- tables -----------------------------------------------------------------------------------------------
function textEl(tag: string, text: string, className?: string): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = text;
  if (className) el.className = className;
  return el;
}

type EvalRow = RunSummaryEval;
type RunSummaryEval = { episodes: number; success?: RateRecord; death?: RateRecord; avg_steps: number; death_causes: Record<string, number> };
/** A rate record as text; runs written before records carried intervals show "—". */
const rate = (r: RateRecord | undefined, noun = 'episodes') => (r ? rateText(r.rate, r.ci95, r.n, noun) : '—');
const causes = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '—';

function evalTable(rows: [string, EvalRow][]): HTMLTableElement {
  return table(
    ['run', 'episodes', 'held-out success [95 % CI]', 'deaths [95 % CI]', 'avg steps', 'death causes'],
    rows.map(([name, e]) => [name, String(e.episodes), rate(e.success), rate(e.death), e.avg_steps.toFixed(0), causes(e.death_causes)]),
  );
}

function table(head: string[], rows: string[][]): HTMLTableElement {
  const t = document.createElement('table');
  const tr = document.createElement('tr');
  for (const h of head) tr.append(textEl('th', h));
  t.append(tr);
  for (const r of rows) {
    const row = document.createElement('tr');
    for (const c of r) row.append(textEl('td', c));
    t.append(row);
  }
  return t;
}

function showPastRuns(runs: PastRun[]): void {
  pastRuns = runs;
  const box = byId('past');
  if (runs.length === 0) {
    box.replaceChildren(textEl('p', 'No past runs in this workspace yet (runs are read from their summary.json).', 'muted'));
  } else {
    // Runs side by side: one column per run, one row per figure.
    const fields: [string, (r: PastRun) => string][] = [
      ['task', (r) => r.summary.task],
      ['reward', (r) => (r.summary.reward_file ? r.summary.reward_file.split(/[\\/]/).pop()! : 'sparse')],
      ['frames', (r) => r.summary.train.frames.toLocaleString()],
      ['train success (started episodes)', (r) => rate(r.summary.train.success, 'started episodes')],
      ['held-out success', (r) => rate(r.summary.eval.success)],
      ['generalisation gap', (r) => (r.summary.generalisation_gap ? `⚠ ${r.summary.generalisation_gap.message}` : '—')],
      ['against its starting policy', (r) => (r.summary.below_start ? `⚠ below: ${r.summary.below_start.message}` : '—')],
      ['deaths', (r) => rate(r.summary.eval.death)],
      ['death causes', (r) => causes(r.summary.eval.death_causes)],
      ['avg steps', (r) => r.summary.eval.avg_steps.toFixed(0)],
      ['distance moved', (r) => `${r.summary.eval.avg_distance_moved.toFixed(1)} m`],
      ['fps', (r) => Math.round(r.summary.train.fps).toLocaleString()],
      ['wall time', (r) => `${r.summary.wall_seconds.toFixed(0)} s`],
      ['backend', (r) => `${r.summary.backend} / ${r.summary.env}`],
    ];
    box.replaceChildren(
      table(
        ['', ...runs.map((r) => r.name)],
        fields.map(([label, get]) => [label, ...runs.map(get)]),
      ),
    );
  }
  redrawCharts();
  drawMap();
  showFindings(runs[0]);
}

// --- the analyzer's findings ------------------------------------------------------------------------------
/** The latest past run's findings, each with the episodes it cites: ▶ plays one there, at the first step cited. */
function showFindings(run: PastRun | undefined): void {
  const box = byId('findings');
  byId('findings-title').textContent = run ? `Findings on ${run.name}: ${run.findings.length}` : 'Findings';
  if (!run || run.findings.length === 0) {
    box.replaceChildren(textEl('p', run ? 'The analyzer has no findings on this run (run `rewardsmith analyze` on it).' : 'No past run yet.', 'muted'));
    return;
  }
  const list = document.createElement('ul');
  for (const f of run.findings) {
    const item = textEl('li', '');
    item.append(textEl('strong', f.id), document.createTextNode(`: ${f.message}`));
    const cited = document.createElement('ul');
    for (const e of f.evidence) {
      const where = `episode ${e.episode}${e.steps ? `, steps ${e.steps[0]}–${e.steps[1]}` : ''}`;
      const line = textEl('li', '', 'evidence');
      if (e.playable) {
        const play = textEl('button', `▶ ${where}`);
        play.addEventListener('click', () => vscode.postMessage({ type: 'play', dir: run.dir, episode: e.episode, ...(e.steps ? { step: e.steps[0] } : {}) }));
        line.append(play);
      } else line.append(textEl('span', where, 'muted'));
      line.append(document.createTextNode(` ${e.note}`));
      cited.append(line);
    }
    item.append(cited);
    list.append(item);
  }
  box.replaceChildren(list);
}

// --- map of failed episodes -------------------------------------------------------------------------------
function drawMap(): void {
  const source =
    liveFailed.length > 0 || live
      ? { label: 'live run', failed: liveFailed, dir: undefined }
      : pastRuns[0]
        ? { label: pastRuns[0].name, failed: pastRuns[0].failed, dir: pastRuns[0].dir }
        : undefined;
  const canvas = byId<HTMLCanvasElement>('map');
  const legend = byId('map-legend');
  const ctx = canvas.getContext('2d')!;
  const width = (canvas.width = canvas.clientWidth || 480);
  const height = (canvas.height = 360);
  ctx.clearRect(0, 0, width, height);
  const failed = source?.failed.filter((f) => f.path.length > 0) ?? [];
  byId('map-title').textContent = source ? `Failed episodes of ${source.label}: ${failed.length}` : 'Failed episodes';
  if (failed.length === 0) {
    legend.replaceChildren(textEl('p', 'No failed evaluation episodes to draw yet.', 'muted'));
    return;
  }
  let [minX, maxX, minZ, maxZ] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const f of failed) for (const [x, z] of f.path) [minX, maxX, minZ, maxZ] = [Math.min(minX, x), Math.max(maxX, x), Math.min(minZ, z), Math.max(maxZ, z)];
  const span = Math.max(maxX - minX, maxZ - minZ, 4);
  const pad = 24;
  const scale = Math.min(width - 2 * pad, height - 2 * pad) / span;
  const px = (x: number) => pad + (x - minX) * scale;
  const pz = (z: number) => pad + (z - minZ) * scale;
  ctx.strokeStyle = cssVar('--vscode-panel-border', '#555');
  ctx.strokeRect(0.5, 0.5, width - 1, height - 1);
  ctx.font = '11px sans-serif';
  const items: HTMLElement[] = [];
  failed.slice(0, 20).forEach((f, i) => {
    const color = PALETTE[i % PALETTE.length];
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    f.path.forEach(([x, z], k) => (k === 0 ? ctx.moveTo(px(x), pz(z)) : ctx.lineTo(px(x), pz(z))));
    ctx.stroke();
    const [sx, sz] = f.path[0];
    ctx.fillStyle = color;
    ctx.beginPath();
    ctx.arc(px(sx), pz(sz), 3, 0, 2 * Math.PI);
    ctx.fill();
    // Where it ended: a cross, red when the agent died; labelled with the reason.
    const [ex, ez] = f.path[f.path.length - 1];
    const why = f.died ? `died: ${f.death_cause ?? 'unknown'}` : 'timed out';
    ctx.strokeStyle = f.died ? '#e05252' : color;
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    ctx.moveTo(px(ex) - 5, pz(ez) - 5);
    ctx.lineTo(px(ex) + 5, pz(ez) + 5);
    ctx.moveTo(px(ex) + 5, pz(ez) - 5);
    ctx.lineTo(px(ex) - 5, pz(ez) + 5);
    ctx.stroke();
    ctx.fillStyle = cssVar('--vscode-foreground', '#ccc');
    ctx.fillText(`#${f.episode} ${why}`, px(ex) + 7, pz(ez) - 7);
    const item = textEl('li', `episode ${f.episode}: ${why} after ${f.steps} steps, ended at x ${ex.toFixed(1)}, z ${ez.toFixed(1)} `);
    item.style.borderLeft = `4px solid ${color}`;
    // A past run's episode recorded with its actions plays back: the host re-simulates it with the CLI.
    const dir = source?.dir;
    if (dir && f.playable) {
      const play = textEl('button', '▶ play');
      play.addEventListener('click', () => vscode.postMessage({ type: 'play', dir, episode: f.episode }));
      item.append(play);
    }
    items.push(item);
  });
  const list = document.createElement('ul');
  list.append(...items);
  legend.replaceChildren(textEl('p', `x → east, z ↓ south; ${span.toFixed(0)} m across. Dot = start, cross = end.`, 'muted'), list);
}

window.addEventListener('message', (ev: MessageEvent<DashboardMessage>) => {
  const m = ev.data;
  if (m.type === 'live-start') startLive(m.label);
  else if (m.type === 'event') onEvent(m.event);
  else if (m.type === 'past-runs') showPastRuns(m.runs);
  else if (m.type === 'playback-loading') showPlaybackText(byId('playback'), `Re-simulating episode ${m.episode} of ${m.run}…`);
  else if (m.type === 'playback') {
    showPlayback(byId('playback'), m.run, m.record, m.step);
    byId('playback-title').scrollIntoView({ block: 'start' });
  } else if (m.type === 'playback-error') showPlaybackText(byId('playback'), `No playback of episode ${m.episode} of ${m.run}: ${m.message}`);
  else if (m.type === 'loop-results') {
    // The runner's own table, as text: every candidate, its difference to the reward in force, the decision and why.
    byId('loop-label').textContent = m.label;
    byId('loop-table').textContent = m.table;
    byId('loop').hidden = false;
  }
});
window.addEventListener('resize', drawMap);
vscode.postMessage({ type: 'ready' });
