// Where jobs execute: `local` (a pool of child processes, bounded by the cores) or `slurm` (one `sbatch` job
// per run on an existing cluster). A job is one `rewardsmith` command in its own folder (`train` for sweep,
// loop and table, `pretrain` for the table's foundations), run through the CLI, never an in-process import, so
// a run is the same program on a laptop and on a compute node. Both engines run the same job script, written
// into the run folder: it runs the command (continuing from the folder's checkpoint where the command can),
// its output appended to `job.log` (opened by the engine locally, by the job itself on Slurm: `job-log`), and
// when the command exits writes `job-exit.json` with the exit code and the times. The engines only start,
// watch and cancel; what a run produced is read from its folder.
//
// The one resume logic of sweep, table and loop lives here (`Engine.run`): a folder whose job an interrupted
// command left queued or running (its id is in `job.json`: a pid, or a Slurm job id) is waited for instead of
// started twice; a folder whose command finished (summary.json, and no failed exit recorded) is kept as it is;
// anything else starts (again), from its checkpoint where there is one.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openForAppend, openRecord, readRecordBytes, writeAtomic } from '../files';
import { type CommandSpec, parseCommandArgs } from '../args';
import { pathToFileURL } from 'node:url';
import { StringDecoder } from 'node:string_decoder';
import { parseEvent, type RunnerEvent } from '../events';
import { RUN_FILES, type SweepRunState } from '../records';

/** One job: a `rewardsmith` command that writes into its own folder. */
export interface Job {
  /** Name shown in progress and used for the Slurm job name, e.g. `tree-dense/seed-0`. */
  name: string;
  /** The command's output folder; the job script, `job.log`, `job.json` and `job-exit.json` live in it too. */
  runDir: string;
  /** The CLI arguments of a fresh start, the command first (`['train', REWARD, '--out', DIR, …]`). */
  start: string[];
  /** The CLI arguments that continue from the folder's checkpoint, for a command that can (`train --resume`). */
  resume?: string[];
  /** Frames the command trains, for progress (from the folder's metrics.ndjson); absent: no frame progress. */
  frames?: number;
}

/** One training run: the arguments of `rewardsmith train`. */
export interface TrainJob {
  name: string;
  /** The run folder (`train --out`). */
  runDir: string;
  rewardFile: string;
  /** The sha256 of the reward text the caller checked: the job trains that text or nothing (train --reward-sha256). */
  rewardSha256?: string;
  /** Built-in task id or task file path. */
  task: string;
  seed: number;
  steps: number;
  init?: string;
  envs?: number;
  evalEpisodes?: number;
  /** Environments of the held-out evaluation (train --eval-envs). */
  evalEnvs?: number;
  workers?: number;
  backend?: string;
}

/** One foundation policy: the arguments of `rewardsmith pretrain`. */
export interface PretrainJob {
  name: string;
  /** The checkpoint folder (`pretrain --out`). */
  runDir: string;
  task: string;
  seed: number;
  demos: number;
  evalEpisodes?: number;
  backend?: string;
}

export type JobState = SweepRunState;

/** What the job script records when train exits (`job-exit.json`). */
export interface JobExit {
  exit_code: number;
  /** Unix seconds. */
  started: number;
  ended: number;
  host: string;
}

export interface JobResult {
  state: 'completed' | 'failed' | 'cancelled';
  jobId: string | null;
  /** The folder's command had finished before this call: nothing ran. */
  kept: boolean;
  exit: JobExit | null;
  /** Why it failed (the command's own error, a reward error, or the scheduler's verdict). */
  message: string | null;
  /** A reward error reported by train, when that is why it failed. */
  rewardError: { file: string; line: number; column: number; kind: string; message: string } | null;
}

export interface JobHooks {
  /** Called on every state change (with the job id once there is one). */
  onState?: (state: JobState, jobId: string | null) => void;
  /** Called while running with the frames trained so far (from the run's metrics.ndjson). */
  onProgress?: (frames: number) => void;
  /** Called while queued whenever the scheduler's reason for holding the job changes, in words (`slurmWaitReason`). */
  onWaiting?: (why: string) => void;
  /** Aborting cancels the job (kill, or scancel) and resolves it as cancelled. */
  signal?: AbortSignal;
  /** Called with each event the command writes to job.log (`--events ndjson`) from now on, as the job runs. */
  onEvent?: (event: RunnerEvent) => void;
}

