// `rewardsmith table`: the paper's Table 1 protocol on this product's simulator. For each task and seed it
// behaviour-clones a foundation policy (`pretrain`), fine-tunes it with PPO + the paper's KL term on the
// bundled sparse reward and on the bundled dense reward (`train --init`), and evaluates all three on held-out
// worlds. Results go to table.md / table.csv / table.svg / table.json with the mean over seeds and a
// bootstrap 95 % interval over seeds and episodes, beside the paper's published figures. Every cell is a job on
// the sweep's engine (local processes or Slurm jobs) in its own run folder, so an interrupted table resumes
// where it stopped, as a sweep does: finished cells are kept, jobs still running are waited for, a training run
// continues from its checkpoint.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeFolderBelow, writeAtomic } from '../files';
import { resolveTask } from '../tasks';
import { readRecordBytes, readRecordObject, readSummary, RUN_FILES, RunRecordError, type RunSummary, sha256Hex } from '../records';
import {
  compareOverSeeds,
  compareRates,
  DECISION_ALPHA,
  formatDifference,
  levelText,
  percent,
  rateOverSeeds,
  wilson,
  type BootstrapEstimate,
  type RateComparison,
  type RateEstimate,
} from '../stats';
import { CommandError, parseCommandArgs, runCommand, UsageError, type CommandSpec, type OptionSpec } from '../args';
import { BACKEND_CHOICES, type BackendChoice } from '../ppo/backend';
import { DEFAULT_ENVS, DEFAULT_STEPS } from '../runs/config';
import { DEFAULT_EVAL_EPISODES } from '../runs/evaluate';
import { DEFAULT_DEMOS } from '../pretrain/pretrain';
import { pretrainJob, trainJob, type Engine, type Job, type JobResult } from '../sweep/engine';
import { cancellableOnSignal, ENGINE_OPTIONS, engineFromOptions } from '../sweep/engine-options';
import { renderPlot } from './plot';

export const TABLE_TASKS = ['approach-tree', 'approach-cow', 'explore-diamond'] as const;
export const DEFAULT_SEEDS = [7, 8, 9];
export const METHODS = ['foundation', 'sparse', 'dense'] as const;
export type Method = (typeof METHODS)[number];
export const METHOD_LABELS: Record<Method, string> = {
  foundation: 'foundation',
  sparse: 'foundation + sparse',
  dense: 'foundation + dense',
};
/** Evaluation batch: every episode at once up to this many envs (explore-diamond's 60,000-step episodes
 * then run in one wave instead of four). */
const EVAL_ENVS = 100;

/**
 * Success rates (%) published in Auto MC-Reward (CVPR 2024), Table 1: "sparse reward RL" and the full method
 * (designed dense reward), both fine-tuned from the paper's imitation-learned foundation policy in MineDojo.
 */
export const PAPER_FIGURES: Readonly<Record<string, { sparse: number; dense: number }>> = {
  'explore-diamond': { sparse: 0.5, dense: 45.2 },
  'approach-tree': { sparse: 4.3, dense: 73.4 },
  'approach-cow': { sparse: 12.6, dense: 56.3 },
};

/** `runner/rewards/` of this checkout or installed package, found from runner/src/table (tsx) or dist/ (bundle). */
function findRewardsDir(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'runner', 'rewards');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.resolve(__dirname, '../../../runner/rewards');
}
/** The bundled reward of a task and kind (`runner/rewards/<task>.<kind>.reward.ts`). */
export function bundledReward(task: string, kind: 'sparse' | 'dense'): string {
  return path.join(findRewardsDir(), `${task}.${kind}.reward.ts`);
}

export interface TableOptions {
  out: string;
  tasks?: string[];
  seeds?: number[];
  /** PPO frames per fine-tuning run (the paper's 256,000). */
  steps?: number;
  demos?: number;
  evalEpisodes?: number;
  envs?: number;
  backend?: BackendChoice;
  workers?: number;
  /** Where the cells run (`pretrain` and `train` jobs). */
  engine: Engine;
  /** Aborting cancels the cells' jobs; the same table run again resumes them. */
  signal?: AbortSignal;
  /** Progress lines (one per cell). */
  log?: (line: string) => void;
}

