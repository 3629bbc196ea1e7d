// The report's training curves, from the first PPO update on: training success (over windows of started
// episodes, Wilson bands), returns (of the episodes that finished in each update, and the partial returns of
// those still running, labelled apart), and the curves PPO users read (entropy, approximate KL, clip fraction,
// value loss, explained variance, learning rate). Built here as data; CURVES_SCRIPT draws them in the page.
import { bootstrapMean, wilson } from '../stats';
import type { UpdateMetrics } from '../records';

export interface CurvePoint {
  x: number;
  y: number;
  lo?: number;
  hi?: number;
}

export interface CurveSeries {
  label: string;
  points: CurvePoint[];
  /** Drawn dashed: a partial quantity (returns of episodes still running). */
  dashed?: boolean;
  /** Colour index, shared by a run's series (default: the series' own index). */
  colour?: number;
}

export interface Chart {
  id: string;
  title: string;
  yTitle: string;
  yMin?: number;
  yMax?: number;
  series: CurveSeries[];
  caption: string;
  /** Why the chart has no points, said in its place (no episode finished yet; a run that predates the field). */
  empty?: string;
}

/** What a run contributes to the curves. */
export interface CurveRun {
  name: string;
  metrics: UpdateMetrics[];
}

// Training curves of runs that predate the per-update records are over the trainer's window of recent episodes
// (CURVE_WINDOW in runs/train.ts).
const CURVE_WINDOW = 100;

/** Why a run's success curve has no point yet, or null when it has one. */
function successGap(metrics: UpdateMetrics[]): string | null {
  if (metrics.some((m) => (m.success ? m.success.rate !== null : m.episodes > 0 && m.success_rate !== null))) return null;
  const last = metrics[metrics.length - 1];
  if (!last || last.episodes === 0) return 'no episode finished yet';
  return `no window of started episodes has ended yet (${last.episodes} episode${last.episodes === 1 ? '' : 's'} finished)`;
}

function successSeries(r: CurveRun): CurveSeries {
  // A window with no ended episode has no rate: the point is left out rather than drawn at 0. Runs since the
  // training-success record carry its count and interval; older ones only the last-100 window's rate.
  const withEpisodes = r.metrics.filter((m) => (m.success ? m.success.rate !== null : m.episodes > 0 && m.success_rate !== null));
  return {
    label: r.name,
    points: withEpisodes.map((m) => {
      if (m.success) return { x: m.frames, y: 100 * m.success.rate!, lo: 100 * m.success.ci95[0], hi: 100 * m.success.ci95[1] };
      const n = Math.min(m.episodes, CURVE_WINDOW);
      const w = wilson(Math.round(m.success_rate! * n), n);
      return { x: m.frames, y: 100 * m.success_rate!, lo: 100 * w.ci95[0], hi: 100 * w.ci95[1] };
    }),
  };
}

/** Returns from the first update: finished episodes' and (dashed) the running ones' partial returns. */
function returnSeries(r: CurveRun): CurveSeries[] {
  const perUpdate = r.metrics.some((m) => m.unfinished_return !== undefined);
  if (!perUpdate) {
    // A run that predates the per-update returns: the mean of the last ≤ 100 finished episodes, once any has.
    return [
      {
        label: `${r.name} · last ≤ ${CURVE_WINDOW} finished episodes`,
        points: r.metrics.filter((m) => m.episodes > 0).map((m) => ({ x: m.frames, y: m.mean_return })),
      },
    ];
  }
  return [
    {
      label: `${r.name} · episodes finished in the update`,
      points: r.metrics.flatMap((m) => (typeof m.finished_return === 'number' ? [{ x: m.frames, y: m.finished_return }] : [])),
    },
    {
      label: `${r.name} · episodes still running (return so far)`,
      points: r.metrics.flatMap((m) => (typeof m.unfinished_return === 'number' ? [{ x: m.frames, y: m.unfinished_return }] : [])),
      dashed: true,
    },
  ];
}

const PPO_CURVES: { key: keyof UpdateMetrics; title: string; yTitle: string; yMin?: number; yMax?: number; caption: string }[] = [
  {
    key: 'entropy',
    title: 'Policy entropy',
    yTitle: 'entropy (nats)',
    yMin: 0,
    caption: 'Mean entropy of the action distribution; falling fast means the policy stopped exploring.',
  },
  {
    key: 'approx_kl',
    title: 'Approximate KL',
    yTitle: 'KL(old ‖ new)',
    caption:
      'How far each update moved the policy from the one that collected the data: mean(log π_old − log π) over its minibatches (an estimate; it can dip below 0).',
  },
  {
    key: 'clip_fraction',
    title: 'Clip fraction',
    yTitle: 'share of samples',
    yMin: 0,
    yMax: 1,
    caption: 'Share of samples whose probability ratio left [1 − clip, 1 + clip]: a large share means updates push against the clip.',
  },
  { key: 'value_loss', title: 'Value loss', yTitle: 'mean squared error', yMin: 0, caption: 'Mean squared error of the value head against the GAE returns.' },
  {
    key: 'explained_variance',
    title: 'Explained variance',
    yTitle: '1 − Var(R − V) / Var(R)',
    yMax: 1,
    caption: "How much of the returns' variance the value function explained before each update (1: all; ≤ 0: none). Left out where the returns were constant.",
  },
  { key: 'learning_rate', title: 'Learning rate', yTitle: 'Adam learning rate', yMin: 0, caption: 'The optimiser’s step size at each update.' },
];

