import path from 'node:path';
import { readSummary as readRunSummary, SWEEP_FILES, type RunSummary, type SweepResults, type SweepRewardResult, type SweepRunResult } from '../records';
import { bootstrapMean, compareOverSeeds, DECISION_ALPHA, formatDifference, formatRateShort, levelText, percent, rateOverSeeds, type Counts } from '../stats';
import { escapeHtml as esc } from '../escape';
import { diamond, svgDocument } from '../svg';
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
  const successes = new Map<string, Counts[]>();
  const rewards: SweepRewardResult[] = rewardOrder.map(({ name, file }) => {
    const done = runResults.filter((r) => r.reward === name && r.success && r.success.n > 0);
    if (done.length === 0) return { reward: name, reward_file: file, seeds: 0, episodes: 0, mean_success: null, ci95: null, mean_deaths: null, rank: null };
    successes.set(
      name,
      done.map((r) => r.success!),
    );
    const success = rateOverSeeds(done.map((r) => r.success!));
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
  // Ranked by the decision rule, not by the means alone: in order of mean success, a reward takes its position as
  // its rank when some reward above it is shown better than it (one-sided 5 %), and shares the rank of the reward
  // just above otherwise. Every reward shows its difference to the leader (the best mean).
  const measured = rewards.filter((r) => r.mean_success !== null).sort((a, b) => b.mean_success! - a.mean_success!);
  const leader = measured[0];
  measured.forEach((r, position) => {
    const mine = successes.get(r.reward)!;
    const above = measured.slice(0, position);
    const behind = above.some((o) => compareOverSeeds(successes.get(o.reward)!, mine).verdict === 'better');
    r.rank = position === 0 || behind ? position + 1 : above[position - 1]!.rank;
    r.versus_leader = r === leader ? null : compareOverSeeds(mine, successes.get(leader!.reward)!);
  });
  return { version: 1, ...meta, runs: runResults, rewards };
}

/** The Markdown table beside results.json. */
export function resultsMarkdown(r: SweepResults): string {
  const lines = [
    `# Sweep: ${r.task}, ${r.steps.toLocaleString('en-US')} frames per run, seeds ${r.seeds.join(', ')} (${r.engine})`,
    '',
    `| rank | reward | mean held-out success % | 95 % CI | difference to the leader [${levelText(1 - 2 * DECISION_ALPHA)} CI] | seeds | episodes | mean deaths % |`,
    '|---:|---|---:|---|---|---:|---:|---:|',
  ];
  const ranked = [...r.rewards].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || (b.mean_success ?? 0) - (a.mean_success ?? 0));
  for (const w of ranked) {
    lines.push(
      w.mean_success === null
        ? `| — | ${w.reward} | — | — (no completed run) | — | 0 | 0 | — |`
        : `| ${w.rank} | ${w.reward} | ${percent(w.mean_success)} | [${percent(w.ci95![0])}, ${percent(w.ci95![1])}] | ${w.versus_leader ? formatDifference(w.versus_leader).replace(/ \(.*\)$/, '') : 'leader'} | ${w.seeds} | ${w.episodes} | ${percent(w.mean_deaths!)} |`,
    );
  }
  lines.push(
    '',
    'Success: the mean over seeds; 95 % CI: Wilson over the episodes of one seed, else a bootstrap over seeds × episodes (never narrower than Wilson over all episodes). ' +
      'Rank: in order of mean success, a reward shares the rank of the one above it unless a reward above it is shown better by a one-sided test at 5 % on the difference (Newcombe over one seed each, else the bootstrap).',
  );
  lines.push(
    '',
    '| reward | seed | state | job | held-out success % [95 % Wilson CI] (n) | deaths % | wall s | run folder |',
    '|---|---:|---|---|---|---:|---:|---|',
  );
  for (const run of r.runs) {
    const success = run.success ? formatRateShort(run.success) : '—';
    const state = run.message && run.state !== 'completed' ? `${run.state}: ${run.message.replace(/\|/g, '\\|').slice(0, 120)}` : run.state;
    lines.push(
      `| ${run.reward} | ${run.seed} | ${state} | ${run.job_id ?? '—'} | ${success} | ${run.deaths?.rate != null ? percent(run.deaths.rate) : '—'} | ${run.wall_seconds === null ? '—' : run.wall_seconds.toFixed(0)} | ${run.run_dir} |`,
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
    `<text x="${labelWidth + plotWidth / 2}" y="${height - 8}" text-anchor="middle">held-out success % (bar: 95 % CI over seeds × episodes; ◆ mean; ● one seed)</text>`,
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
        `<circle cx="${x(run.success!.rate!)}" cy="${cy}" r="3" fill="#333" fill-opacity="0.6"><title>seed ${run.seed}: ${percent(run.success!.rate!)} % of ${run.success!.n}</title></circle>`,
      );
    }
    parts.push(diamond(x(w.mean_success), cy, 6, 7, 'fill="#08519c"', `mean ${percent(w.mean_success)} % [${percent(w.ci95[0])}, ${percent(w.ci95[1])}]`));
  });
  return svgDocument(width, height, parts);
}