export const JOB_FILES = { script: 'job.sh', log: 'job.log', exit: 'job-exit.json', record: 'job.json' } as const;

/** How a job invokes the CLI: the Node runtime and the CLI script (a `.ts` source file runs through tsx). */
export interface RunnerCommand {
  node: string;
  cli: string;
}

/** This installation's CLI: the bundle when running bundled, else the sources (through tsx). */
export function defaultRunnerCommand(): RunnerCommand {
  const bundled = path.basename(__filename) === 'cli.js';
  return { node: process.execPath, cli: bundled ? __filename : path.resolve(__dirname, '..', 'cli.ts') };
}

/** The tsx loader as an absolute URL, so a job started in any folder can run the sources. */
function tsxLoader(cli: string): string {
  for (let dir = path.dirname(cli); ; dir = path.dirname(dir)) {
    const loader = path.join(dir, 'node_modules', 'tsx', 'dist', 'loader.mjs');
    if (existsSync(loader)) return pathToFileURL(loader).href;
    if (path.dirname(dir) === dir)
      throw new Error(`${cli} is a TypeScript source but no node_modules/tsx was found above it; point --cli at a built dist/cli.js`);
  }
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `rewardsmith ARGS…` as a shell command line, run by `runner`. */
function cliCommand(runner: RunnerCommand, args: string[]): string {
  const node = [shellQuote(runner.node), ...(runner.cli.endsWith('.ts') ? ['--import', shellQuote(tsxLoader(runner.cli))] : []), shellQuote(runner.cli)];
  return [...node, ...args.map(shellQuote)].join(' ');
}

/** `train` options that hold for a fresh start and a resumed attempt alike. */
function runOptions(job: TrainJob): string[] {
  const args = ['--events', 'ndjson'];
  // The job reads the reward by its path in another process, later: it trains only the text the caller checked.
  if (job.rewardSha256 !== undefined) args.push('--reward-sha256', job.rewardSha256);
  if (job.evalEpisodes !== undefined) args.push('--eval-episodes', String(job.evalEpisodes));
  if (job.evalEnvs !== undefined) args.push('--eval-envs', String(job.evalEnvs));
  if (job.workers !== undefined) args.push('--workers', String(job.workers));
  if (job.backend !== undefined) args.push('--backend', job.backend);
  return args;
}

/** A `rewardsmith train` job: a fresh start, or `--resume` where a killed or cancelled attempt left a checkpoint. */
export function trainJob(job: TrainJob): Job {
  const start = ['train', job.rewardFile, '--task', job.task, '--seed', String(job.seed), '--steps', String(job.steps), '--out', job.runDir, '--overwrite'];
  if (job.init) start.push('--init', job.init);
  if (job.envs !== undefined) start.push('--envs', String(job.envs));
  return {
    name: job.name,
    runDir: job.runDir,
    start: [...start, ...runOptions(job)],
    // The --init again: a resumed run loads the checkpoint it started from only when named on the command line.
    resume: ['train', '--resume', job.runDir, ...(job.init ? ['--init', job.init] : []), ...runOptions(job)],
    frames: job.steps,
  };
}

/** A `rewardsmith pretrain` job (no resume: an interrupted one starts over; it is short). */
export function pretrainJob(job: PretrainJob): Job {
  const start = ['pretrain', '--task', job.task, '--seed', String(job.seed), '--demos', String(job.demos), '--out', job.runDir, '--overwrite'];
  if (job.evalEpisodes !== undefined) start.push('--eval-episodes', String(job.evalEpisodes));
  if (job.backend !== undefined) start.push('--backend', job.backend);
  return { name: job.name, runDir: job.runDir, start };
}

/**
 * The job script: runs the command (continuing from the folder's checkpoint when a killed or cancelled attempt
 * left one and the command can, else starting over) and records the exit in job-exit.json (written via a
 * rename: it exists only complete). The same script runs under `bash` locally and under `sbatch` on a cluster.
 */
export function jobScript(job: Job, runner: RunnerCommand): string {
  const command = (args: string[]) => cliCommand(runner, args);
  const run = job.resume
    ? `if [ -f ${shellQuote(path.join(RUN_FILES.checkpoint, 'state.json'))} ]; then
  ${command(job.resume)}
else
  ${command(job.start)}
fi`
    : command(job.start);
  return `#!/bin/bash
# Written by rewardsmith: one job (${job.name}).
started=$(date +%s.%N)
cd ${shellQuote(job.runDir)} || exit 1
rm -f ${JOB_FILES.exit}
${run}
code=$?
# The folder may be shared: whatever lies at the temporary name (a link) is removed, and noclobber (set -C)
# makes the shell create the file rather than write through one put back since.
rm -f ${JOB_FILES.exit}.tmp
set -C
printf '{"exit_code":%d,"started":%s,"ended":%s,"host":"%s"}\\n' "$code" "$started" "$(date +%s.%N)" "$(hostname)" > ${JOB_FILES.exit}.tmp
mv ${JOB_FILES.exit}.tmp ${JOB_FILES.exit}
exit $code
`;
}

const JOB_LOG_SPEC = {
  command: 'job-log',
  summary:
    "Runs COMMAND with its output appended to LOG (internal: how a Slurm job starts; the log is opened by the job's own process, a link or a FIFO at LOG refused).",
  positionals: 'LOG -- COMMAND [ARG...]',
  minPositionals: 2,
  maxPositionals: Number.MAX_SAFE_INTEGER,
  options: {},
} satisfies CommandSpec<Record<string, never>>;

/**
 * `rewardsmith job-log LOG -- COMMAND [ARG…]`: runs COMMAND with its output appended to LOG, opened with the
 * checked opener (`openForAppend`: no link followed, nothing but a plain file); exits with the command's code.
 * A Slurm job starts as `job-log job.log -- bash -c SCRIPT`, so the log is opened when the job starts, by the
 * job, never by slurmd, and the script is the text submitted (Slurm keeps it), not job.sh read again later.
 */
export async function jobLogCommand(argv: string[]): Promise<number> {
  const [log, file, ...args] = parseCommandArgs(JOB_LOG_SPEC, argv).positionals as [string, string, ...string[]];
  const fd = openForAppend(log);
  try {
    const child = spawn(file, args, { stdio: ['ignore', fd, fd] });
    // Cancelling the job (scancel) reaches the script too, where the scheduler signals only this process.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, forward);
    return await new Promise<number>((resolve) => {
      child.on('error', (err) => {
        process.stderr.write(`rewardsmith job-log: cannot start ${file}: ${err.message}\n`);
        resolve(127);
      });
      child.on('exit', (code, signal) => resolve(code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0)));
    });
  } finally {
    closeSync(fd);
  }
}

