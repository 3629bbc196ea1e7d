// `rewardsmith sweep`: one training per (reward, seed) on an engine (local processes or Slurm jobs), gathered
// into DIR/results.json, results.md and results.svg. DIR/sweep.json records the settings and each run's job,
// so the same command run again resumes: completed runs are kept, jobs still queued or running (the sweep was
// killed, not the jobs) are waited for, and failed or cancelled runs start again (from their checkpoint).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommandError, PROCESS_IO, UsageError, parseCommandArgs, runCommand, type CommandIo } from '../args';
import { makeEvent, type RunnerEvent, type SweepRunEvent } from '../events';
import { makeFolder, makeFolderBelow, writeAtomic } from '../files';
import { readRecordBytes, readRecordObject, RunRecordError, sha256Hex } from '../records';
import { resolveTask, TaskFileError } from '../tasks';
import { BACKEND_CHOICES } from '../ppo/backend';
import { type Engine, trainJob, type JobState, type TrainJob } from './engine';
import { cancellableOnSignal, ENGINE_OPTIONS, engineFromOptions } from './engine-options';
import { SWEEP_FILES, readSummary, resultsMarkdown, resultsSvg, sweepResults, type RunRecord, type SweepResults } from './results';

export const SWEEP_SPEC = {
  command: 'sweep',
  summary: 'train every reward × seed (locally or as Slurm jobs) and rank the rewards by held-out success',
  options: {
    task: { type: 'string', description: 'built-in task id or task file', valueName: 'T' },
    rewards: { type: 'list', description: 'reward files to compare', valueName: 'FILE...' },
    seeds: { type: 'int', description: 'seeds per reward (0 … N-1)', valueName: 'N', min: 1, default: 3 },
    steps: { type: 'int', description: 'training frames per run', valueName: 'S', min: 1, default: 256_000 },
    init: { type: 'string', description: 'start every run from this checkpoint (KL to it, as train --init)', valueName: 'DIR' },
    out: { type: 'string', description: 'sweep folder (run folders, results.json/.md/.svg); the same folder resumes', valueName: 'DIR' },
    envs: { type: 'int', description: 'parallel environments per run (train --envs)', valueName: 'E', min: 1 },
    'eval-episodes': { type: 'int', description: 'held-out episodes per run (train --eval-episodes)', valueName: 'E', min: 1 },
    workers: { type: 'int', description: 'env worker threads per run (train --workers)', valueName: 'W', min: 0 },
    backend: { type: 'string', description: 'network engine per run (train --backend)', choices: BACKEND_CHOICES },
    ...ENGINE_OPTIONS,
    events: { type: 'string', description: 'print progress as ndjson events on stdout', choices: ['ndjson'] },
  },
  epilog: `Runs go to DIR/runs/<reward>/seed-<n>/ (a train run folder plus job.sh, job.log, job-exit.json). On Slurm,
DIR must be on a file system the compute nodes share, and --node/--cli must exist there. Ctrl-C cancels
the jobs (scancel); running the same command again resumes.
Example: rewardsmith sweep --task approach-tree --rewards a.reward.ts b.reward.ts --seeds 3 --engine slurm --partition gpu --gpus 1 --out sweeps/tree`,
} as const;

interface SweepState {
  version: 1;
  task: string;
  steps: number;
  seeds: number;
  init: string | null;
  rewards: { name: string; file: string; sha256: string }[];
  runs: Record<string, { engine: 'local' | 'slurm'; jobId: string | null; state: JobState; wallSeconds: number | null; message: string | null }>;
}

/** The sweep's copy of a reward, in its own language: `DIR/rewards/<name>.reward.ts` or `.reward.py`. */
function rewardCopyIn(dir: string, r: { name: string; file: string }): string {
  return path.join(dir, 'rewards', `${r.name}.reward.${/\.py$/i.test(r.file) ? 'py' : 'ts'}`);
}

/** `approach-tree.dense.reward.ts` → `approach-tree.dense`; a repeated name gets `-2`, `-3`. */
function rewardNames(files: string[]): string[] {
  const seen = new Map<string, number>();
  return files.map((f) => {
    const base = path
      .basename(f)
      .replace(/\.reward\.(ts|js|py)$/, '')
      .replace(/\.(ts|js|py)$/, '')
      .replace(/[^\w.-]+/g, '_');
    const k = (seen.get(base) ?? 0) + 1;
    seen.set(base, k);
    return k === 1 ? base : `${base}-${k}`;
  });
}

