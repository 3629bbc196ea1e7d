// `rewardsmith rollout`: runs a policy (random, or a trained checkpoint) in an environment for N env steps
// and writes DIR/summary.json (task, env, env_steps, episodes finished and cut off unfinished, success and death
// rates with their Wilson 95 % intervals over the finished episodes, wall_seconds, observed: steps each name was
// visible, throughput) and one EpisodeRecord per finished episode in DIR/eval/episodes.ndjson. It is also the
// whole-process throughput benchmark of the simulator.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cpus } from 'node:os';
import { appendNoFollow, makeFolder, writeAtomic } from '../files';
import { CommandError, didYouMean, parseCommandArgs, runCommand, UsageError } from '../args';
import { GAME_FACTS } from '../schema';
import { MAX_ENVS } from './config';
import { resolveTask } from '../tasks';
import { RUN_FILES, rateRecord, type RateRecord } from '../records';
import { formatRate } from '../stats';
import { Mulberry32, nextEpisodeSeed } from '../seeds';
import { EpisodeRecorder } from './recorder';
import { createEnv } from '../env/index';
import { defaultWorkers } from '../env/sim/vec';

export const ROLLOUT_SPEC = {
  command: 'rollout',
  summary: `Runs a policy (random, or a checkpoint written by \`rewardsmith train\`) in an environment for N env steps and
writes DIR/summary.json and every finished episode to DIR/eval/episodes.ndjson. Also the simulator's throughput benchmark.`,
  options: {
    task: { type: 'string', valueName: 'TASK', description: 'built-in task id or a task file (.json/.yaml)' },
    out: { type: 'string', valueName: 'DIR', description: 'output folder' },
    policy: { type: 'string', valueName: 'random|CHECKPOINT', default: 'random', description: '"random" or a checkpoint folder' },
    steps: { type: 'int', min: 1, max: 1e10, default: 20000, description: 'environment steps over all envs' },
    seed: { type: 'int', min: 0, max: 2 ** 32 - 1, default: 0, description: 'seed of the first episode of env 0' },
    env: { type: 'string', choices: ['sim', 'mineflayer'], default: 'sim', description: 'environment backend' },
    server: { type: 'string', valueName: 'HOST:PORT', description: 'Minecraft server for --env mineflayer' },
    envs: { type: 'int', min: 1, max: MAX_ENVS, description: 'environments stepped in a batch (default 32 for sim, 1 for mineflayer)' },
    workers: { type: 'int', min: 0, max: 256, description: 'sim worker threads (default: one per core)' },
  },
} as const;

export interface RolloutSummary {
  task: string;
  /** The task file (absolute) when the task is not built in (as a training run's summary says it). */
  task_file: string | null;
  env: 'sim' | 'mineflayer';
  policy: string;
  seed: number;
  num_envs: number;
  workers: number;
  env_steps: number;
  /** Finished episodes: the rates are over these. */
  episodes: number;
  /** Episodes still in progress when the step budget ran out (cut off, not counted in any rate). */
  episodes_unfinished: number;
  /** success.rate, or 0 when no episode finished (kept for older readers; success says how many it is over). */
  success_rate: number;
  death_rate: number;
  /** Successes of the finished episodes with the Wilson 95 % interval (rate null when none finished). */
  success: RateRecord;
  death: RateRecord;
  death_causes: Record<string, number>;
  avg_episode_steps: number;
  wall_seconds: number;
  steps_per_second: number;
  /** CPU time of the whole process (all threads): steps per CPU-second is the load-independent figure. */
  cpu_seconds: number;
  machine: string;
  /** For each block/mob name: in how many env steps it was visible. */
  observed: Record<string, number>;
}

/** A batch policy: features of all envs in, one action index per env out. */
interface BatchPolicy {
  act(features: Float32Array, numEnvs: number): Int32Array | Promise<Int32Array>;
  dispose?(): void;
}

/** Seeded uniform random actions (the one PRNG, seeds.ts), so a random rollout is reproducible from --seed. */
function randomPolicy(seed: number): BatchPolicy {
  const random = new Mulberry32(seed);
  const n = GAME_FACTS.actions.length;
  return {
    act(_features, numEnvs) {
      const out = new Int32Array(numEnvs);
      for (let i = 0; i < numEnvs; i++) out[i] = Math.floor(random.next() * n);
      return out;
    },
  };
}

/** A trained checkpoint (the trainer's loader in runner/src/ppo owns the format); actions sampled, seeded. */
async function checkpointPolicy(dir: string, featureSize: number, seed: number): Promise<BatchPolicy & { dispose(): void }> {
  const { loadPolicy } = await import('../ppo/learner');
  const policy = await loadPolicy(dir, { seed });
  if (policy.featureSize !== featureSize) {
    policy.dispose();
    throw new Error(
      `${dir}: the policy was trained on ${policy.task} with ${policy.featureSize} features per step; this task's environment gives ${featureSize}`,
    );
  }
  return { act: (features, numEnvs) => policy.act(features, numEnvs), dispose: () => policy.dispose() };
}

export async function rolloutCommand(argv: string[]): Promise<number> {
  return runCommand('rollout', () => rollout(argv));
}