/** `job.json`: which engine took the folder's job last, and its id (a pid or a Slurm job id). */
interface JobRecord {
  engine: 'local' | 'slurm';
  job_id: string;
}

function readRecord(runDir: string): JobRecord | null {
  try {
    const r = JSON.parse(readRecordBytes(path.join(runDir, JOB_FILES.record), runDir).toString('utf8')) as JobRecord;
    return typeof r.job_id === 'string' && (r.engine === 'local' || r.engine === 'slurm') ? r : null;
  } catch {
    return null;
  }
}

function readExit(runDir: string): JobExit | null {
  try {
    return JSON.parse(readRecordBytes(path.join(runDir, JOB_FILES.exit), runDir).toString('utf8')) as JobExit;
  } catch {
    return null;
  }
}

/** Frames trained so far: the last line of the run's metrics.ndjson. */
function framesSoFar(runDir: string): number | null {
  try {
    const lines = readRecordBytes(path.join(runDir, RUN_FILES.metrics), runDir).toString('utf8').trimEnd().split('\n');
    const last = lines[lines.length - 1];
    return last ? (JSON.parse(last) as { frames: number }).frames : null;
  } catch {
    return null;
  }
}

/** Train's own account of a failure, from the events in job.log: the reward error, else the finished event's error. */
function failureFromLog(runDir: string): Pick<JobResult, 'message' | 'rewardError'> {
  const log = path.join(runDir, JOB_FILES.log);
  let text = '';
  try {
    text = readRecordBytes(log, runDir).toString('utf8');
  } catch (err) {
    // No log says nothing; a log refused (a link out of the folder, a FIFO) is why the job could not write it.
    return { message: lstatSync(log, { throwIfNoEntry: false }) ? (err as Error).message : null, rewardError: null };
  }
  let message: string | null = null;
  let rewardError: JobResult['rewardError'] = null;
  const plain: string[] = [];
  for (const line of text.split('\n')) {
    const e = parseEvent(line);
    if (e?.type === 'reward_error') rewardError = { file: e.file, line: e.line, column: e.column, kind: e.kind, message: e.message };
    else if (e?.type === 'finished' && e.error) message = e.error;
    else if (!e && line.trim()) plain.push(line.trim());
  }
  if (rewardError) message = `reward error (${rewardError.kind}) at ${rewardError.file}:${rewardError.line}:${rewardError.column}: ${rewardError.message}`;
  return { message: message ?? plain.filter((l) => !/^\s*at /.test(l)).pop() ?? null, rewardError };
}

