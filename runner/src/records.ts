// On-disk records of a run, written by the trainer/evaluator and read by the analyzer, the loop, reports,
// sweeps and the extension's dashboard. One definition here, with the checked readers everyone uses, so
// writer and readers cannot drift and a malformed file fails with its location.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readRecordBytes, RunRecordError } from './files';
import { wilson, type RateComparison } from './stats';
import type { DeathCause, NearestBlocks, RecordedObservation } from './schema';

/**
 * One step of a recorded episode, in the analyzer's format (the paper's trajectory fields): its number, action
 * and reward, and every field of the step's observation (schema STEP_OBSERVATION_FIELDS; records written before
 * `damage_dealt` and `kill_entity` were kept lack them).
 */
export interface RecordedStep extends RecordedObservation {
  step: number;
  action: string;
  reward: number;
}

/** An evaluation episode, as stored in `DIR/eval/episodes.ndjson` (one per line). */
export interface EpisodeRecord {
  episode: number;
  seed: number;
  success: boolean;
  steps: number;
  died: boolean;
  deathCause: DeathCause | null;
  truncated: boolean;
  return: number;
  /** Distance between first and last position, metres. */
  distanceMoved: number;
  /** Last 32 steps (the paper's L = 32), oldest first. */
  lastSteps: RecordedStep[];
  final: {
    health: number;
    inventory: Record<string, number>;
    nearest: NearestBlocks;
    blockUnderFoot: string;
    died: boolean;
  };
  /** Whole path, [x, y, z] per step, for maps and motion analysis. */
  path: [number, number, number][];
  /**
   * Every step's action, one character each (`STEP_CODES[index into GAME_FACTS.actions]`): with the seed, what
   * playback re-simulates the episode from. Absent in records written before playback existed.
   */
  actions?: string;
  /**
   * Every step's reward: `values` the distinct rewards, `steps` one character per step (`STEP_CODES[index into
   * values]`); a plain array when an episode had more than STEP_CODES.length distinct rewards. Absent in older records.
   */
  step_rewards?: { values: number[]; steps: string } | number[];
  /** How the reward file was written: `dense_sparse` rewards are `sign(sparse) * 1 + sign(dense) * 0.1` (the scale rule). */
  reward_exports?: 'reward_function' | 'dense_sparse';
}

/** One character per step for `actions` and `step_rewards.steps`: an index 0..63. */
export const STEP_CODES = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_';
const STEP_CODE_INDEX = new Map([...STEP_CODES].map((c, i) => [c, i]));

/** The episode's action indexes, one per step; null for records without them (written before playback). */
export function episodeActions(ep: EpisodeRecord): number[] | null {
  if (ep.actions === undefined) return null;
  return decodeStepCodes(ep.actions);
}

/** STEP_CODES characters back to their indexes (a character that is none gives -1). */
export function decodeStepCodes(codes: string): number[] {
  return [...codes].map((c) => STEP_CODE_INDEX.get(c) ?? -1);
}

/** The episode's reward at each step; null for records without them. */
export function episodeRewards(ep: EpisodeRecord): number[] | null {
  const r = ep.step_rewards;
  if (r === undefined) return null;
  if (Array.isArray(r)) return r;
  return [...r.steps].map((c) => r.values[STEP_CODE_INDEX.get(c)!]!);
}

/** One row of an episode's playback timeline: the steps since the previous row, up to the one its frame shows. */
export interface PlaybackRow {
  /** The step this row's frame shows (0: the start, before any action). */
  step: number;
  /** The last action taken (null at the start). */
  action: string | null;
  /** Reward summed over the steps since the previous row (null when the record has no rewards). */
  reward: number | null;
  /** The same split into the scale rule's terms, for dense/sparse reward files (else null). */
  dense: number | null;
  sparse: number | null;
  /** Distance to the nearest target of the task in view, metres (null: none in view). */
  target: number | null;
  health: number;
  position: [number, number, number];
}

/** The analyzer's note on steps of a played-back episode (a suggestion's evidence). */
export interface PlaybackNote {
  suggestion: string;
  /** 1-based inclusive steps it cites (null: the whole episode). */
  steps: [number, number] | null;
  note: string;
}

/**
 * `rewardsmith playback RUN --episode N --format json`: a recorded episode re-simulated from its seed and
 * actions, as the report and the dashboard play it.
 */
