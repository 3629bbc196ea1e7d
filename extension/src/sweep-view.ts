// The sweep panel's content, without an editor: the `rewardsmith sweep` arguments from the settings, the
// per-run table kept up to date from the runner's `sweep_run` events, and the HTML of the panel (a table per
// run while it goes, then the ranking with its intervals and the runner's own plot).
import * as path from 'node:path';
import { escapeHtml } from '../../runner/src/escape';
import type { RunnerEvent, SweepRunEvent } from '../../runner/src/events';
import { readRecordText, readSweepResults, RunRecordError, SWEEP_FILES, type SweepResults } from '../../runner/src/records';
import { formatDifference, percent } from '../../runner/src/stats';

export interface SweepSettings {
  engine: 'local' | 'slurm';
  seeds: number;
  steps: number;
  /** More `rewardsmith sweep` arguments, e.g. Slurm's `--partition gpu --gpus 1`. */
  extraArgs: string[];
}

export function sweepArgs(task: string, rewards: string[], out: string, s: SweepSettings): string[] {
  return [
    'sweep',
    '--task',
    task,
    '--rewards',
    ...rewards,
    '--seeds',
    String(s.seeds),
    '--steps',
    String(s.steps),
    '--engine',
    s.engine,
    '--out',
    out,
    ...s.extraArgs,
    '--events',
    'ndjson',
  ];
}

export interface SweepRunView {
  run: string;
  state: SweepRunEvent['state'];
  jobId: string | null;
  frames: number;
  totalFrames: number;
  success?: { count: number; n: number };
  message?: string;
}

/** What the panel shows while a sweep goes: one row per run, in the order they appeared. */
export class SweepProgress {
  readonly runs = new Map<string, SweepRunView>();
  finished: { ok: boolean; error?: string } | undefined;

  apply(e: RunnerEvent): void {
    if (e.type === 'sweep_run') {
      const prev = this.runs.get(e.run);
      this.runs.set(e.run, {
        run: e.run,
        state: e.state,
        jobId: e.job_id,
        frames: Math.max(e.frames, e.state === 'completed' ? e.total_frames : 0, prev?.state === e.state ? prev.frames : 0),
        totalFrames: e.total_frames,
        success: e.success ?? prev?.success,
        message: e.message,
      });
    } else if (e.type === 'finished') {
      this.finished = { ok: e.ok, ...(e.error ? { error: e.error } : {}) };
    }
  }

  /** "3/4 runs done · 1 running" for the progress notification. */
  line(): string {
    const all = [...this.runs.values()];
    const count = (s: SweepRunView['state']) => all.filter((r) => r.state === s).length;
    const parts = [`${count('completed')}/${all.length} runs done`];
    for (const s of ['running', 'queued', 'failed'] as const) if (count(s)) parts.push(`${count(s)} ${s}`);
    return parts.join(' · ');
  }
}

// Every value from results.json and the event stream reaches the panel's HTML through the one markup escape.
const esc = escapeHtml;

/** The runner's plot is tens of kilobytes; a larger results.svg is not one it wrote. */
const MAX_PLOT_BYTES = 4 * 1024 * 1024;

/**
 * The sweep's results and plot so far, both read by the runner's checked readers (the sweep folder may be on a
 * shared disk): nulls before the first run finished, or when either is damaged, a link out of the folder or too
 * large, which `report` is told (naming the file).
 */
export function readSweepView(dir: string, report: (message: string) => void): { results: SweepResults | null; svg: string | null } {
  try {
    const results = readSweepResults(dir);
    const svg = results ? readRecordText(path.join(dir, SWEEP_FILES.plot), MAX_PLOT_BYTES) : undefined;
    return results && svg !== undefined ? { results, svg } : { results: null, svg: null };
  } catch (err) {
    if (!(err instanceof RunRecordError)) throw err;
    report(err.message);
    return { results: null, svg: null };
  }
}

/**
 * The panel's HTML (no script: it is re-rendered by the host). `plotSvg` is the runner's results.svg, shown as an
 * image: its markup, from a folder that may be someone else's, never becomes part of the page.
 */
export function sweepHtml(title: string, progress: SweepProgress, results: SweepResults | null, plotSvg: string | null, csp: string): string {
  const rows = [...progress.runs.values()].map((r) => {
    const done = r.totalFrames > 0 ? Math.min(100, Math.round((100 * r.frames) / r.totalFrames)) : 0;
    const success = r.success ? esc(`${r.success.count}/${r.success.n}`) : '—';
    return `<tr class="${esc(r.state)}"><td>${esc(r.run)}</td><td>${esc(r.state)}${r.message ? `: ${esc(r.message)}` : ''}</td><td>${r.jobId ? esc(r.jobId) : '—'}</td><td><progress max="100" value="${done}"></progress> ${done} %</td><td>${success}</td></tr>`;
  });
  const ranking = results
    ? [...results.rewards]
        .sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity))
        .map((w) =>
          w.mean_success === null || !w.ci95
            ? `<tr><td>—</td><td>${esc(w.reward)}</td><td colspan="4">no completed run</td></tr>`
            : `<tr><td>${esc(w.rank)}</td><td>${esc(w.reward)}</td><td>${percent(w.mean_success)} %</td><td>[${percent(w.ci95[0])}, ${percent(w.ci95[1])}] %</td><td>${w.versus_leader ? esc(formatDifference(w.versus_leader)) : 'leader'}</td><td>${esc(w.seeds)} seeds, ${esc(w.episodes)} episodes</td></tr>`,
        )
    : [];
  const status = progress.finished ? (progress.finished.ok ? 'finished' : `stopped: ${esc(progress.finished.error ?? 'failed')}`) : esc(progress.line());
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${esc(title)}</title>
<style>
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
  table { border-collapse: collapse; margin: 6px 0; }
  th, td { border: 1px solid var(--vscode-panel-border, #444); padding: 3px 8px; text-align: left; }
  th { background: var(--vscode-editorWidget-background); }
  tr.failed td { color: var(--vscode-errorForeground, #e05252); }
  .plot { background: #fff; display: inline-block; margin-top: 8px; }
</style></head>
<body>
  <h2>${esc(title)}</h2>
  <p id="status">${status}</p>
  ${
    ranking.length
      ? `<h3>Rewards by held-out success (95 % CI: Wilson over one seed's episodes, else bootstrap over seeds × episodes; ranked below another only when a one-sided test at 5 % shows that one better)</h3>
  <table id="ranking"><tr><th>rank</th><th>reward</th><th>mean success</th><th>95 % CI</th><th>difference to the leader</th><th>behind it</th></tr>${ranking.join('')}</table>`
      : ''
  }
  ${plotSvg ? `<div class="plot"><img alt="held-out success per reward, with intervals" src="data:image/svg+xml;base64,${Buffer.from(plotSvg).toString('base64')}"></div>` : ''}
  <h3>Runs</h3>
  <table id="runs"><tr><th>run</th><th>state</th><th>job</th><th>frames</th><th>held-out success</th></tr>${rows.join('') || '<tr><td colspan="5">submitting…</td></tr>'}</table>
</body></html>`;
}