async function rollout(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(ROLLOUT_SPEC, argv);
  if (!values.task) throw new UsageError('--task is required');
  if (!values.out) throw new UsageError('--out DIR is required');
  const out = values.out;
  const backend = values.env as 'sim' | 'mineflayer';
  const { steps, seed } = values;
  const numEnvs = values.envs ?? (backend === 'sim' ? 32 : 1);
  const workers = values.workers;
  let task: ReturnType<typeof resolveTask>;
  try {
    task = resolveTask(values.task);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const policyArg = values.policy;
  if (policyArg !== 'random' && !existsSync(policyArg)) {
    const near = didYouMean(policyArg, ['random']);
    throw new UsageError(`--policy ${policyArg}: neither "random" nor a checkpoint folder${near.length ? ` (did you mean ${near[0]}?)` : ''}`);
  }
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const env = await createEnv({ task, numEnvs, seed, backend, server: values.server, workers });
  let policy: BatchPolicy;
  try {
    policy = policyArg === 'random' ? randomPolicy(seed ^ 0x2545f491) : await checkpointPolicy(policyArg, env.featureSize, seed);
  } catch (err) {
    await env.close();
    throw new CommandError((err as Error).message);
  }
  let summary: RolloutCore;
  try {
    summary = await runRollout(env, policy, steps, seed, out);
  } finally {
    policy.dispose?.();
    await env.close();
  }
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const result: RolloutSummary = {
    task: task.id,
    task_file: task.file ?? null,
    env: backend,
    policy: policyArg,
    seed,
    num_envs: numEnvs,
    workers: backend === 'sim' ? (workers ?? defaultWorkers(numEnvs)) : 0,
    ...summary,
    wall_seconds: Math.round(wall * 1000) / 1000,
    steps_per_second: Math.round(summary.env_steps / wall),
    cpu_seconds: Math.round((cpu.user + cpu.system) / 1000) / 1000,
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
  };
  writeAtomic(out, path.join(out, RUN_FILES.summary), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(
    `${task.id} (${backend}, ${policyArg}): ${result.env_steps} steps, ${outcomeText(result)}; ` +
      `${result.wall_seconds} s (${result.steps_per_second} steps/s) → ${path.join(out, RUN_FILES.summary)}\n`,
  );
  return 0;
}

/** Finished and cut-off episodes, then the rates over the finished ones (or why there are none). */
function outcomeText(s: RolloutSummary): string {
  const cut = s.episodes_unfinished > 0 ? `, ${s.episodes_unfinished} still running when the step budget ran out (not counted)` : '';
  const counts = `${s.episodes} finished episode${s.episodes === 1 ? '' : 's'}${cut}`;
  if (s.episodes === 0) return `${counts}: no success or death rate (no episode finished; give more --steps)`;
  return `${counts}; success ${formatRate(s.success)}, deaths ${formatRate(s.death)}`;
}

type RolloutCore = Omit<
  RolloutSummary,
  'task' | 'task_file' | 'env' | 'policy' | 'seed' | 'num_envs' | 'workers' | 'wall_seconds' | 'steps_per_second' | 'cpu_seconds' | 'machine'
>;

async function runRollout(
  env: Awaited<ReturnType<typeof createEnv>>,
  policy: BatchPolicy,
  totalSteps: number,
  seed: number,
  out: string,
): Promise<RolloutCore> {
  const n = env.numEnvs;
  makeFolder(path.join(out, path.dirname(RUN_FILES.episodes)));
  const episodesFile = path.join(out, RUN_FILES.episodes);
  writeAtomic(out, episodesFile, '');
  const seeds = Array.from({ length: n }, (_, i) => (seed + i) >>> 0);
  let { features, obs } = await env.reset(seeds);
  const recorder = new EpisodeRecorder();
  obs.forEach((o, i) => recorder.begin(i, seeds[i]!, -1, o));
  const observed = new Map<string, number>();
  const deathCauses: Record<string, number> = {};
  let envSteps = 0,
    episodes = 0,
    successes = 0,
    deaths = 0,
    episodeSteps = 0;
  // Whether each env's last step ended its episode; the others are cut off mid-episode when the budget runs out.
  const justEnded = new Uint8Array(n);
  const lines: string[] = [];
  while (envSteps < totalSteps) {
    const actions = await policy.act(features, n);
    const r = await env.step(actions);
    features = r.features;
    for (let i = 0; i < n; i++) {
      const o = r.obs[i]!,
        info = r.info[i]!;
      for (const name in o.nearest) observed.set(name, (observed.get(name) ?? 0) + 1);
      // A rollout has no reward: its records carry 0.
      recorder.step(i, actions[i]!, 0, o, info);
      justEnded[i] = info.done ? 1 : 0;
      if (!info.done) continue;
      // Numbered in the order episodes end, the order they are written in.
      const record = { ...recorder.finish(i, o, info)!, episode: episodes++ };
      episodeSteps += record.steps;
      if (record.success) successes++;
      if (record.died) {
        deaths++;
        const cause = record.deathCause ?? 'other';
        deathCauses[cause] = (deathCauses[cause] ?? 0) + 1;
      }
      lines.push(JSON.stringify(record));
      if (lines.length >= 64) appendNoFollow(episodesFile, lines.splice(0).join('\n') + '\n');
      // The env has auto-reset onto the next seed of its stream.
      recorder.begin(i, nextEpisodeSeed(recorder.seedOf(i), i), -1, r.resetObs[i]!);
    }
    envSteps += n;
  }
  if (lines.length > 0) appendNoFollow(episodesFile, lines.join('\n') + '\n');
  const success = rateRecord(successes, episodes),
    death = rateRecord(deaths, episodes);
  return {
    env_steps: envSteps,
    episodes,
    episodes_unfinished: n - justEnded.reduce((sum, ended) => sum + ended, 0),
    success_rate: success.rate ?? 0,
    death_rate: death.rate ?? 0,
    success,
    death,
    death_causes: deathCauses,
    avg_episode_steps: episodes > 0 ? Math.round(episodeSteps / episodes) : 0,
    observed: Object.fromEntries([...observed].sort((a, b) => b[1] - a[1])),
  };
}