export interface PlaybackRecord {
  version: 1;
  episode: number;
  seed: number;
  task: string;
  steps: number;
  outcome: string;
  /** Frame size in pixels. */
  width: number;
  height: number;
  /** Steps between frames (1: every step). */
  every: number;
  frame_count: number;
  /** Every frame stacked top to bottom in one palette PNG, base64. */
  frames_png: string;
  /** One per frame. */
  rows: PlaybackRow[];
  notes: PlaybackNote[];
  /** What to know about this playback (subsampled, no rewards recorded, a re-simulation that left the record). */
  remarks: string[];
  /** Whether re-simulating reproduced every recorded position and the outcome. */
  reproduced: boolean;
  /** For a probe episode (`playback REWARD --probe N`): which, of how many in the task's bank, and whose rewards. */
  probe?: ProbeOrigin;
}

export interface ProbeOrigin {
  /** 1-based, as the probes' findings number them. */
  number: number;
  of: number;
  behaviour: string;
  /** The behaviour in words ("standing still"). */
  description: string;
  /** The reward file whose per-step rewards the timeline shows. */
  reward_file: string;
}

/** A rate over episodes with its Wilson 95 % interval (stats.ts `wilson`); rate null when n = 0 (no estimate). */
export interface RateRecord {
  count: number;
  n: number;
  rate: number | null;
  ci95: [number, number];
}

/** count of n as a RateRecord (Wilson 95 % interval from stats.ts). */
export function rateRecord(count: number, n: number): RateRecord {
  const w = wilson(count, n);
  return { count, n, rate: n > 0 ? w.rate : null, ci95: w.ci95 };
}

/**
 * Training success as the curve shows it: episodes that *started* in a window of frames, each counted when it
 * ends, over a window whose episodes have all ended. Counting the last N *finished* episodes instead favours
 * short (mostly successful) episodes, because long failures are still running when the window closes.
 */
export interface TrainingSuccessRecord extends RateRecord {
  /** The window: episodes whose first frame lies in [from, to). */
  started_from_frame: number;
  started_to_frame: number;
  /** Mean return of the same episodes (null when n = 0). */
  mean_return: number | null;
}

/** Named when the 95 % interval of the difference of training and held-out success excludes 0 (runs/training-success.ts). */
export interface GeneralisationGap {
  train: RateRecord;
  held_out: RateRecord;
  /** One sentence with both figures, for summaries, the CLI and the dashboard. */
  message: string;
}

/** `DIR/summary.json`: what the run achieved. How it trained (the checkpoint it started from, the PPO
 * hyperparameters, …) is in `DIR/config.json` (`runs/config.ts` `readStoredConfig`), its one home. */
export interface RunSummary {
  /** The task's id. */
  task: string;
  /** The task file (absolute) when the task is not built in; the id alone cannot be resolved again. */
  task_file?: string | null;
  reward_file: string | null;
  reward_sha256: string | null;
  seed: number;
  env: 'sim' | 'mineflayer';
  env_steps: number;
  wall_seconds: number;
  backend: string;
  train: {
    updates: number;
    frames: number;
    mean_return: number;
    /** = success.rate: the unbiased training success (null until a window of started episodes has ended). */
    success_rate: number | null;
    success: TrainingSuccessRecord;
    entropy: number;
    fps: number;
    /** Where training episodes ended (held-out episodes run to the task's limit); absent in older runs. */
    episode_steps?: number;
  };
  eval: EvalSummary;
  /** Present (non-null) when training and held-out success intervals are disjoint. */
  generalisation_gap: GeneralisationGap | null;
  /** Non-null when a fine-tuned run's held-out success is below its starting checkpoint's (one-sided 5 %; absent in older runs). */
  below_start?: { checkpoint: string; start: RateRecord; difference: RateComparison; message: string } | null;
}
export type BelowStart = NonNullable<RunSummary['below_start']>;

/** summary.json's `eval`: the held-out episodes (also the `eval` event's fields). */
export interface EvalSummary {
  episodes: number;
  success_rate: number;
  death_rate: number;
  /** success_rate and death_rate with their counts and Wilson 95 % intervals. */
  success: RateRecord;
  death: RateRecord;
  death_causes: Record<string, number>;
  avg_steps: number;
  avg_distance_moved: number;
}