/** Longest line of job.log read as an event; a longer one is skipped (a runaway line must not fill memory). */
const MAX_EVENT_LINE = 1 << 20;

/** The events a job's command appends to job.log, read as they come: complete lines from an offset on, a bounded amount per read. */
class LogEvents {
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly file: string,
    private offset: number,
  ) {}

  /** Where job.log ends now: a new attempt's events start there (the log is appended to across attempts). */
  static end(file: string): number {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  }

  /** Calls `each` with every event of the lines written since the last read (none from a log that is a link out of its folder or not a plain file). */
  read(each: (event: RunnerEvent) => void): void {
    let fd: number;
    try {
      fd = openRecord(this.file).fd;
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(1 << 16);
      for (let n = readSync(fd, buffer, 0, buffer.length, this.offset); n > 0; n = readSync(fd, buffer, 0, buffer.length, this.offset)) {
        this.offset += n;
        const lines = (this.partial + this.decoder.write(buffer.subarray(0, n))).split('\n');
        this.partial = lines.pop()!;
        if (this.partial.length > MAX_EVENT_LINE) this.partial = '\u0000'; // the rest of that line is not an event
        for (const line of lines) {
          const event = parseEvent(line);
          if (event) each(event);
        }
      }
    } finally {
      closeSync(fd);
    }
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Where jobs run. */
export abstract class Engine {
  abstract readonly kind: 'local' | 'slurm';
  /** Runs that may be queued or running at once (the scheduler queues the rest itself on Slurm). */
  protected abstract readonly capacity: number;
  protected abstract readonly pollMs: number;
  /** Starts the job script (its file, and the text written there); returns the job id. */
  protected abstract submit(job: Job, script: string, text: string): Promise<string>;
  /** 'queued' / 'running' while the scheduler has the job, null once it has left. */
  protected abstract status(jobId: string, job: Job): Promise<'queued' | 'running' | null>;
  protected abstract cancel(jobId: string, job: Job): Promise<void>;
  /** The scheduler's verdict on a job that ended without job-exit.json (e.g. CANCELLED, TIMEOUT). */
  protected async verdict(_jobId: string): Promise<string | null> {
    return null;
  }
  /** Why the scheduler still holds a queued job, in words, from the last poll; null where it gives no reason. */
  protected waitReason(_jobId: string): string | null {
    return null;
  }

  private active = 0;
  private readonly waiting: { wake: () => void; signal?: AbortSignal }[] = [];
  private readonly watchedSignals = new WeakSet<AbortSignal>();

  constructor(readonly runner: RunnerCommand = defaultRunnerCommand()) {}

  private async slot(signal?: AbortSignal): Promise<boolean> {
    while (this.active >= this.capacity) {
      if (signal?.aborted) return false;
      if (signal && !this.watchedSignals.has(signal)) {
        // One listener per signal, not one per waiting job: a table queues its dozens of cells on one signal
        // (Node warns from the 11th listener on).
        this.watchedSignals.add(signal);
        signal.addEventListener('abort', () => this.wakeAborted(signal), { once: true });
      }
      await new Promise<void>((wake) => this.waiting.push({ wake, signal }));
    }
    if (signal?.aborted) return false;
    this.active++;
    return true;
  }

  private release(): void {
    this.active--;
    this.waiting.shift()?.wake();
  }

  /** Wakes (to find their signal aborted) the jobs waiting on `signal`; they leave the queue, so a slot never goes to them. */
  private wakeAborted(signal: AbortSignal): void {
    const aborted = this.waiting.filter((w) => w.signal === signal);
    this.waiting.splice(0, this.waiting.length, ...this.waiting.filter((w) => w.signal !== signal));
    for (const w of aborted) w.wake();
  }

  /**
   * Runs one job to its end (or until aborted); several may run at once up to the engine's capacity. Resumes:
   * a job an interrupted command left running is waited for, a finished folder is kept (see the file's head).
   */
  async run(job: Job, hooks: JobHooks = {}): Promise<JobResult> {
    const { signal } = hooks;
    const result = (state: JobResult['state'], jobId: string | null, rest: Partial<JobResult> = {}): JobResult => {
      hooks.onState?.(state, jobId);
      return { state, jobId, kept: false, exit: null, message: state === 'cancelled' ? 'cancelled' : null, rewardError: null, ...rest };
    };
    mkdirSync(job.runDir, { recursive: true });
    const record = readRecord(job.runDir);
    let jobId = record?.engine === this.kind && (await this.status(record.job_id, job)) !== null ? record.job_id : null;
    // The command finished while nobody watched (killed after the job ended), or an earlier invocation kept it.
    const finished = readExit(job.runDir);
    if (jobId === null && (finished === null || finished.exit_code === 0) && existsSync(path.join(job.runDir, RUN_FILES.summary)))
      return result('completed', record?.job_id ?? null, { kept: true, exit: finished });
    if (jobId === null) hooks.onState?.('pending', null);
    if (!(await this.slot(signal))) return result('cancelled', jobId);
    const logFile = path.join(job.runDir, JOB_FILES.log);
    // A job found running has written its events so far to a command that is gone; a new one starts at the log's end.
    const events = hooks.onEvent ? new LogEvents(logFile, LogEvents.end(logFile)) : null;
    const forward = () => events?.read(hooks.onEvent!);
    try {
      if (jobId === null) {
        if (signal?.aborted) return result('cancelled', null);
        rmSync(path.join(job.runDir, JOB_FILES.exit), { force: true });
        const script = path.join(job.runDir, JOB_FILES.script);
        const text = jobScript(job, this.runner);
        writeAtomic(job.runDir, script, text, { mode: 0o755 });
        jobId = await this.submit(job, script, text);
        // Recorded before the first poll: a command killed right now finds the job again instead of starting it twice.
        writeAtomic(job.runDir, path.join(job.runDir, JOB_FILES.record), JSON.stringify({ engine: this.kind, job_id: jobId } satisfies JobRecord) + '\n');
        hooks.onState?.('queued', jobId);
      }
      const ended = await this.watch(job, jobId, jobId === record?.job_id ? null : 'queued', { ...hooks, onPoll: forward });
      forward();
      if (!ended) {
        await this.cancel(jobId, job);
        return result('cancelled', jobId);
      }
      return await this.outcome(job, jobId, result);
    } finally {
      this.release();
    }
  }

  /** Polls the job until the scheduler lets go of it (true) or the signal aborts (false). */
  private async watch(job: Job, jobId: string, seen: JobState | null, hooks: JobHooks & { onPoll: () => void }): Promise<boolean> {
    let last = seen;
    let lastFrames = -1;
    let lastWhy: string | null = null;
    for (;;) {
      if (hooks.signal?.aborted) return false;
      hooks.onPoll();
      const s = await this.status(jobId, job);
      if (s === null) return true;
      if (s !== last) hooks.onState?.((last = s), jobId);
      const why = s === 'queued' ? this.waitReason(jobId) : null;
      if (why !== null && why !== lastWhy) hooks.onWaiting?.((lastWhy = why));
      const frames = s === 'running' && job.frames !== undefined ? framesSoFar(job.runDir) : null;
      if (frames !== null && frames !== lastFrames) hooks.onProgress?.((lastFrames = frames));
      await sleep(this.pollMs, hooks.signal);
    }
  }

  /** How a job the scheduler let go of ended: job-exit.json says how the command ended (shared file systems can lag a little). */
  private async outcome(
    job: Job,
    jobId: string,
    result: (state: JobResult['state'], jobId: string | null, rest?: Partial<JobResult>) => JobResult,
  ): Promise<JobResult> {
    let exit = readExit(job.runDir);
    for (let i = 0; exit === null && i < 10; i++) {
      await sleep(300);
      exit = readExit(job.runDir);
    }
    if (exit?.exit_code === 0 && existsSync(path.join(job.runDir, RUN_FILES.summary))) return result('completed', jobId, { exit });
    const found = failureFromLog(job.runDir);
    const verdict = exit ? null : await this.verdict(jobId);
    const command = job.start[0];
    const message =
      found.message ?? (exit ? `${command} exited with code ${exit.exit_code}` : `the job ended without finishing ${command}${verdict ? ` (${verdict})` : ''}`);
    return result('failed', jobId, { exit, message: verdict && found.message ? `${found.message} (${verdict})` : message, rewardError: found.rewardError });
  }
}

/** Child processes on this machine, at most `parallel` at once (default: one per core). */
export class LocalEngine extends Engine {
  readonly kind = 'local' as const;
  protected readonly capacity: number;
  protected readonly pollMs: number;

  constructor(opts: { parallel?: number; pollMs?: number; runner?: RunnerCommand } = {}) {
    super(opts.runner);
    this.capacity = Math.max(1, opts.parallel ?? os.availableParallelism());
    this.pollMs = opts.pollMs ?? 500;
  }

  protected async submit(job: Job, script: string): Promise<string> {
    const log = openForAppend(path.join(job.runDir, JOB_FILES.log));
    try {
      // Its own process group: Ctrl-C on the sweep cancels it explicitly, and a sweep killed outright
      // leaves it running to be found again (by pid) when the sweep is started again.
      const child = spawn('bash', [script], { cwd: job.runDir, detached: true, stdio: ['ignore', log, log] });
      child.unref();
      child.on('error', () => {});
      if (child.pid === undefined) throw new Error(`could not start bash for ${job.name}`);
      return String(child.pid);
    } finally {
      closeSync(log);
    }
  }

  protected async status(jobId: string, job: Job): Promise<'running' | null> {
    const pid = Number(jobId);
    if (!Number.isInteger(pid) || pid <= 0) return null;
    try {
      // A pid from an earlier invocation may since belong to another program: it must be this folder's job script.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.split('\0').includes(path.join(job.runDir, JOB_FILES.script))) return null;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z') ? null : 'running';
    } catch {
      return null;
    }
  }

  protected async cancel(jobId: string, job: Job): Promise<void> {
    // Only a group still led by this folder's job script: once it has exited, its pid (and group id) can be
    // another program's, e.g. another job's script just started.
    if ((await this.status(jobId, job)) === null) return;
    try {
      process.kill(-Number(jobId), 'SIGTERM');
    } catch {
      /* already gone */
    }
    for (let i = 0; i < 50 && (await this.status(jobId, job)) !== null; i++) await sleep(100);
  }
}

export interface SlurmOptions {
  partition?: string;
  /** sbatch --time, e.g. `30:00` or `1-00:00:00`. */
  time?: string;
  cpusPerTask?: number;
  /** GPUs per job, as --gres=gpu:N. */
  gpus?: number;
  /** More sbatch arguments, passed as given (e.g. `--account=rl`, `--mem=8G`). */
  extra?: string[];
  pollMs?: number;
  runner?: RunnerCommand;
}

/** A failure of a Slurm command, with what the command said (e.g. an unknown partition). */
export class SlurmError extends Error {}

function command(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as NodeJS.ErrnoException).code === 'number'
          ? Number((err as NodeJS.ErrnoException).code)
          : (err as { code?: unknown }).code === 'ENOENT'
            ? 127
            : 1
        : 0;
      resolve({ code, stdout, stderr: stderr || (err && !stdout ? err.message : '') });
    });
  });
}