export interface SweepOptions {
  task: string;
  rewards: string[];
  seeds: number;
  steps: number;
  init?: string;
  out: string;
  engine: Engine;
  train?: Pick<TrainJob, 'envs' | 'evalEpisodes' | 'workers' | 'backend'>;
  emit?: (e: RunnerEvent) => void;
  say?: (line: string) => void;
  signal?: AbortSignal;
}

type SweepJob = TrainJob & { reward: string; rewardOriginal: string };

/**
 * DIR/sweep.json and DIR/rewards/: a new sweep's settings and reward copies, or an earlier sweep's, which must
 * match (same task, budget, seeds, start and reward files, unchanged since).
 */
function openSweep(o: SweepOptions, dir: string, taskId: string): { state: SweepState; save: () => void } {
  const names = rewardNames(o.rewards);
  // Each reward file read once: the copy the runs train is the text whose sha256 the sweep records.
  const bytes = o.rewards.map((file) => readFileSync(file));
  const rewards = o.rewards.map((file, i) => ({ name: names[i]!, file: path.resolve(file), sha256: sha256Hex(bytes[i]!) }));
  const stateFile = path.join(dir, SWEEP_FILES.state);
  let state: SweepState = { version: 1, task: taskId, steps: o.steps, seeds: o.seeds, init: o.init ? path.resolve(o.init) : null, rewards, runs: {} };
  if (existsSync(stateFile)) {
    const earlier = readRecordObject(stateFile, "a sweep's state") as unknown as SweepState;
    if (!Array.isArray(earlier.rewards) || !earlier.runs || typeof earlier.runs !== 'object')
      throw new RunRecordError(`${stateFile}: a sweep's state lists its rewards and runs, this one does not`);
    const differs = (['task', 'steps', 'seeds', 'init'] as const).filter((k) => earlier[k] !== state[k]);
    if (JSON.stringify(earlier.rewards.map((r) => [r.name, r.file])) !== JSON.stringify(rewards.map((r) => [r.name, r.file]))) differs.push('rewards' as never);
    if (differs.length > 0)
      throw new CommandError(
        `${dir} holds a sweep with other settings (${differs.map((k) => `${k}: ${JSON.stringify(earlier[k])}`).join(', ')}); run it with the same ones to resume it, or choose another --out`,
      );
    for (const r of rewards) {
      const was = earlier.rewards.find((e) => e.name === r.name)!;
      if (was.sha256 !== r.sha256)
        throw new CommandError(
          `${r.file} changed since this sweep started; its runs trained the earlier text (kept in ${rewardCopyIn(dir, r)}): restore it, or start a new sweep with another --out`,
        );
    }
    state = { ...state, runs: earlier.runs };
    o.say?.(`resuming the sweep in ${dir}`);
  }
  // The runs train these copies: on a cluster only DIR needs to be shared, and editing a file mid-sweep changes nothing.
  // DIR may be someone else's: no copy is written through a linked rewards/ folder, and a copy already there
  // is trained only when it is read within DIR (records.ts) and holds the text the sweep started with.
  makeFolder(path.join(dir, 'rewards'));
  for (const [i, r] of rewards.entries()) {
    const copy = rewardCopyIn(dir, r);
    if (!existsSync(copy)) writeAtomic(dir, copy, bytes[i]!);
    else if (sha256Hex(readRecordBytes(copy, dir)) !== r.sha256)
      throw new RunRecordError(`${copy}: not the text of ${r.file} this sweep trains (its sha256 differs); remove it, or choose another --out`);
  }
  const save = () => writeAtomic(dir, stateFile, JSON.stringify(state, null, 2) + '\n');
  save();
  return { state, save };
}

/** Every reward × seed as a train job on the reward's copy. */
function sweepJobs(o: SweepOptions, dir: string, state: SweepState): SweepJob[] {
  const taskArg = existsSync(o.task) ? path.resolve(o.task) : o.task;
  return state.rewards.flatMap((r) =>
    Array.from(
      { length: o.seeds },
      (_, seed): SweepJob => ({
        name: `${r.name}/seed-${seed}`,
        reward: r.name,
        rewardOriginal: r.file,
        runDir: path.join(dir, 'runs', r.name, `seed-${seed}`),
        rewardFile: rewardCopyIn(dir, r),
        // The job reads the copy later, in its own process: it trains the text checked here or nothing.
        rewardSha256: r.sha256,
        task: taskArg,
        seed,
        steps: o.steps,
        init: state.init ?? undefined,
        ...o.train,
      }),
    ),
  );
}