/** One line of `DIR/metrics.ndjson`, one per PPO update (also the `progress` event's fields). */
export interface UpdateMetrics {
  update: number;
  frames: number;
  fps: number;
  mean_return: number;
  /** Training success over episodes started in a window, all ended (TrainingSuccessRecord); null until one has. */
  success_rate: number | null;
  success: TrainingSuccessRecord;
  /** Episodes finished since the run started. */
  episodes: number;
  /** Episodes that finished during this update's rollout, and their mean return (null when none did). */
  finished_episodes?: number;
  finished_return?: number | null;
  /** Mean return so far of the episodes still running when the update's rollout ended (a partial return). */
  unfinished_return?: number;
  policy_loss: number;
  value_loss: number;
  entropy: number;
  /** KL to the --init policy when there is one, else the approximate KL between old and new policy. */
  kl: number;
  /** Approximate KL between the policy that collected the data and the updated one: mean(log π_old − log π) over its minibatches. */
  approx_kl?: number;
  /** Share of samples whose probability ratio was clipped. */
  clip_fraction?: number;
  /** 1 − Var(returns − values) / Var(returns) of the rollout before the update; null when returns were constant. */
  explained_variance?: number | null;
  learning_rate?: number;
  wall_seconds: number;
}

/** One suggestion in `DIR/suggestions.json` (the analyzer's `Suggestion`, as far as readers rely on it). */
export interface SuggestionRecord {
  id: string;
  /** The finding's cause (the analyzer's FindingKind). */
  kind: string;
  /** Share of the examined episodes it concerns, 0..1. */
  share: number;
  /** The finding and the advice, readable on its own. */
  message: string;
  /** Evidence as text, one line per episode. */
  evidence: string;
  /** The same evidence, structured: episode ids and 1-based step ranges (the first few episodes). */
  episodes: { episode: number; seed: number; steps?: [number, number]; note: string }[];
  /** Every failed episode this finding explains. */
  episode_ids: number[];
  /** 1-based inclusive line range of the reward file it concerns. */
  lines?: [number, number];
  /** Unified diff against the reward file (a/NAME, b/NAME). */
  diff?: string;
  /** Why a finding that maps to code has no diff. */
  patchUnavailable?: string;
}

/** `DIR/suggestions.json`, as `rewardsmith analyze` writes it. */
export interface SuggestionsRecord {
  version?: 1;
  runDir: string;
  task: string | null;
  rewardFile: string | null;
  episodes: number;
  failed: number;
  successRate: number;
  deathRate: number;
  deathCauses: Record<string, number>;
  /** The most frequent death cause among failed episodes, null when none died. */
  mainDeathCause: string | null;
  /** Failed episodes examined, and how many of them at least one finding explains. */
  failed_episodes: number;
  explained_episodes: number;
  unexplained_episode_ids: number[];
  /** Failed episodes per finding kind (an episode may have several causes). */
  causes: Record<string, number>;
  /** Why the reward was not re-run on the recorded observations, when it was not. */
  rerunError?: string;
  /** Why the run's task could not be resolved (the findings that need its target names are missing). */
  taskError?: string;
  suggestions: SuggestionRecord[];
}

/** Where each record lives inside a run folder. */
export const RUN_FILES = {
  summary: 'summary.json',
  metrics: 'metrics.ndjson',
  /** The same lines as CSV, for spreadsheets and plotting tools. */
  metricsCsv: 'metrics.csv',
  /** The effective training configuration (flags over the configuration file over defaults). */
  config: 'config.json',
  /** `rewardsmith report`'s page for this run. */
  report: 'report.html',
  /** TensorBoard event files (`rewardsmith report` writes them). */
  tensorboard: 'tensorboard',
  checkpoint: 'checkpoint',
  episodes: 'eval/episodes.ndjson',
  failedEpisodes: 'eval/failed_episodes.json',
  suggestions: 'suggestions.json',
  rewardCopy: 'reward.ts',
  /** The copy when the run trained a Python reward. */
  pythonRewardCopy: 'reward.py',
} as const;

/** The extensions a reward file may have: the runner compiles and runs only these (reward/compile.ts; Python in Pyodide). */
export const REWARD_FILE_EXTENSIONS: readonly string[] = ['.ts', '.js', '.mts', '.cts', '.mjs', '.cjs', '.py'];
/** How the editor and the language server recognise a reward file by its name. */
export const REWARD_FILE_PATTERN = /\.reward\.(ts|js|py)$/;