/** `DIR/table-config.json`: what the cells were run with; a resumed table must match it. */
interface TableConfig {
  steps: number;
  demos: number;
  evalEpisodes: number;
  envs: number;
}

export interface CellResult {
  task: string;
  seed: number;
  method: Method;
  successes: number;
  episodes: number;
  rate: RateEstimate;
  /** Seconds of this cell's run (training + evaluation, all segments if resumed). */
  wallSeconds: number;
  reused: boolean;
  /** A fine-tuning's training-episode limit (summary.json train.episode_steps; absent: a foundation or an older run). */
  trainEpisodeSteps?: number;
}

export interface TableRow {
  task: string;
  method: Method;
  estimate: BootstrapEstimate;
  paper: number | null;
  cells: CellResult[];
}

/** The table's comparisons: each fine-tuning against the other and against the foundation it started from. */
export const COMPARISONS: readonly [Method, Method][] = [
  ['dense', 'sparse'],
  ['dense', 'foundation'],
  ['sparse', 'foundation'],
];

/** a − b of one task, over all seeds or on one seed, by the decision rule (one-sided 5 %). */
export interface TableComparison {
  task: string;
  seed: number | 'all';
  a: Method;
  b: Method;
  comparison: RateComparison;
}

/** Every comparison of every task: over all seeds (bootstrap over seeds × episodes) when there are several, and per seed (Newcombe). */
export function tableComparisons(cells: readonly CellResult[]): TableComparison[] {
  const out: TableComparison[] = [];
  const counts = (cs: CellResult[]) => cs.map((c) => ({ count: c.successes, n: c.episodes }));
  for (const task of [...new Set(cells.map((c) => c.task))]) {
    const mine = cells.filter((c) => c.task === task);
    const seeds = [...new Set(mine.map((c) => c.seed))];
    for (const [a, b] of COMPARISONS) {
      const of = (m: Method, seed?: number) => mine.filter((c) => c.method === m && (seed === undefined || c.seed === seed));
      if (of(a).length === 0 || of(b).length === 0) continue;
      if (seeds.length > 1) out.push({ task, seed: 'all', a, b, comparison: compareOverSeeds(counts(of(a)), counts(of(b))) });
      for (const seed of seeds) {
        const [x, y] = [of(a, seed)[0], of(b, seed)[0]];
        if (x && y) out.push({ task, seed, a, b, comparison: compareRates(counts([x])[0]!, counts([y])[0]!) });
      }
    }
  }
  return out;
}

/** "+20.0 pts [+13.3, +27.7]: better", "−11.0 pts [−19.6, −2.3]: below the foundation". */
function comparisonCell(c: TableComparison | undefined): string {
  if (!c) return '—';
  const difference = formatDifference(c.comparison).replace(/ \(.*\)$/, '');
  const verdict = c.comparison.verdict;
  if (verdict === 'worse' && c.b === 'foundation') return `${difference}: below the foundation`;
  return `${difference}: ${verdict === 'better' ? 'better' : verdict === 'worse' ? 'worse' : 'no difference shown'}`;
}

export interface TableResult {
  rows: TableRow[];
  cells: CellResult[];
  comparisons: TableComparison[];
  config: TableConfig & { tasks: string[]; seeds: number[] };
  machine: string;
  wallSeconds: number;
  /** Sum of the cells' own run times (including runs reused from an earlier, interrupted invocation). */
  cellSeconds: number;
  files: { markdown: string; csv: string; svg: string; json: string };
}

const cellDir = (out: string, task: string, seed: number, method: Method) => path.join(out, task, `seed-${seed}`, method);

/** A cell's summary through the one checked reader, within the cell's folder; its problem (a link out, damage) as text. */
function readCellSummary(dir: string): { summary: RunSummary | null; problem: string | null } {
  try {
    return { summary: readSummary(dir) ?? null, problem: null };
  } catch (err) {
    if (!(err instanceof RunRecordError)) throw err;
    return { summary: null, problem: err.message };
  }
}