/** What the sweep keeps about its runs while they train: sweep.json's records, the events and progress lines. */
class SweepProgress {
  private done = 0;
  readonly records: Map<string, RunRecord>;

  constructor(
    private readonly o: SweepOptions,
    private readonly state: SweepState,
    private readonly save: () => void,
    private readonly total: number,
    jobs: SweepJob[],
  ) {
    this.records = new Map(
      jobs.map((j) => {
        const prev = state.runs[j.name];
        const record: RunRecord = {
          reward: j.reward,
          rewardFile: j.rewardOriginal,
          seed: j.seed,
          jobId: prev?.jobId ?? null,
          runDir: j.runDir,
          state: prev?.state ?? 'pending',
          wallSeconds: prev?.wallSeconds ?? null,
          message: prev?.message ?? null,
        };
        return [j.name, record];
      }),
    );
  }

  /** A `sweep_run` event of the job's current record. */
  report(job: SweepJob, frames: number, extra: Partial<SweepRunEvent> = {}): void {
    const r = this.records.get(job.name)!;
    this.o.emit?.(
      makeEvent({
        type: 'sweep_run',
        run: job.name,
        reward: job.reward,
        seed: job.seed,
        state: r.state,
        job_id: r.jobId,
        run_dir: job.runDir,
        frames,
        total_frames: job.steps,
        ...extra,
      }),
    );
  }

  update(job: SweepJob, patch: Partial<RunRecord>): void {
    const r = Object.assign(this.records.get(job.name)!, patch);
    this.state.runs[job.name] = { engine: this.o.engine.kind, jobId: r.jobId, state: r.state, wallSeconds: r.wallSeconds, message: r.message };
    this.save();
  }

  /** Trains one run on the engine (or keeps it: the engine resumes), recording each state. */
  async run(job: SweepJob): Promise<void> {
    const { o } = this;
    let lastQuarter = -1;
    const result = await o.engine.run(trainJob(job), {
      signal: o.signal,
      onState: (s, jobId) => {
        this.update(job, { state: s, jobId, message: null });
        const where = jobId ? ` (${o.engine.kind === 'slurm' ? 'job' : 'pid'} ${jobId})` : '';
        if (s === 'queued' || s === 'running') o.say?.(`        ${job.name}: ${s}${where}`);
        if (s !== 'completed' && s !== 'failed') this.report(job, 0);
      },
      onWaiting: (why) => {
        this.update(job, { message: why });
        o.say?.(`        ${job.name}: queued: ${why}`);
        this.report(job, 0, { message: why });
      },
      onProgress: (frames) => {
        this.report(job, frames);
        const quarter = Math.floor((4 * frames) / job.steps);
        if (quarter !== lastQuarter && quarter < 4)
          o.say?.(`        ${job.name}: ${frames.toLocaleString('en-US')}/${job.steps.toLocaleString('en-US')} frames`);
        lastQuarter = quarter;
      },
    });
    const wallSeconds = result.exit ? result.exit.ended - result.exit.started : (this.records.get(job.name)!.wallSeconds ?? null);
    this.update(job, { state: result.state, jobId: result.jobId, wallSeconds, message: result.message });
    if (result.state === 'cancelled') return;
    this.done++;
    const s = result.state === 'completed' ? readSummary(job.runDir) : null;
    const success = s ? { count: s.eval.success.count, n: s.eval.success.n } : undefined;
    const how = result.kept
      ? 'kept (completed earlier)'
      : `${result.state}${success ? `, held-out success ${success.count}/${success.n}` : ''}${wallSeconds !== null ? ` in ${wallSeconds.toFixed(0)} s` : ''}${result.message ? `: ${result.message}` : ''}`;
    o.say?.(`[${this.done}/${this.total}] ${job.name}: ${how}`);
    this.report(job, s?.env_steps ?? 0, { ...(success ? { success } : {}), ...(result.message ? { message: result.message } : {}) });
  }
}