/** One `sbatch` job per run, watched with `squeue` (one call per poll for all jobs), cancelled with `scancel`. */
export class SlurmEngine extends Engine {
  readonly kind = 'slurm' as const;
  protected readonly capacity = Number.POSITIVE_INFINITY;
  protected readonly pollMs: number;
  private queue: Promise<Map<string, 'queued' | 'running'>> | null = null;
  private queueAt = 0;
  private lastQueue: Map<string, 'queued' | 'running'> | null = null;
  /** Pending jobs' reason codes (squeue's %r) at the last poll. */
  private readonly reasons = new Map<string, string>();
  private squeueFailures = 0;

  constructor(private readonly o: SlurmOptions = {}) {
    super(o.runner);
    this.pollMs = o.pollMs ?? 2000;
  }

  /** Checks that the Slurm client commands exist and reach a controller. */
  static async check(): Promise<void> {
    const r = await command('squeue', ['-h', '-o', '%i', '-u', os.userInfo().username]);
    if (r.code === 127)
      throw new SlurmError('sbatch/squeue are not installed here: run on a Slurm login node, or bring up a local cluster with `npm run slurm:local`');
    if (r.code !== 0) throw new SlurmError(`squeue failed: ${r.stderr.trim().split('\n').pop()} (is slurmctld up? locally: \`npm run slurm:local\`)`);
  }