/** The content hash a run records for its reward (`reward_sha256`), as hex. */
export function sha256Hex(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The name of a run's copy of `rewardFile`: reward.py for a Python reward, else reward.ts. */
export function rewardCopyName(rewardFile: string): string {
  return /\.py$/i.test(rewardFile) ? RUN_FILES.pythonRewardCopy : RUN_FILES.rewardCopy;
}

/** The reward copy a run folder holds: reward.py when it trained a Python reward, else reward.ts (which may not exist). */
export function runRewardCopy(runDir: string): string {
  const python = path.join(runDir, RUN_FILES.pythonRewardCopy);
  return existsSync(python) ? python : path.join(runDir, RUN_FILES.rewardCopy);
}

/** A run's reward copy as read once: its path (for messages and the sandbox's name), its text and its bytes' sha256. */
export interface RewardCopy {
  file: string;
  text: string;
  sha256: string;
}

/**
 * The run's reward copy (`runRewardCopy`), its text and its bytes' sha256, read once by `readRecordBytes` within
 * the run folder: what is hashed, compared and compiled is this text, never the file read again by its path. Undefined when the
 * run has no copy (nothing at its path); a copy that links out of the run folder is a RunRecordError.
 */
export function readRunRewardCopy(runDir: string): RewardCopy | undefined {
  const file = runRewardCopy(runDir);
  if (!lstatSync(file, { throwIfNoEntry: false })) return undefined;
  return rewardCopyOf(file, readRecordBytes(file, runDir));
}

/**
 * A text file of a folder that may be someone else's (a sweep's plot, a loop's table), read by `readRecordBytes`
 * within its folder and at most `maxBytes`; undefined when there is none. A link out of the folder, a folder, a
 * FIFO or a larger file is a RunRecordError naming it.
 */
export function readRecordText(file: string, maxBytes?: number): string | undefined {
  if (!lstatSync(file, { throwIfNoEntry: false })) return undefined;
  return readRecordBytes(file, path.dirname(file), maxBytes).toString('utf8');
}

/** A reward file's bytes as read once: the text compiled, its hash and where it came from. */
export function rewardCopyOf(file: string, bytes: Buffer): RewardCopy {
  return { file, text: bytes.toString('utf8'), sha256: sha256Hex(bytes) };
}

/** Columns of metrics.csv, in the order of UpdateMetrics. */
export const METRICS_COLUMNS: readonly (keyof UpdateMetrics)[] = [
  'update',
  'frames',
  'fps',
  'mean_return',
  'success_rate',
  'episodes',
  'policy_loss',
  'value_loss',
  'entropy',
  'kl',
  'wall_seconds',
  'finished_episodes',
  'finished_return',
  'unfinished_return',
  'approx_kl',
  'clip_fraction',
  'explained_variance',
  'learning_rate',
];

/** metrics.ndjson lines as CSV text (header + one row per update; fields the line lacks stay empty), with the
 * training-success count and interval as columns of their own. */
export function metricsCsv(lines: readonly Partial<UpdateMetrics>[]): string {
  const cell = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
  const header = [...METRICS_COLUMNS, 'success_n', 'success_ci95_lo', 'success_ci95_hi'];
  const row = (m: Partial<UpdateMetrics>) =>
    [...METRICS_COLUMNS.map((c) => cell(m[c])), cell(m.success?.n), cell(m.success?.ci95[0]), cell(m.success?.ci95[1])].join(',');
  return [header.join(','), ...lines.map(row)].join('\n') + '\n';
}

/** An improvement loop's experiment folder: results.json (every iteration's records) and the iteration table as printed. */
export const LOOP_FILES = { results: 'results.json', table: 'results.txt' } as const;

/** Whether `dir` holds a run's records (a summary, metrics or evaluation episodes). */
export function isRunFolder(dir: string): boolean {
  return [RUN_FILES.summary, RUN_FILES.metrics, RUN_FILES.episodes, RUN_FILES.failedEpisodes].some((f) => existsSync(path.join(dir, f)));
}

/**
 * The run folders in a folder of runs (a sweep's, a loop's, a runs/ folder): folders holding a run's records,
 * up to `maxDepth` levels below `root` (a loop nests iteration/candidate/attempt/run), in path order. A run
 * folder's own subfolders are not searched, nor hidden folders; unreadable folders are skipped.
 */
export function runFoldersUnder(root: string, maxDepth = 4): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (isRunFolder(dir)) {
      found.push(dir);
      return;
    }
    if (depth >= maxDepth) return;
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const e of entries) {
      const sub = path.join(dir, e);
      if (!e.startsWith('.') && statSync(sub, { throwIfNoEntry: false })?.isDirectory()) walk(sub, depth + 1);
    }
  };
  walk(root, 0);
  return found;
}

