// What `train` and `eval` show on the terminal: ndjson events on stdout, or a progress bar and messages on
// stderr; the result table at the end; a reward error as the user needs it.
import path from 'node:path';
import { CommandError, terminalText } from '../args';
import type { ProgressEvent, RunnerEvent } from '../events';
import type { RateRecord, RunSummary } from '../records';
import { RewardError } from '../reward/index';
import { formatRateShort } from '../stats';
import { progressBar, stageProgressText } from './progress';
import { belowStart } from './training-success';

/** Where the CLI's output goes: ndjson events on stdout, or a progress bar and messages on stderr. */
export class Reporter {
  private lastDraw = 0;
  private lastLoggedTenth = -1;
  private evalStart = 0;
  private evalLoggedTenth = -1;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(readonly events: boolean) {}

  emit = (e: RunnerEvent): void => {
    if (this.events) {
      process.stdout.write(JSON.stringify(e) + '\n');
      return;
    }
    if (e.type === 'started') {
      const resumed = e.resumed_from_frames ? `, resuming at ${e.resumed_from_frames.toLocaleString('en-US')} frames` : '';
      const frames = e.command === 'eval' ? '' : `${e.total_frames.toLocaleString('en-US')} frames, `;
      process.stderr.write(
        `${e.command} ${e.task} with ${e.reward_file ? path.relative(process.cwd(), e.reward_file) : '(no reward)'}: ${frames}${e.num_envs} envs, backend ${e.backend}${resumed}\n`,
      );
    } else if (e.type === 'progress') {
      this.bar(e);
    } else if (e.type === 'reward_error') {
      this.clear();
    } else if (e.type === 'log') {
      this.clear();
      process.stderr.write(`${e.level}: ${terminalText(e.message)}\n`);
    }
  };

  private bar(e: ProgressEvent): void {
    const fraction = Math.min(1, e.frames / e.total_frames);
    // Returns from the first update: of the episodes that ended in it, else the partial return of those running.
    const ret =
      typeof e.finished_return === 'number'
        ? `return ${e.finished_return.toFixed(2)} (${e.finished_episodes} ended)`
        : `${e.episodes === 0 ? 'no episode finished yet' : 'none ended in this update'}, return so far ${(e.unfinished_return ?? 0).toFixed(2)}`;
    const success =
      e.success_rate !== null
        ? `${(e.success_rate * 100).toFixed(0)}% [${(e.success.ci95[0] * 100).toFixed(0)}–${(e.success.ci95[1] * 100).toFixed(0)}] of ${e.success.n}`
        : e.episodes === 0
          ? '—'
          : `— (${e.episodes} finished; no window of started episodes has ended)`;
    const text = `${progressBar(fraction)} ${(fraction * 100).toFixed(0).padStart(3)}%  ${e.frames.toLocaleString('en-US')}/${e.total_frames.toLocaleString('en-US')} frames  ${Math.round(e.fps)} fps  ${ret}  success ${success}`;
    if (this.tty) {
      const now = Date.now();
      if (now - this.lastDraw < 100 && fraction < 1) return;
      this.lastDraw = now;
      process.stderr.write(`\r${text}\x1b[K${fraction >= 1 ? '\n' : ''}`);
    } else {
      // Not a terminal (CI, a pipe): one line per tenth of the run.
      const tenth = Math.floor(fraction * 10);
      if (tenth === this.lastLoggedTenth) return;
      this.lastLoggedTenth = tenth;
      process.stderr.write(text + '\n');
    }
  }

  /** Evaluation's own bar: episodes done of the total, and the time left at the pace so far. */
  evalProgress = (done: number, total: number): void => {
    if (this.events) return;
    if (done === 0) {
      this.evalStart = Date.now();
      this.evalLoggedTenth = -1;
      process.stderr.write(`evaluating on ${total} held-out worlds\n`);
      return;
    }
    const text = evalProgressText(done, total, (Date.now() - this.evalStart) / 1000);
    if (this.tty) {
      process.stderr.write(`\r${text}\x1b[K${done >= total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((done / total) * 10);
    if (tenth === this.evalLoggedTenth) return;
    this.evalLoggedTenth = tenth;
    process.stderr.write(text + '\n');
  };

  clear(): void {
    if (!this.events && this.tty) process.stderr.write('\r\x1b[K');
  }
}

/** "[#####...] evaluating 37/100 episodes  0:21 elapsed, ETA 0:36" (ETA from the pace of the episodes done). */
export function evalProgressText(done: number, total: number, elapsedSeconds: number): string {
  return stageProgressText('evaluating', done, total, 'episodes', elapsedSeconds);
}

/**
 * The result table printed at the end of `train` and `eval`, and by the bench: held-out and training success
 * with their episode counts and 95 % intervals (one definition: summary.json), then any generalisation gap.
 */
export function resultTable(rows: { task: string; reward: string; summary: RunSummary }[]): string {
  const rate = (r: RateRecord | undefined) => (r ? formatRateShort(r) : '—');
  const header = ['task', 'reward', 'held-out success % [95 % CI] (n)', 'train success % [95 % CI] (n)', 'death %', 'avg steps', 'frames', 'wall s', 'backend'];
  const body = rows.map(({ task, reward, summary: s }) => [
    task,
    reward,
    rate(s.eval.success),
    rate(s.train.success),
    rate(s.eval.death),
    s.eval.avg_steps.toFixed(0),
    s.env_steps.toLocaleString('en-US'),
    s.wall_seconds.toFixed(0),
    s.backend,
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ')} |`;
  const gaps = rows.flatMap(({ task, reward, summary: s }) => (s.generalisation_gap ? [`warning: ${task} ${reward}: ${s.generalisation_gap.message}`] : []));
  return [
    line(header),
    `|${widths.map((w, c) => (c < 2 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|')}|`,
    ...body.map(line),
    ...(gaps.length ? ['', ...gaps] : []),
  ].join('\n');
}

/**
 * "warning: held-out success … is below its starting policy's …" when a fine-tuned run is worse than the checkpoint
 * it started from (its own held-out evaluation) by the decision rule (one-sided 5 %); null otherwise or unknown.
 * The run's summary records it (`below_start`); a summary written before it did is compared here.
 */
export function belowStartingPolicy(summary: RunSummary, init: string): string | null {
  if (!summary.eval?.success || summary.eval.episodes === 0) return null;
  const below = summary.below_start !== undefined ? summary.below_start : belowStart(summary.eval.success, init);
  return below ? `warning: ${below.message}` : null;
}

/**
 * A reward error as the user needs it: file:line:column, kind and message (the rest: the common format). A
 * sandbox host that died (kind `host`) is not the reward's fault: `again` says how to carry on.
 */
export function asCommandError(err: unknown, reporter: Reporter, again: string): unknown {
  reporter.clear();
  if (err instanceof RewardError)
    return new CommandError(
      `reward error (${err.kind}) at ${err.file}:${err.line}:${err.column}: ${terminalText(err.detail)}${err.env === null ? '' : ` (env ${err.env})`}` +
        (err.kind === 'host' ? `; the reward is not at fault: ${again}` : ''),
    );
  return err;
}