  /** The sbatch arguments for a job (without the script). */
  sbatchArgs(job: Job): string[] {
    const o = this.o;
    const args = [
      '--parsable',
      `--job-name=rewardsmith:${job.name}`,
      `--chdir=${job.runDir}`,
      // slurmd would open --output by its path when the job starts, following a link put there while the job
      // waited in the queue: the job's own process opens job.log instead (`job-log`, with the checked opener).
      '--output=/dev/null',
    ];
    if (o.partition) args.push(`--partition=${o.partition}`);
    if (o.time) args.push(`--time=${o.time}`);
    if (o.cpusPerTask !== undefined) args.push(`--cpus-per-task=${o.cpusPerTask}`);
    if (o.gpus) args.push(`--gres=gpu:${o.gpus}`);
    args.push(...(o.extra ?? []));
    return args;
  }

  protected async submit(job: Job, _script: string, text: string): Promise<string> {
    // A link or anything else but a plain file at job.log is refused here, before anything is submitted; the job
    // opens the log again when it starts (`rewardsmith job-log`), refusing one put there while it was queued. The
    // script goes with the submission (Slurm keeps it): a job.sh replaced while the job waits is not what runs.
    const log = path.join(job.runDir, JOB_FILES.log);
    closeSync(openForAppend(log));
    const wrap = `exec ${cliCommand(this.runner, ['job-log', log, '--', 'bash', '-c', text])}`;
    const r = await command('sbatch', [...this.sbatchArgs(job), `--wrap=${wrap}`]);
    const id = r.stdout.trim().split(';')[0] ?? '';
    if (r.code !== 0 || !/^\d+(_\d+)?$/.test(id)) throw new SlurmError(`sbatch refused ${job.name}: ${(r.stderr || r.stdout).trim() || `exit ${r.code}`}`);
    this.queue = null;
    return id;
  }