function cellResult(task: string, seed: number, method: Method, s: RunSummary, reused: boolean): CellResult {
  const successes = s.eval.success?.count ?? Math.round(s.eval.success_rate * s.eval.episodes);
  const cell: CellResult = {
    task,
    seed,
    method,
    successes,
    episodes: s.eval.episodes,
    rate: wilson(successes, s.eval.episodes),
    wallSeconds: s.wall_seconds,
    reused,
  };
  if (method !== 'foundation' && s.train?.episode_steps !== undefined) cell.trainEpisodeSteps = s.train.episode_steps;
  return cell;
}

export function machineDescription(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

/** The bundled rewards of every task, and DIR/table-config.json: a resumed table must use the same budgets. */
function openTable(out: string, tasks: string[], config: TableConfig): void {
  for (const t of tasks) {
    resolveTask(t);
    for (const kind of ['sparse', 'dense'] as const) {
      if (!existsSync(bundledReward(t, kind)))
        throw new CommandError(`no bundled ${kind} reward for ${t} (expected ${path.relative(process.cwd(), bundledReward(t, kind))})`);
    }
  }
  mkdirSync(out, { recursive: true });
  const configFile = path.join(out, 'table-config.json');
  if (existsSync(configFile)) {
    const before = readRecordObject(configFile, "a table's settings") as unknown as TableConfig;
    const changed = (Object.keys(config) as (keyof TableConfig)[]).filter((k) => before[k] !== config[k]);
    if (changed.length > 0) {
      throw new CommandError(
        `${out} holds a table run with ${changed.map((k) => `${k} ${before[k]}`).join(', ')}; ` +
          `resuming it with ${changed.map((k) => `${k} ${config[k]}`).join(', ')} would mix budgets — use the same options or another --out`,
      );
    }
  } else writeAtomic(out, configFile, JSON.stringify(config, null, 2) + '\n');
}

/** A table that could not be completed: the cells that failed, each with its reason. */
export class TableIncomplete extends CommandError {}

/**
 * One task and seed: the foundation job, then its two fine-tunings at once (the engine bounds how many jobs
 * run). A finished cell is kept, a running one waited for (the engine's resume).
 */
async function tableSeed(o: TableOptions, out: string, config: TableConfig, task: string, seed: number, failed: string[]): Promise<CellResult[]> {
  const log = o.log ?? (() => {});
  const where = (jobId: string | null) => (jobId ? ` (${o.engine.kind === 'slurm' ? 'job' : 'pid'} ${jobId})` : '');
  const run = async (job: Job, what: string): Promise<{ result: JobResult; summary: RunSummary | null }> => {
    // No cell is written through a link placed in the table's folder (a task's, a seed's, a method's).
    makeFolderBelow(out, job.runDir);
    const result = await o.engine.run(job, {
      signal: o.signal,
      onState: (s, jobId) => s === 'queued' && log(`${task} seed ${seed}: ${what}${where(jobId)}`),
      onWaiting: (why) => log(`${task} seed ${seed}: ${what} queued: ${why}`),
    });
    const { summary, problem } = result.state === 'completed' ? readCellSummary(job.runDir) : { summary: null, problem: null };
    if (result.state === 'failed' || (result.state === 'completed' && !summary))
      failed.push(`${job.name}: ${problem ?? result.message ?? 'no summary.json'} (log: ${path.join(job.runDir, 'job.log')})`);
    return { result, summary };
  };
  const foundationDir = cellDir(out, task, seed, 'foundation');
  const common = { task, seed, evalEpisodes: config.evalEpisodes, backend: o.backend };
  const f = await run(
    pretrainJob({ ...common, name: `${task}/seed-${seed}/foundation`, runDir: foundationDir, demos: config.demos }),
    `foundation (${config.demos} demonstrations, behaviour cloning, ${config.evalEpisodes} held-out episodes)`,
  );
  if (!f.summary) return [];
  const foundation = cellResult(task, seed, 'foundation', f.summary, f.result.kept);
  log(`${task} seed ${seed}: foundation ${fmt(foundation)}`);
  const fineTuned = await Promise.all(
    (['sparse', 'dense'] as const).map(async (kind) => {
      const dir = cellDir(out, task, seed, kind);
      const resume = existsSync(path.join(dir, RUN_FILES.checkpoint, 'state.json'));
      const rewardFile = bundledReward(task, kind);
      const job = trainJob({
        ...common,
        name: `${task}/seed-${seed}/${kind}`,
        runDir: dir,
        rewardFile,
        // The job reads the file again in another process, later: it trains the text read here or nothing.
        rewardSha256: sha256Hex(readFileSync(rewardFile)),
        steps: config.steps,
        envs: config.envs,
        init: foundationDir,
        evalEnvs: EVAL_ENVS,
        workers: o.workers,
      });
      const { result, summary } = await run(job, `foundation + ${kind} (${config.steps.toLocaleString('en-US')} frames${resume ? ', resuming' : ''})`);
      if (!summary) return null;
      const cell = cellResult(task, seed, kind, summary, result.kept);
      const below = compareRates({ count: cell.successes, n: cell.episodes }, { count: foundation.successes, n: foundation.episodes });
      log(
        `${task} seed ${seed}: foundation + ${kind} ${fmt(cell)}${below.verdict === 'worse' ? `; below its foundation's ${percent(foundation.rate.rate)} % (${formatDifference(below)})` : ''}`,
      );
      return cell;
    }),
  );
  return [foundation, ...fineTuned.filter((c): c is CellResult => c !== null)];
}

/** Runs (or resumes) every cell of the table on the engine and writes its files. */
export async function runTable(options: TableOptions): Promise<TableResult> {
  const start = Date.now();
  const out = path.resolve(options.out);
  const tasks = options.tasks ?? [...TABLE_TASKS];
  const seeds = options.seeds ?? DEFAULT_SEEDS;
  const config: TableConfig = {
    steps: options.steps ?? DEFAULT_STEPS,
    demos: options.demos ?? DEFAULT_DEMOS,
    evalEpisodes: options.evalEpisodes ?? DEFAULT_EVAL_EPISODES,
    envs: options.envs ?? DEFAULT_ENVS,
  };
  openTable(out, tasks, config);
  const failed: string[] = [];
  const perSeed = await Promise.all(tasks.flatMap((task) => seeds.map((seed) => tableSeed(options, out, config, task, seed, failed))));
  if (options.signal?.aborted) throw new TableIncomplete('interrupted: run the same command again to resume', 130);
  if (failed.length > 0)
    throw new TableIncomplete(`${failed.length} cell(s) did not complete (${failed.join('; ')}); run the same command again to retry them`);
  // In the table's order (task, seed, method), whatever order the jobs ended in.
  const cells = perSeed.flat();

  const rows: TableRow[] = tasks.flatMap((task) =>
    METHODS.map((method) => {
      const mine = cells.filter((c) => c.task === task && c.method === method);
      const paper = method === 'foundation' ? null : (PAPER_FIGURES[task]?.[method] ?? null);
      return { task, method, estimate: rateOverSeeds(mine.map((c) => ({ count: c.successes, n: c.episodes }))), paper, cells: mine };
    }),
  );
  const wallSeconds = (Date.now() - start) / 1000;
  const files = {
    markdown: path.join(out, 'table.md'),
    csv: path.join(out, 'table.csv'),
    svg: path.join(out, 'table.svg'),
    json: path.join(out, 'table.json'),
  };
  const result: TableResult = {
    rows,
    cells,
    comparisons: tableComparisons(cells),
    config: { ...config, tasks, seeds },
    machine: machineDescription(),
    wallSeconds,
    cellSeconds: cells.reduce((s, c) => s + c.wallSeconds, 0),
    files,
  };
  writeAtomic(out, files.markdown, tableMarkdown(result) + '\n');
  writeAtomic(out, files.csv, tableCsv(result));
  writeAtomic(
    out,
    files.svg,
    renderPlot(
      rows,
      `Held-out success, ${seeds.length} seed${seeds.length === 1 ? '' : 's'} × ${config.evalEpisodes} episodes, ${config.steps.toLocaleString('en-US')} frames`,
    ),
  );
  writeAtomic(out, files.json, JSON.stringify({ ...result, rows: rows.map(({ cells: _c, ...r }) => r) }, null, 2) + '\n');
  return result;
}

const fmt = (c: CellResult) => `${percent(c.rate.rate)} % of ${c.episodes} held-out episodes (95 % CI ${percent(c.rate.ci95[0])}–${percent(c.rate.ci95[1])} %)`;
/** "37.0 [28.1, 46.0]" (mean and 95 % interval, in %). */
export function formatEstimate(e: BootstrapEstimate): string {
  if (e.n === 0) return '—';
  return `${percent(e.mean)} [${percent(e.ci95[0])}, ${percent(e.ci95[1])}]`;
}

/** "; training episodes end at 2,000 steps on explore-diamond (…)" for the tasks whose fine-tunings trained on episodes shorter than the task's. */
function shortTrainingEpisodes(cells: readonly CellResult[], tasks: readonly string[]): string {
  const cut = tasks.flatMap((t) => {
    const limit = resolveTask(t).maxSteps;
    const steps = [
      ...new Set(cells.filter((c) => c.task === t && c.trainEpisodeSteps !== undefined && c.trainEpisodeSteps < limit).map((c) => c.trainEpisodeSteps!)),
    ];
    return steps.length
      ? [`${steps.map((n) => n.toLocaleString('en-US')).join(' or ')} steps on ${t} (held-out episodes run to its ${limit.toLocaleString('en-US')})`]
      : [];
  });
  return cut.length ? `; training episodes end at ${cut.join(', at ')}` : '';
}

/** The Markdown table: one row per task, the three methods and the paper's figures as columns. */
export function tableMarkdown(r: TableResult): string {
  const tasks = [...new Set(r.rows.map((row) => row.task))];
  const get = (task: string, m: Method) => r.rows.find((row) => row.task === task && row.method === m)!;
  const lines = [
    `| task | ${METHODS.map((m) => METHOD_LABELS[m]).join(' | ')} | paper: sparse | paper: Auto MC-Reward |`,
    `|---|${METHODS.map(() => '---:').join('|')}|---:|---:|`,
    ...tasks.map(
      (t) =>
        `| ${t} | ${METHODS.map((m) => formatEstimate(get(t, m).estimate)).join(' | ')} | ${PAPER_FIGURES[t]?.sparse ?? '—'} | ${PAPER_FIGURES[t]?.dense ?? '—'} |`,
    ),
  ];
  const { steps, demos, evalEpisodes, seeds } = r.config;
  lines.push(
    '',
    `Held-out success % — mean over ${seeds.length === 1 ? 'seed' : 'seeds'} ${seeds.join(', ')} with a 95 % interval (Wilson over one seed's episodes; over several, a bootstrap over seeds and episodes, never narrower than Wilson over all of them) ` +
      `(${evalEpisodes} held-out worlds per seed and method); foundation = behaviour cloning from ${demos} scripted demonstrations; ` +
      `fine-tuning: PPO for ${steps.toLocaleString('en-US')} frames from the foundation with the KL term to it (weight 0.125), 2 value pre-training updates ` +
      `and return normalisation${shortTrainingEpisodes(r.cells, tasks)}. Paper: Auto MC-Reward (CVPR 2024), Table 1, MineDojo.`,
    `Machine: ${r.machine}; wall time ${formatSeconds(r.cellSeconds)} summed over the cells' runs` +
      (r.wallSeconds < r.cellSeconds / 2
        ? ` (${formatSeconds(r.wallSeconds)} for this invocation, which resumed cells measured earlier).`
        : `, ${formatSeconds(r.wallSeconds)} for this invocation.`),
  );
  const comparisons = r.comparisons ?? tableComparisons(r.cells);
  if (comparisons.length > 0) {
    const find = (task: string, seed: number | 'all', [a, b]: readonly [Method, Method]) =>
      comparisons.find((c) => c.task === task && c.seed === seed && c.a === a && c.b === b);
    lines.push(
      '',
      `Differences of held-out success, points, with their ${levelText(1 - 2 * DECISION_ALPHA)} interval: "better" (or "worse", "below the foundation") is a one-sided test at 5 % ` +
        `(Newcombe's interval on one seed; over all seeds a bootstrap over seeds × episodes, never narrower than Newcombe's over all episodes).`,
      '',
      `| task | seed | ${COMPARISONS.map(([a, b]) => `${a} − ${b}`).join(' | ')} |`,
      `|---|---|${COMPARISONS.map(() => '---').join('|')}|`,
    );
    for (const task of tasks)
      for (const seed of ['all' as const, ...seeds])
        if (COMPARISONS.some((p) => find(task, seed, p)))
          lines.push(`| ${task} | ${seed} | ${COMPARISONS.map((p) => comparisonCell(find(task, seed, p))).join(' | ')} |`);
  }
  const foundationOf = (c: CellResult) => r.cells.find((f) => f.task === c.task && f.seed === c.seed && f.method === 'foundation');
  const perSeed = r.cells.map((c) => {
    const f = c.method === 'foundation' ? undefined : foundationOf(c);
    const below = f && compareRates({ count: c.successes, n: c.episodes }, { count: f.successes, n: f.episodes }).verdict === 'worse';
    return `${c.task} ${METHOD_LABELS[c.method]} seed ${c.seed}: ${c.successes}/${c.episodes}${below ? ` (below its foundation's ${f.successes}/${f.episodes})` : ''}`;
  });
  lines.push('', `Per seed: ${perSeed.join('; ')}.`);
  return lines.join('\n');
}

export function tableCsv(r: TableResult): string {
  const rows = ['task,method,seed,successes,episodes,rate,ci95_lo,ci95_hi,wall_seconds,paper'];
  for (const row of r.rows) {
    const e = row.estimate;
    for (const c of row.cells)
      rows.push(
        [
          c.task,
          c.method,
          c.seed,
          c.successes,
          c.episodes,
          c.rate.rate.toFixed(4),
          c.rate.ci95[0].toFixed(4),
          c.rate.ci95[1].toFixed(4),
          c.wallSeconds.toFixed(1),
          '',
        ].join(','),
      );
    rows.push(
      [
        row.task,
        row.method,
        'all',
        row.cells.reduce((s, c) => s + c.successes, 0),
        e.n,
        e.mean.toFixed(4),
        e.ci95[0].toFixed(4),
        e.ci95[1].toFixed(4),
        row.cells.reduce((s, c) => s + c.wallSeconds, 0).toFixed(1),
        row.paper === null ? '' : (row.paper / 100).toFixed(4),
      ].join(','),
    );
  }
  return rows.join('\n') + '\n';
}

function formatSeconds(s: number): string {
  return s < 120 ? `${s.toFixed(0)} s` : `${(s / 60).toFixed(1)} min`;
}

const README_START = '<!-- rewardsmith table: start -->';
/** The table's plot is a few tens of kilobytes; a larger table.svg is not one it wrote. */
const MAX_PLOT_BYTES = 4 * 1024 * 1024;
const README_END = '<!-- rewardsmith table: end -->';

/** Replaces the README's results block (between the two markers) with the table and how it was made. */
export function updateReadme(file: string, r: TableResult, command: string): void {
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(README_START),
    b = text.indexOf(README_END);
  if (a < 0 || b < a) throw new CommandError(`${file} has no results block: add the lines ${README_START} and ${README_END} where the table goes`);
  // The plot is copied beside the README (docs/table.svg) so that it survives the run folder; it is named, not
  // linked: the README ships in the .vsix, and vsce refuses relative links and images without a repository URL.
  // Read by the checked reader: the table folder may be someone else's (a link out of it, a FIFO, a huge file).
  const svg = readRecordBytes(r.files.svg, path.dirname(r.files.svg), MAX_PLOT_BYTES);
  const svgCopy = path.join(path.dirname(path.resolve(file)), 'docs', 'table.svg');
  writeAtomic(path.dirname(path.resolve(file)), svgCopy, svg);
  const svgLink = path
    .relative(path.dirname(path.resolve(file)), svgCopy)
    .split(path.sep)
    .join('/');
  const block = [
    README_START,
    '',
    `Generated by \`${command}\` on ${new Date().toISOString().slice(0, 10)}.`,
    '',
    tableMarkdown(r),
    '',
    `The plot (held-out success per task and method, with the intervals): \`${svgLink}\`.`,
    '',
    README_END,
  ].join('\n');
  writeAtomic(path.dirname(file), file, text.slice(0, a) + block + text.slice(b + README_END.length));
}

// ---- command line ----

const TABLE_SPEC = {
  command: 'table',
  summary:
    "The paper's table on this simulator: per task and seed, a behaviour-cloned foundation, foundation + sparse and foundation + dense (bundled rewards, PPO with the KL term), each evaluated on held-out worlds; writes table.md, table.csv, table.svg and table.json. Resumable: run it again with the same --out.",
  options: {
    out: { type: 'string', description: 'folder for the runs and the table files', valueName: 'DIR' },
    tasks: { type: 'list', description: `tasks (default ${TABLE_TASKS.join(' ')})`, valueName: 'T...' },
    seeds: { type: 'list', description: `seeds (default ${DEFAULT_SEEDS.join(' ')})`, valueName: 'S...' },
    steps: { type: 'int', min: 1, default: DEFAULT_STEPS, description: 'PPO frames per fine-tuning run', valueName: 'N' },
    demos: { type: 'int', min: 1, default: DEFAULT_DEMOS, description: 'demonstration episodes per foundation', valueName: 'N' },
    'eval-episodes': { type: 'int', min: 1, default: DEFAULT_EVAL_EPISODES, description: 'held-out episodes per seed and method', valueName: 'K' },
    envs: { type: 'int', min: 1, default: DEFAULT_ENVS, description: 'parallel training environments', valueName: 'K' },
    backend: { type: 'string', choices: BACKEND_CHOICES, default: 'auto', description: 'network engine (see train --help)' },
    readme: { type: 'string', description: 'also replace the results block of this README', valueName: 'FILE' },
    ...ENGINE_OPTIONS,
  },
  epilog: `Each cell is a job: \`rewardsmith pretrain\` for a foundation, \`rewardsmith train --init\` for a fine-tuning, as local
processes (--parallel at once) or Slurm jobs (--engine slurm; DIR on a file system the compute nodes share; the
Slurm options as for \`sweep\`). Ctrl-C stops the jobs; running the same command again resumes.`,
} as const satisfies CommandSpec<Record<string, OptionSpec>>;

const splitList = (values: string[]) =>
  values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');

export async function tableCommand(argv: string[]): Promise<number> {
  return runCommand('table', async () => {
    const { values: v } = parseCommandArgs(TABLE_SPEC, argv);
    if (!v.out) throw new UsageError('--out DIR is required');
    const tasks = v.tasks.length ? splitList(v.tasks) : undefined;
    const seeds = v.seeds.length
      ? splitList(v.seeds).map((s) => {
          const n = Number(s);
          if (!Number.isInteger(n) || n < 0) throw new UsageError(`--seeds takes integers ≥ 0, got "${s}"`);
          return n;
        })
      : undefined;
    for (const t of tasks ?? []) {
      try {
        resolveTask(t);
      } catch (err) {
        if (err instanceof UsageError) throw new UsageError(`--tasks: ${err.message}`);
        throw err;
      }
    }
    if (v.readme && !existsSync(v.readme)) throw new UsageError(`--readme ${v.readme}: no such file`);
    const engine = (await engineFromOptions(v))!;
    const log = (line: string) => process.stderr.write(line + '\n');
    const { value: result } = await cancellableOnSignal('table', engine, log, (signal) =>
      runTable({
        out: v.out!,
        tasks,
        seeds,
        steps: v.steps,
        demos: v.demos,
        evalEpisodes: v['eval-episodes'],
        envs: v.envs,
        backend: v.backend as BackendChoice,
        engine,
        signal,
        log,
      }),
    );
    process.stdout.write(tableMarkdown(result) + '\n\n' + `table: ${result.files.markdown}, ${result.files.csv}, ${result.files.svg}\n`);
    if (v.readme) {
      updateReadme(v.readme, result, `rewardsmith table ${argv.join(' ')}`);
      process.stdout.write(`README results block updated: ${v.readme}\n`);
    }
    return 0;
  });
}