/** A sweep folder's files (`rewardsmith sweep --out DIR`). */
export const SWEEP_FILES = { results: 'results.json', table: 'results.md', plot: 'results.svg', state: 'sweep.json' } as const;

export type SweepRunState = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** One (reward, seed) training of a sweep, in `DIR/results.json`. */
export interface SweepRunResult {
  reward: string;
  seed: number;
  /** Slurm job id, or the local job's process id. */
  job_id: string | null;
  /** Run folder, relative to the sweep folder. */
  run_dir: string;
  state: SweepRunState;
  /** Held-out success over the run's evaluation episodes (Wilson 95 % interval); null until completed. */
  success: RateRecord | null;
  deaths: RateRecord | null;
  /** From the job's start to train's exit, seconds (time queued not included). */
  wall_seconds: number | null;
  message: string | null;
}

/** One reward of a sweep, in `DIR/results.json`. */
export interface SweepRewardResult {
  reward: string;
  /** The reward file as given to the sweep. */
  reward_file: string;
  /** Completed runs (seeds) and their evaluation episodes behind the estimate. */
  seeds: number;
  episodes: number;
  /** Mean over seeds of held-out success; null without a completed run. */
  mean_success: number | null;
  /**
   * One seed: the Wilson interval of its episodes; several: percentile bootstrap over seeds, then episodes within
   * each seed, never narrower than the pooled episodes' Wilson interval (stats.ts `rateOverSeeds`).
   */
  ci95: [number, number] | null;
  mean_deaths: number | null;
  /**
   * In order of mean success: its position when a reward above it is shown better than it (stats.ts
   * `compareOverSeeds`, one-sided 5 %), else the rank of the reward just above; null without a completed run.
   */
  rank: number | null;
  /** This reward's success minus the leader's (the best mean), with the decision rule's interval; null for the leader itself. */
  versus_leader?: RateComparison | null;
}

/** `DIR/results.json` of a sweep. */
export interface SweepResults {
  version: 1;
  task: string;
  steps: number;
  seeds: number[];
  engine: 'local' | 'slurm';
  /** Wall time of the sweep command that wrote this file (a resumed sweep counts only its own part). */
  wall_seconds: number;
  runs: SweepRunResult[];
  rewards: SweepRewardResult[];
}

// ----- checked readers -----------------------------------------------------------------------------------

// The byte-level checked read (links, size) is files.ts's `readRecordBytes`; these parse what it returns.
export { MAX_RECORD_BYTES, readRecordBytes, RunRecordError } from './files';

/** A folder's JSON record, parsed (`readRecordBytes` checks where it points and its size); not JSON is a RunRecordError. */
export function readRecordJson(file: string, folder = path.dirname(file)): unknown {
  const text = readRecordBytes(file, folder).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new RunRecordError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/** A folder's JSON record that must be an object (`what` it should be, for the message), read by `readRecordJson`. */
export function readRecordObject(file: string, what: string): Record<string, unknown> {
  const parsed = readRecordJson(file);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new RunRecordError(`${file}: not ${what} (a JSON object), got ${typeName(parsed)}`);
  return parsed as Record<string, unknown>;
}

/**
 * `DIR/summary.json`, checked; undefined when the run has not written one (yet). A training run's summary has
 * `train` and `eval`; a rollout's (`rewardsmith rollout`) has only the task and its own counts, so those two
 * are checked where present; `requireTrainingSummary` insists on them.
 */
export function readSummary(runDir: string): RunSummary | undefined {
  const file = path.join(runDir, RUN_FILES.summary);
  if (!existsSync(file)) return undefined;
  const s = readRecordJson(file) as Partial<RunSummary> | null;
  const missing: string[] = [];
  if (!s || typeof s !== 'object' || Array.isArray(s)) throw new RunRecordError(`${file}: not a run summary`);
  if (typeof s.task !== 'string') missing.push('task');
  if (s.task_file !== undefined && s.task_file !== null && typeof s.task_file !== 'string') missing.push('task_file');
  if (s.train !== undefined && (typeof s.train !== 'object' || typeof s.train?.frames !== 'number')) missing.push('train.frames');
  if (s.eval !== undefined && (typeof s.eval !== 'object' || typeof s.eval?.episodes !== 'number')) missing.push('eval.episodes');
  if (missing.length > 0) throw new RunRecordError(`${file}: run summary lacks or mistypes ${missing.join(', ')}`);
  for (const k of ['reward_file', 'reward_sha256', 'backend'] as const)
    if (s[k] !== undefined && s[k] !== null && typeof s[k] !== 'string') throw new RunRecordError(`${file}: ${k} must be a string, got ${typeName(s[k])}`);
  checkNumbers(file, s, SUMMARY_NUMBERS);
  return s as RunSummary;
}

/**
 * The held-out success of a checkpoint given as a run folder or its checkpoint subfolder, when its run was
 * evaluated (a foundation from `pretrain`, a trained run); null otherwise, or when its summary cannot be read.
 */
export function checkpointHeldOut(dir: string): RateRecord | null {
  for (const runDir of [dir, path.dirname(dir)]) {
    try {
      const s = readSummary(runDir);
      if (s?.eval && s.eval.episodes > 0) return s.eval.success ?? rateRecord(Math.round(s.eval.success_rate * s.eval.episodes), s.eval.episodes);
    } catch {
      // an unreadable summary only means no figure to show
    }
  }
  return null;
}

/** The summary's numeric fields (each may be absent in older or rollout summaries; `null` where a rate may have no estimate). */
const SUMMARY_NUMBERS: readonly { path: string; nullable?: true }[] = [
  { path: 'seed' },
  { path: 'env_steps' },
  { path: 'wall_seconds' },
  ...['updates', 'frames', 'mean_return', 'entropy', 'fps', 'episode_steps'].map((k) => ({ path: `train.${k}` })),
  { path: 'train.success_rate', nullable: true },
  ...['episodes', 'success_rate', 'death_rate', 'avg_steps', 'avg_distance_moved'].map((k) => ({ path: `eval.${k}` })),
];

const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'a list' : `a ${typeof v}`);