  /** Our jobs the scheduler still holds, shared by every job's poll within one interval. */
  private jobs(): Promise<Map<string, 'queued' | 'running'>> {
    if (this.queue && Date.now() - this.queueAt < this.pollMs / 2) return this.queue;
    this.queueAt = Date.now();
    this.queue = command('squeue', ['-h', '-u', os.userInfo().username, '-o', '%i %T %r']).then((r) => {
      if (r.code !== 0) {
        // A controller restart or a slow moment: keep the last answer for a while before giving up.
        if (this.lastQueue && ++this.squeueFailures < 30) return this.lastQueue;
        throw new SlurmError(`squeue failed: ${r.stderr.trim()}`);
      }
      this.squeueFailures = 0;
      const map = new Map<string, 'queued' | 'running'>();
      this.reasons.clear();
      for (const line of r.stdout.split('\n')) {
        const [id, state, reason] = line.trim().split(/\s+/);
        if (!id || !state) continue;
        // COMPLETING: train has exited and job-exit.json is written; the node is cleaning up.
        if (state === 'PENDING' || state === 'CONFIGURING' || state === 'REQUEUED' || state === 'SUSPENDED') {
          map.set(id, 'queued');
          if (state === 'PENDING' && reason) this.reasons.set(id, reason);
        } else if (state === 'RUNNING' || state === 'COMPLETING') map.set(id, 'running');
      }
      this.lastQueue = map;
      return map;
    });
    return this.queue;
  }

