import path from 'node:path';
import { readSummary as readRunSummary, SWEEP_FILES, type RunSummary, type SweepResults, type SweepRewardResult, type SweepRunResult } from '../records';
import { bootstrapMean } from '../stats';
import { diamond, escapeXml as esc, svgDocument } from '../svg';
import type { JobState } from './engine';

export { SWEEP_FILES, type SweepResults };

export interface RunRecord {
  reward: string;
  rewardFile: string;
  seed: number;
  jobId: string | null;
  runDir: string;
  state: JobState;
  wallSeconds: number | null;
  message: string | null;
}

const outcomes = (count: number, n: number) => Array.from({ length: n }, (_, i) => (i < count ? 1 : 0));

/** A completed job's summary; null when it has none or it is malformed (the job then counts as without results). */
export function readSummary(runDir: string): RunSummary | null {
  try {
    return readRunSummary(runDir) ?? null;
  } catch {
    return null;
  }
}

/** Results from the runs' records and their run folders' summary.json. */
export function sweepResults(
  dir: string,
  meta: Omit<SweepResults, 'version' | 'runs' | 'rewards'>,
  runs: RunRecord[],
  rewardOrder: { name: string; file: string }[],
): SweepResults {
  const runResults: SweepRunResult[] = runs.map((r) => {
    const summary = r.state === 'completed' ? readSummary(r.runDir) : null;
    return {
      reward: r.reward,
      seed: r.seed,
      job_id: r.jobId,
      run_dir: path.relative(dir, r.runDir),
      state: r.state,
      success: summary?.eval.success ?? null,
      deaths: summary?.eval.death ?? null,
      wall_seconds: r.wallSeconds,
      message: r.message,
    };
  });
  const rewards: SweepRewardResult[] = rewardOrder.map(({ name, file }) => {
    const done = runResults.filter((r) => r.reward === name && r.success && r.success.n > 0);
    if (done.length === 0) return { reward: name, reward_file: file, seeds: 0, episodes: 0, mean_success: null, ci95: null, mean_deaths: null, rank: null };
    const success = bootstrapMean(done.map((r) => outcomes(r.success!.count, r.success!.n)));
    const deaths = bootstrapMean(done.map((r) => outcomes(r.deaths!.count, r.deaths!.n)));
    return {
      reward: name,
      reward_file: file,
      seeds: done.length,
      episodes: success.n,
      mean_success: success.mean,
      ci95: success.ci95,
      mean_deaths: deaths.mean,
      rank: null,
    };
  });
  for (const r of rewards) {
    if (r.mean_success === null) continue;
    r.rank = 1 + rewards.filter((o) => o.mean_success !== null && o.mean_success > r.mean_success!).length;
  }
  return { version: 1, ...meta, runs: runResults, rewards };
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The Markdown table beside results.json. */
export function resultsMarkdown(r: SweepResults): string {
  const lines = [
    `# Sweep: ${r.task}, ${r.steps.toLocaleString('en-US')} frames per run, seeds ${r.seeds.join(', ')} (${r.engine})`,
    '',
    '| rank | reward | mean held-out success % | 95 % CI (bootstrap over seeds × episodes) | seeds | episodes | mean deaths % |',
    '|---:|---|---:|---|---:|---:|---:|',
  ];
  const ranked = [...r.rewards].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity));
  for (const w of ranked) {
    lines.push(
      w.mean_success === null
        ? `| — | ${w.reward} | — | — (no completed run) | 0 | 0 | — |`
        : `| ${w.rank} | ${w.reward} | ${pct(w.mean_success)} | [${pct(w.ci95![0])}, ${pct(w.ci95![1])}] | ${w.seeds} | ${w.episodes} | ${pct(w.mean_deaths!)} |`,
    );
  }
  lines.push(
    '',
    '| reward | seed | state | job | held-out success % [95 % Wilson CI] (n) | deaths % | wall s | run folder |',
    '|---|---:|---|---|---|---:|---:|---|',
  );
  for (const run of r.runs) {
    const success =
      run.success?.rate != null ? `${pct(run.success.rate)} [${pct(run.success.ci95[0])}, ${pct(run.success.ci95[1])}] (n=${run.success.n})` : '—';
    const state = run.message && run.state !== 'completed' ? `${run.state}: ${run.message.replace(/\|/g, '\\|').slice(0, 120)}` : run.state;
    lines.push(
      `| ${run.reward} | ${run.seed} | ${state} | ${run.job_id ?? '—'} | ${success} | ${run.deaths?.rate != null ? pct(run.deaths.rate) : '—'} | ${run.wall_seconds === null ? '—' : run.wall_seconds.toFixed(0)} | ${run.run_dir} |`,
    );
  }
  lines.push('', `Sweep wall time: ${r.wall_seconds.toFixed(0)} s.`);
  return lines.join('\n') + '\n';
}

/** One row per reward: its 95 % interval as a bar, the mean as a diamond, each seed's success as a dot. */
export function resultsSvg(r: SweepResults): string {
  const labelWidth = Math.min(260, 12 + 7 * Math.max(6, ...r.rewards.map((w) => w.reward.length)));
  const plotWidth = 420,
    rowHeight = 30,
    top = 40,
    bottom = 44;
  const width = labelWidth + plotWidth + 30;
  const height = top + rowHeight * Math.max(1, r.rewards.length) + bottom;
  const x = (v: number) => labelWidth + v * plotWidth;
  const parts: string[] = [
    `<text x="${labelWidth}" y="18" font-weight="bold">${esc(`${r.task}: held-out success per reward (${r.seeds.length} seeds, ${r.steps.toLocaleString('en-US')} frames)`)}</text>`,
  ];
  for (let t = 0; t <= 10; t += 2) {
    const gx = x(t / 10);
    parts.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${height - bottom + 4}" stroke="#ddd"/>`,
      `<text x="${gx}" y="${height - bottom + 18}" text-anchor="middle">${t * 10}</text>`,
    );
  }
  parts.push(
    `<text x="${labelWidth + plotWidth / 2}" y="${height - 8}" text-anchor="middle">held-out success % (bar: 95 % CI, bootstrap over seeds × episodes; ◆ mean; ● one seed)</text>`,
  );
  r.rewards.forEach((w, i) => {
    const cy = top + rowHeight * i + rowHeight / 2;
    parts.push(`<text x="${labelWidth - 8}" y="${cy + 4}" text-anchor="end">${esc(w.rank ? `${w.rank}. ${w.reward}` : w.reward)}</text>`);
    if (w.mean_success === null || !w.ci95) {
      parts.push(`<text x="${x(0) + 4}" y="${cy + 4}" fill="#888">no completed run</text>`);
      return;
    }
    parts.push(`<rect x="${x(w.ci95[0])}" y="${cy - 5}" width="${Math.max(1, x(w.ci95[1]) - x(w.ci95[0]))}" height="10" fill="#9ecae1"/>`);
    for (const run of r.runs.filter((run) => run.reward === w.reward && run.success?.rate != null)) {
      parts.push(
        `<circle cx="${x(run.success!.rate!)}" cy="${cy}" r="3" fill="#333" fill-opacity="0.6"><title>seed ${run.seed}: ${pct(run.success!.rate!)} % of ${run.success!.n}</title></circle>`,
      );
    }
    parts.push(diamond(x(w.mean_success), cy, 6, 7, 'fill="#08519c"', `mean ${pct(w.mean_success)} % [${pct(w.ci95[0])}, ${pct(w.ci95[1])}]`));
  });
  return svgDocument(width, height, parts);
}