/** Each `path` (dotted) of `record` that is present must be a finite number (or null where allowed). */
function checkNumbers(file: string, record: object, fields: readonly { path: string; nullable?: true }[]): void {
  for (const { path: p, nullable } of fields) {
    const v = p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), record);
    if (v === undefined || (nullable && v === null) || (typeof v === 'number' && Number.isFinite(v))) continue;
    throw new RunRecordError(`${file}: ${p} must be a number${nullable ? ' or null' : ''}, got ${typeName(v)}`);
  }
}

/** What names a run's task for `resolveTask`: its task file when it had one, else its built-in id. */
export function runTaskRef(summary: Pick<RunSummary, 'task' | 'task_file'>): string {
  return summary.task_file ?? summary.task;
}

/** `DIR/summary.json` of a finished training run; a RunRecordError when there is none or it is a rollout's. */
export function requireTrainingSummary(runDir: string): RunSummary {
  const file = path.join(runDir, RUN_FILES.summary);
  const summary = readSummary(runDir);
  if (!summary) throw new RunRecordError(`${file}: no run summary (has the run finished?)`);
  if (!summary.train || !summary.eval) throw new RunRecordError(`${file}: not a training run's summary (no train and eval results)`);
  return summary;
}

/** `DIR/metrics.ndjson`, each line checked; a torn last line (a run killed mid-write) is skipped; [] before the first update. */
export function readMetrics(runDir: string): UpdateMetrics[] {
  const file = path.join(runDir, RUN_FILES.metrics);
  if (!existsSync(file)) return [];
  const lines = readRecordBytes(file).toString('utf8').split('\n');
  const last = lines.reduce((k, line, i) => (line.trim() ? i : k), -1);
  const out: UpdateMetrics[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let m: UpdateMetrics;
    try {
      m = JSON.parse(line) as UpdateMetrics;
    } catch (err) {
      if (i === last) return;
      throw new RunRecordError(`${file}:${i + 1}: not valid JSON (${(err as Error).message})`);
    }
    if (typeof m.frames !== 'number' || typeof m.mean_return !== 'number' || (typeof m.success_rate !== 'number' && m.success_rate !== null)) {
      throw new RunRecordError(`${file}:${i + 1}: a metrics line needs numeric frames and mean_return, and success_rate (a number or null)`);
    }
    out.push(m);
  });
  return out;
}