  protected async status(jobId: string): Promise<'queued' | 'running' | null> {
    return (await this.jobs()).get(jobId) ?? null;
  }

  protected override waitReason(jobId: string): string | null {
    const code = this.reasons.get(jobId);
    return code ? slurmWaitReason(code, jobId) : null;
  }

  protected async cancel(jobId: string): Promise<void> {
    const r = await command('scancel', [jobId]);
    if (r.code !== 0) throw new SlurmError(`scancel ${jobId} failed: ${r.stderr.trim()}`);
    // Wait (briefly) until the controller has let go of it, so that when the sweep exits its jobs are gone.
    for (let i = 0; i < 60; i++) {
      this.queue = null;
      if ((await this.status(jobId)) === null) return;
      await sleep(250);
    }
  }

  /** sacct where the cluster keeps accounting, else the controller's memory of the job (scontrol). */
  protected override async verdict(jobId: string): Promise<string | null> {
    const acct = await command('sacct', ['-n', '-X', '-P', '-j', jobId, '-o', 'State,ExitCode,Reason']);
    const line = acct.code === 0 ? acct.stdout.trim().split('\n')[0] : undefined;
    if (line) {
      const [state, exit] = line.split('|');
      return `Slurm: ${state}, exit ${exit}`;
    }
    const show = await command('scontrol', ['show', 'job', '-o', jobId]);
    const state = /JobState=(\S+)/.exec(show.stdout)?.[1];
    const reason = /Reason=(\S+)/.exec(show.stdout)?.[1];
    return state ? `Slurm: ${state}${reason && reason !== 'None' ? `, ${reason}` : ''}` : null;
  }
}

/**
 * A pending job's reason code (squeue %r, Slurm's "job reason codes") in words, the code beside them; null for
 * `None` (about to start). Codes not listed here are given as they are.
 */
export function slurmWaitReason(code: string, jobId: string): string | null {
  if (code === 'None' || code === '(null)') return null;
  const words: Record<string, string> = {
    Resources: 'waiting for resources: the nodes it asks for are busy',
    Priority: 'waiting behind jobs of higher priority',
    JobHeldUser: `held by its user: \`scontrol release ${jobId}\` lets it run`,
    JobHeldAdmin: 'held by an administrator',
    Dependency: 'waiting for a job it depends on',
    DependencyNeverSatisfied: 'its dependency can never be met: it will not run',
    BeginTime: 'waiting for its start time',
    ReqNodeNotAvail: 'a node it needs is down, drained or reserved',
    NodeDown: 'a node it needs is down',
    PartitionDown: 'its partition is down',
    PartitionInactive: 'its partition is inactive',
    PartitionTimeLimit: "its time limit is over the partition's: it will not run (lower --time)",
    PartitionNodeLimit: "it asks for more nodes or CPUs than the partition's limit",
    BadConstraints: 'no node satisfies what it asks for',
    InvalidAccount: 'its account is invalid',
    InvalidQOS: 'its QOS is invalid',
  };
  const said = words[code] ?? (/^(QOS|Assoc)/.test(code) ? 'held by a limit of your account or QOS' : undefined);
  return said ? `${said} (Slurm: ${code})` : `Slurm: ${code}`;
}