/** Every chart of the training section, for these runs (runs without metrics contribute nothing). */
export function trainingCharts(runs: CurveRun[], pooled: { label: string; runs: CurveRun[] }[]): Chart[] {
  const withMetrics = runs.filter((r) => r.metrics.length > 0);
  const gaps = withMetrics.flatMap((r) => {
    const gap = successGap(r.metrics);
    return gap ? [`${r.name}: ${gap}`] : [];
  });
  const success: Chart = {
    id: 'chart-success',
    title: 'Training success',
    yTitle: 'training success %',
    yMin: 0,
    yMax: 100,
    series: withMetrics.map(successSeries),
    caption:
      'Training success over the episodes the trainer counts at each update: episodes that started in a window of frames, once all of them have ended (older runs: the last ≤ 100 finished episodes); band: 95 % Wilson interval. Updates before such a window has ended have no point.',
    ...(gaps.length > 0 ? { empty: `No success point yet for ${gaps.join('; ')}.` } : {}),
  };
  const ret: Chart = {
    id: 'chart-return',
    title: 'Episode return',
    yTitle: 'episode return',
    series: [
      ...withMetrics.flatMap((r, i) => returnSeries(r).map((s) => ({ ...s, colour: i }))),
      ...pooledReturns(pooled).map((s, j) => ({ ...s, colour: withMetrics.length + j })),
    ],
    caption:
      'From the first update: the mean return of the episodes that finished during each update (solid), and the mean return so far of the episodes still running at its end (dashed, a partial return that grows as they go on). metrics.ndjson keeps no per-episode returns, so a single run has no band; runs of the same reward and task are also drawn as the mean over seeds of their last ≤ 100 finished episodes, with a 95 % bootstrap interval.',
  };
  const ppo = PPO_CURVES.map((c): Chart => {
    const series = withMetrics
      .map((r) => ({ label: r.name, points: r.metrics.flatMap((m) => (typeof m[c.key] === 'number' ? [{ x: m.frames, y: m[c.key] as number }] : [])) }))
      .filter((s) => s.points.length > 0);
    return {
      id: `chart-${c.key.replace(/_/g, '-')}`,
      title: c.title,
      yTitle: c.yTitle,
      ...(c.yMin === undefined ? {} : { yMin: c.yMin }),
      ...(c.yMax === undefined ? {} : { yMax: c.yMax }),
      series,
      caption: c.caption,
      ...(series.length === 0 ? { empty: 'Not recorded by these runs (they predate it).' } : {}),
    };
  });
  return [success, ret, ...ppo];
}

/** The mean over seeds of the last-≤-100 return, with a bootstrap band, for groups of runs of one reward. */
function pooledReturns(groups: { label: string; runs: CurveRun[] }[]): CurveSeries[] {
  const out: CurveSeries[] = [];
  for (const g of groups) {
    const withMetrics = g.runs.filter((r) => r.metrics.length > 0);
    if (withMetrics.length < 2) continue;
    const updates = Math.min(...withMetrics.map((r) => r.metrics.length));
    const points = Array.from({ length: updates }, (_, u) => {
      const rows = withMetrics.map((r) => r.metrics[u]!).filter((m) => m.episodes > 0);
      if (rows.length < 2) return null;
      const est = bootstrapMean(
        rows.map((m) => [m.mean_return]),
        { resamples: 500 },
      );
      return { x: rows[0]!.frames, y: est.mean, lo: est.ci95[0], hi: est.ci95[1] };
    }).filter((p): p is NonNullable<typeof p> => p !== null);
    out.push({ label: `${g.label} (mean of ${withMetrics.length} seeds)`, points });
  }
  return out;
}

/** Runs in the page: draws every chart from the embedded data with the inlined Chart.js. */
export const CURVES_SCRIPT = `(function(){
var data = JSON.parse(document.getElementById('report-data').textContent);
var colours = ['#2c6fbb','#c0392b','#2e9d4a','#8250df','#d97706','#0f766e','#be185d','#4b5563'];
function datasets(series){
  var out = [];
  series.forEach(function(s, i){
    var c = colours[(s.colour !== undefined ? s.colour : i) % colours.length];
    var banded = s.points.some(function(p){ return p.lo !== undefined; });
    if (banded) {
      out.push({label: s.label + ' (95 % CI high)', data: s.points.map(function(p){ return {x: p.x, y: p.hi}; }), borderWidth: 0, pointRadius: 0, fill: false, borderColor: 'transparent', band: true});
      out.push({label: s.label + ' (95 % CI low)', data: s.points.map(function(p){ return {x: p.x, y: p.lo}; }), borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: c + '33', borderColor: 'transparent', band: true});
    }
    out.push({label: s.label, data: s.points.map(function(p){ return {x: p.x, y: p.y}; }), borderColor: c, backgroundColor: c, borderWidth: 2, borderDash: s.dashed ? [6, 4] : [], pointRadius: s.points.length > 40 ? 0 : 2, fill: false});
  });
  return out;
}
data.charts.forEach(function(c){
  var el = document.getElementById(c.id);
  if (!el) return;
  new Chart(el, {type: 'line', data: {datasets: datasets(c.series)}, options: {
    animation: false, responsive: true, maintainAspectRatio: false, parsing: true,
    scales: {x: {type: 'linear', title: {display: true, text: 'training frames'}}, y: {title: {display: true, text: c.yTitle}, min: c.yMin, max: c.yMax}},
    plugins: {legend: {labels: {filter: function(item, d){ return !d.datasets[item.datasetIndex].band; }}}}
  }});
});
})();`;