/** A run's evaluation episodes (eval/episodes.ndjson, else eval/failed_episodes.json), each checked. */
export function readEpisodes(runDir: string): EpisodeRecord[] {
  const file = path.join(runDir, RUN_FILES.episodes);
  if (!existsSync(file)) {
    const failedFile = path.join(runDir, RUN_FILES.failedEpisodes);
    if (existsSync(failedFile)) {
      const parsed = readRecordJson(failedFile);
      if (!Array.isArray(parsed)) throw new RunRecordError(`${failedFile}: expected a JSON array of episodes`);
      return parsed.map((e, i) => checkEpisode(e, `${failedFile}: episode ${i}`));
    }
    throw new RunRecordError(`${file}: no evaluation episodes (is ${runDir} a finished run folder?)`);
  }
  const out: EpisodeRecord[] = [];
  readRecordBytes(file)
    .toString('utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new RunRecordError(`${file}:${i + 1}: not valid JSON (${(err as Error).message})`);
      }
      out.push(checkEpisode(parsed, `${file}:${i + 1}`));
    });
  if (out.length === 0) throw new RunRecordError(`${file}: no episodes in it`);
  return out;
}

/** The fields readers rely on, checked so that a malformed record fails with its location, not deep inside a detector. */
function checkEpisode(e: unknown, where: string): EpisodeRecord {
  const ep = e as Partial<EpisodeRecord> | null;
  const missing: string[] = [];
  if (!ep || typeof ep !== 'object') throw new RunRecordError(`${where}: not an episode record`);
  for (const k of ['episode', 'seed', 'steps', 'return', 'distanceMoved'] as const) if (typeof ep[k] !== 'number') missing.push(k);
  for (const k of ['success', 'died', 'truncated'] as const) if (typeof ep[k] !== 'boolean') missing.push(k);
  if (!Array.isArray(ep.lastSteps)) missing.push('lastSteps');
  if (!Array.isArray(ep.path)) missing.push('path');
  if (!ep.final || typeof ep.final !== 'object') missing.push('final');
  if (missing.length > 0) throw new RunRecordError(`${where}: episode record lacks or mistypes ${missing.join(', ')}`);
  checkStepCodes(ep as EpisodeRecord, where);
  ep.lastSteps!.forEach((s, i) => {
    if (typeof s?.step !== 'number' || typeof s.reward !== 'number' || !Array.isArray(s.position) || s.position.length < 5 || typeof s.nearest !== 'object') {
      throw new RunRecordError(`${where}: lastSteps[${i}] lacks step, reward, position [x, y, z, yaw, pitch] or nearest`);
    }
    // Absent in records written before they were kept; when present, what the analyzer's replay hands the reward.
    const counts = (d: unknown) => !!d && typeof d === 'object' && !Array.isArray(d) && Object.values(d).every((v) => typeof v === 'number');
    if ((s.damage_dealt !== undefined && typeof s.damage_dealt !== 'number') || (s.kill_entity !== undefined && !counts(s.kill_entity))) {
      throw new RunRecordError(`${where}: lastSteps[${i}] has a damage_dealt that is not a number or a kill_entity that is not counts by mob name`);
    }
  });
  return ep as EpisodeRecord;
}

/** `actions` and `step_rewards`, when present: one valid code per step, indexes in range. */
function checkStepCodes(ep: EpisodeRecord, where: string): void {
  const codes = (text: unknown, field: string, count: number) => {
    if (typeof text !== 'string' || text.length !== ep.steps)
      throw new RunRecordError(`${where}: ${field} must be a string of one character per step (${ep.steps} steps)`);
    for (let i = 0; i < text.length; i++) {
      const k = STEP_CODE_INDEX.get(text[i]!);
      if (k === undefined || k >= count) throw new RunRecordError(`${where}: ${field} has an invalid code ${JSON.stringify(text[i])} at step ${i + 1}`);
    }
  };
  // Action indexes are checked against the game's actions where they are replayed (records stays free of the schema).
  if (ep.actions !== undefined) codes(ep.actions, 'actions', STEP_CODES.length);
  const r = ep.step_rewards as unknown;
  if (r === undefined) return;
  if (Array.isArray(r)) {
    if (r.length !== ep.steps || !r.every((v) => typeof v === 'number'))
      throw new RunRecordError(`${where}: step_rewards must hold one number per step (${ep.steps} steps)`);
    return;
  }
  const t = r as { values?: unknown; steps?: unknown } | null;
  if (!t || typeof t !== 'object' || !Array.isArray(t.values) || !t.values.every((v) => typeof v === 'number'))
    throw new RunRecordError(`${where}: step_rewards must be { values: number[], steps: string } or a number array`);
  codes(t.steps, 'step_rewards.steps', t.values.length);
}

/**
 * `DIR/suggestions.json`, checked (the fields editors and `apply` rely on, each error naming the file and the
 * field); undefined when the run has not been analysed.
 */