/** Runs (or resumes) a sweep and writes its results; returns them. */
export async function sweep(o: SweepOptions): Promise<SweepResults> {
  const start = Date.now();
  const dir = path.resolve(o.out);
  const task = resolveTask(o.task);
  const { state, save } = openSweep(o, dir, task.id);
  const jobs = sweepJobs(o, dir, state);
  // The runs' folders, made here so that none is reached through a link placed in the sweep folder (runs/, a reward's, a seed's).
  for (const job of jobs) makeFolderBelow(dir, job.runDir);
  const progress = new SweepProgress(o, state, save, jobs.length, jobs);
  const writeResults = (): SweepResults => {
    const meta = {
      task: task.id,
      steps: o.steps,
      seeds: Array.from({ length: o.seeds }, (_, i) => i),
      engine: o.engine.kind,
      wall_seconds: (Date.now() - start) / 1000,
    };
    const results = sweepResults(
      dir,
      meta,
      [...progress.records.values()],
      state.rewards.map((r) => ({ name: r.name, file: r.file })),
    );
    writeAtomic(dir, path.join(dir, SWEEP_FILES.results), JSON.stringify(results, null, 2) + '\n');
    writeAtomic(dir, path.join(dir, SWEEP_FILES.table), resultsMarkdown(results));
    writeAtomic(dir, path.join(dir, SWEEP_FILES.plot), resultsSvg(results));
    return results;
  };
  o.emit?.(
    makeEvent({
      type: 'started',
      command: 'sweep',
      task: task.id,
      reward_file: null,
      run_dir: dir,
      backend: o.engine.kind,
      env: 'sim',
      total_frames: o.steps * jobs.length,
      num_envs: o.train?.envs ?? 0,
      resumed_from_frames: 0,
    }),
  );
  o.say?.(
    `sweep: ${state.rewards.length} reward(s) × ${o.seeds} seed(s) = ${jobs.length} runs of ${o.steps.toLocaleString('en-US')} frames on ${o.engine.kind}`,
  );
  writeResults();
  await Promise.all(
    jobs.map(async (job) => {
      await progress.run(job);
      writeResults();
    }),
  );
  return writeResults();
}

export async function sweepCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  let emit: ((e: RunnerEvent) => void) | undefined;
  let out = '';
  const code = await runCommand(
    'sweep',
    async () => {
      const { values: v } = parseCommandArgs(SWEEP_SPEC, argv);
      emit = v.events === 'ndjson' ? (e) => io.stdout(JSON.stringify(e) + '\n') : undefined;
      if (!v.task) throw new UsageError('--task is required');
      if (v.rewards.length === 0) throw new UsageError('--rewards needs at least one reward file');
      if (!v.out) throw new UsageError('--out DIR is required');
      for (const file of v.rewards) if (!existsSync(file)) throw new UsageError(`--rewards: ${file}: no such file`);
      if (v.init && !existsSync(v.init)) throw new UsageError(`--init: ${v.init}: no such checkpoint folder`);
      try {
        resolveTask(v.task);
      } catch (err) {
        if (err instanceof TaskFileError) throw new CommandError(err.message);
        throw err;
      }
      const engine = (await engineFromOptions(v))!;
      out = path.resolve(v.out);
      const say = (line: string) => io.stderr(line + '\n');
      const { value: results, interrupted } = await cancellableOnSignal('sweep', engine, say, (signal) =>
        sweep({
          task: v.task!,
          rewards: v.rewards,
          seeds: v.seeds,
          steps: v.steps,
          init: v.init,
          out,
          engine,
          emit,
          say,
          signal,
          train: { envs: v.envs, evalEpisodes: v['eval-episodes'], workers: v.workers, backend: v.backend },
        }),
      );
      // The table as written to results.md, from the results in hand: the folder is not read back (it may be someone else's).
      const table = resultsMarkdown(results);
      if (!emit) io.stdout(table + `\nresults: ${path.join(out, SWEEP_FILES.results)} (plot: ${SWEEP_FILES.plot})\n`);
      if (interrupted) {
        emit?.(makeEvent({ type: 'finished', ok: false, run_dir: out, summary: path.join(out, SWEEP_FILES.results), error: 'cancelled' }));
        return 130;
      }
      const failed = results.runs.filter((r) => r.state !== 'completed');
      if (failed.length > 0) {
        const message = `${failed.length} of ${results.runs.length} runs did not complete (${failed.map((r) => `${r.reward}/seed-${r.seed}: ${r.message ?? r.state}`).join('; ')}); run the same command again to retry them`;
        emit?.(makeEvent({ type: 'finished', ok: false, run_dir: out, summary: path.join(out, SWEEP_FILES.results), error: message }));
        throw new CommandError(message);
      }
      emit?.(makeEvent({ type: 'finished', ok: true, run_dir: out, summary: path.join(out, SWEEP_FILES.results) }));
      return 0;
    },
    io,
  );
  return code;
}