export function readSuggestions(runDir: string): SuggestionsRecord | undefined {
  const file = path.join(runDir, RUN_FILES.suggestions);
  if (!existsSync(file)) return undefined;
  const parsed = readRecordJson(file) as Partial<SuggestionsRecord> | null;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !Array.isArray(parsed.suggestions))
    throw new RunRecordError(`${file}: expected the analyzer's result with a suggestions array`);
  for (const k of ['failed_episodes', 'explained_episodes'] as const)
    if (parsed[k] !== undefined && typeof parsed[k] !== 'number') throw new RunRecordError(`${file}: ${k} must be a number`);
  if (parsed.causes !== undefined && (typeof parsed.causes !== 'object' || parsed.causes === null))
    throw new RunRecordError(`${file}: causes must be an object of counts`);
  parsed.suggestions.forEach((s: Partial<SuggestionRecord> | null, i) => {
    const where = `${file}: suggestions[${i}]`;
    if (!s || typeof s !== 'object') throw new RunRecordError(`${where} is not a suggestion`);
    if (typeof s.id !== 'string') throw new RunRecordError(`${where} has no id`);
    if (typeof s.message !== 'string') throw new RunRecordError(`${where} (${s.id}) has no message`);
    for (const k of ['evidence', 'diff', 'patchUnavailable'] as const)
      if (s[k] !== undefined && typeof s[k] !== 'string') throw new RunRecordError(`${where} (${s.id}): ${k} must be a string`);
    if (s.lines !== undefined && !(Array.isArray(s.lines) && s.lines.length === 2 && s.lines.every((n) => Number.isInteger(n) && n >= 1)))
      throw new RunRecordError(`${where} (${s.id}): lines must be [first, last], 1-based line numbers`);
    checkSuggestionNumbers(s, `${where} (${s.id})`);
  });
  return parsed as SuggestionsRecord;
}

/** The numbers of one suggestion that readers show or count: its share and its evidence's episode, seed and step numbers. */
function checkSuggestionNumbers(s: Partial<SuggestionRecord>, where: string): void {
  const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  if (s.share !== undefined && !isNumber(s.share)) throw new RunRecordError(`${where}: share must be a number, got ${typeName(s.share)}`);
  if (s.episode_ids !== undefined && !(Array.isArray(s.episode_ids) && s.episode_ids.every(isNumber)))
    throw new RunRecordError(`${where}: episode_ids must be a list of episode numbers`);
  if (s.episodes === undefined) return;
  if (!Array.isArray(s.episodes)) throw new RunRecordError(`${where}: episodes must be a list`);
  s.episodes.forEach((e, j) => {
    if (!e || typeof e !== 'object') throw new RunRecordError(`${where}: episodes[${j}] is not an episode's evidence`);
    for (const k of ['episode', 'seed'] as const)
      if (e[k] !== undefined && !isNumber(e[k])) throw new RunRecordError(`${where}: episodes[${j}].${k} must be a number, got ${typeName(e[k])}`);
    if (e.steps !== undefined && !(Array.isArray(e.steps) && e.steps.length === 2 && e.steps.every(isNumber)))
      throw new RunRecordError(`${where}: episodes[${j}].steps must be [first, last] step numbers`);
    if (e.note !== undefined && typeof e.note !== 'string') throw new RunRecordError(`${where}: episodes[${j}].note must be a string`);
  });
}

/** A sweep's `DIR/results.json`, checked; undefined before the sweep first wrote it. */
export function readSweepResults(sweepDir: string): SweepResults | undefined {
  const file = path.join(sweepDir, SWEEP_FILES.results);
  if (!existsSync(file)) return undefined;
  const r = readRecordJson(file) as Partial<SweepResults> | null;
  if (!r || typeof r !== 'object' || Array.isArray(r) || !Array.isArray(r.runs) || !Array.isArray(r.rewards))
    throw new RunRecordError(`${file}: expected a sweep's results with runs and rewards arrays`);
  r.rewards.forEach((w: Partial<SweepRewardResult> | null, i) => {
    if (typeof w?.reward !== 'string') throw new RunRecordError(`${file}: rewards[${i}] has no reward name`);
    if (w.mean_success !== null && typeof w.mean_success !== 'number')
      throw new RunRecordError(`${file}: rewards[${i}] (${w.reward}): mean_success must be a number or null`);
  });
  r.runs.forEach((run: Partial<SweepRunResult> | null, i) => {
    if (typeof run?.reward !== 'string' || typeof run.seed !== 'number') throw new RunRecordError(`${file}: runs[${i}] lacks its reward or seed`);
  });
  return r as SweepResults;
}
