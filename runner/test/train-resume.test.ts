// The run folder across an interruption: `train` killed with SIGKILL mid-run and continued with
// `--resume DIR` reaches the same total frames with every metric line exactly once, and the records
// (summary.json, metrics.ndjson, eval episodes) have the shapes the analyzer, loop and dashboard read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseEvent, type RunnerEvent } from '../src/events';
import { RewardError } from '../src/reward';
import { RUN_FILES, rewardCopyName, type EpisodeRecord, type RunSummary, type UpdateMetrics } from '../src/records';
import { DEFAULT_ROLLOUT_STEPS, type RewardGate } from '../src/runs/train';
import { trainCommand } from '../src/runs/train-command';
import { trainReward } from '../src/llm/train-step';
import { BUILTIN_TASKS } from '../src/tasks';
import { cliNodeArgs } from './helpers/cli-process';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const REWARD = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
/** approach-tree with 120-step episodes (a user task file): its evaluations and their reports' playback are short. */
const SHORT_TASK = path.join(ROOT, 'runner/test/fixtures/short-approach-tree.yaml');

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  events: RunnerEvent[];
  stderr: string;
}

/** Runs the CLI with --events ndjson; `killWhen` sees each event (and the process) and may SIGKILL the process. */
async function runTrain(args: string[], killWhen?: (e: RunnerEvent, child: ChildProcess) => boolean): Promise<CliRun> {
  const cli = await cliNodeArgs();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cli, 'train', ...args, '--events', 'ndjson'], { cwd: ROOT });
    const events: RunnerEvent[] = [];
    let buffered = '',
      stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const e = parseEvent(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (!e) continue;
        events.push(e);
        if (killWhen?.(e, child)) child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code, signal) => resolve({ code, signal, events, stderr }));
  });
}

/** The process id of the reward sandbox host the CLI process `parent` started. */
/** The sandbox host among `root`'s descendants (a loop's training runs as a job: the host is its grandchild). */
function sandboxHostOf(root: number): number {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) if (below.has(p.ppid) && !below.has(p.pid)) below.add(p.pid), (grew = true);
  }
  const host = table.find((p) => below.has(p.pid) && p.pid !== root && p.args.includes('sandbox-host'));
  assert.ok(host, `no sandbox host among the descendants of ${root}`);
  return host.pid;
}

const PER_UPDATE = 8 * DEFAULT_ROLLOUT_STEPS;
const FRAMES = PER_UPDATE * 7; // 7 updates of 8 envs; checkpoints after updates 4 and 7

test('train killed with SIGKILL resumes to the same total frames with no metric line lost or repeated', { timeout: 300_000 }, async () => {
  const out = path.join(tempDir('rewardsmith-resume-'), 'run');
  const common = ['--envs', '8', '--workers', '0', '--eval-episodes', '4'];
  // Kill after update 5: one update past the checkpoint, so the resumed run must redo (not repeat) it.
  const first = await runTrain(
    [REWARD, '--task', SHORT_TASK, '--steps', String(FRAMES), '--seed', '7', '--out', out, ...common],
    (e) => e.type === 'progress' && e.update === 5,
  );
  assert.equal(first.signal, 'SIGKILL', first.stderr);
  assert.ok(existsSync(path.join(out, RUN_FILES.checkpoint, 'state.json')));
  assert.equal(readFileSync(path.join(out, RUN_FILES.metrics), 'utf8').trim().split('\n').length, 5);

  // --resume alone: the run's stored configuration (config.json) brings back its 4 evaluation episodes.
  const second = await runTrain(['--resume', out, '--workers', '0']);
  assert.equal(second.code, 0, second.stderr);
  const started = second.events.find((e) => e.type === 'started');
  assert.ok(started?.type === 'started');
  assert.equal(started.resumed_from_frames, 4 * PER_UPDATE);
  assert.equal(started.total_frames, FRAMES);
  const finished = second.events[second.events.length - 1]!;
  assert.ok(finished.type === 'finished' && finished.ok);

  // metrics.ndjson: one line per update 1..7, frames strictly increasing to the total, every field a number.
  const lines = readFileSync(path.join(out, RUN_FILES.metrics), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as UpdateMetrics);
  assert.deepEqual(
    lines.map((m) => m.update),
    [1, 2, 3, 4, 5, 6, 7],
  );
  assert.deepEqual(
    lines.map((m) => m.frames),
    [1, 2, 3, 4, 5, 6, 7].map((u) => u * PER_UPDATE),
  );
  const metricKeys: (keyof UpdateMetrics)[] = [
    'update',
    'frames',
    'fps',
    'mean_return',
    'episodes',
    'policy_loss',
    'value_loss',
    'entropy',
    'kl',
    'wall_seconds',
    'finished_episodes',
    'unfinished_return',
    'approx_kl',
    'clip_fraction',
    'learning_rate',
  ];
  // Null when there is nothing to say: no episode ended in the update; returns constant over the rollout.
  const nullable: (keyof UpdateMetrics)[] = ['finished_return', 'explained_variance'];
  for (const m of lines) {
    assert.deepEqual(Object.keys(m).sort(), [...metricKeys, ...nullable, 'success_rate', 'success'].sort());
    for (const k of metricKeys) assert.ok(Number.isFinite(m[k]), `metrics ${k} = ${m[k]}`);
    for (const k of nullable) assert.ok(m[k] === null || Number.isFinite(m[k]), `metrics ${k} = ${m[k]}`);
    assert.equal(m.finished_return === null, m.finished_episodes === 0, 'a finished-episode return exactly when episodes finished');
    assert.ok(m.clip_fraction! >= 0 && m.clip_fraction! <= 1, 'a share of samples');
    assert.equal(m.learning_rate, 1e-3);
    // Training success: over episodes that started in a window and have all ended; none before such a window.
    assert.equal(m.success_rate, m.success.rate);
    assert.ok(m.success.n === 0 ? m.success.rate === null : m.success.rate! >= m.success.ci95[0] && m.success.rate! <= m.success.ci95[1]);
  }
  // Resumed from a checkpoint, the estimate continues: episode counts never drop to a fresh run's.
  const progress = second.events.filter((e) => e.type === 'progress');
  for (const e of progress) assert.ok(e.type === 'progress' && (e.success.n === 0) === (e.success_rate === null));

  // summary.json: the documented fields with the right types and values.
  const summary = JSON.parse(readFileSync(path.join(out, RUN_FILES.summary), 'utf8')) as RunSummary;
  assert.deepEqual(Object.keys(summary).sort(), [
    'backend',
    'below_start',
    'env',
    'env_steps',
    'eval',
    'generalisation_gap',
    'reward_file',
    'reward_sha256',
    'seed',
    'task',
    'task_file',
    'train',
    'wall_seconds',
  ]);
  assert.equal(summary.task, 'short-approach-tree');
  assert.equal(summary.task_file, SHORT_TASK);
  assert.equal(summary.env_steps, FRAMES);
  assert.equal(summary.seed, 7);
  assert.equal(summary.reward_file, REWARD);
  assert.match(summary.reward_sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.ok(['js', 'wasm', 'cpu', 'node', 'gpu'].includes(summary.backend));
  assert.deepEqual(Object.keys(summary.train).sort(), ['entropy', 'episode_steps', 'fps', 'frames', 'mean_return', 'success', 'success_rate', 'updates']);
  assert.equal(summary.train.episode_steps, 120, "the task file's training episodes run to its limit");
  assert.equal(summary.train.success_rate, summary.train.success.rate);
  assert.equal(summary.train.updates, 7);
  assert.equal(summary.train.frames, FRAMES);
  assert.deepEqual(Object.keys(summary.eval).sort(), [
    'avg_distance_moved',
    'avg_steps',
    'death',
    'death_causes',
    'death_rate',
    'episodes',
    'success',
    'success_rate',
  ]);
  assert.equal(summary.eval.episodes, 4);
  assert.equal(summary.eval.success.n, 4);
  assert.equal(summary.eval.success.rate, summary.eval.success_rate);
  assert.ok(summary.eval.success.ci95[0] <= summary.eval.success_rate && summary.eval.success_rate <= summary.eval.success.ci95[1]);
  for (const k of ['success_rate', 'death_rate'] as const) assert.ok(summary.eval[k] >= 0 && summary.eval[k] <= 1);
  assert.ok(summary.wall_seconds > 0);

  // Evaluation records: 4 episodes on seeds the run never trained on, in the analyzer's format.
  const state = JSON.parse(readFileSync(path.join(out, RUN_FILES.checkpoint, 'state.json'), 'utf8')) as { trainingSeeds: number[] };
  const episodes = readFileSync(path.join(out, RUN_FILES.episodes), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as EpisodeRecord);
  assert.equal(episodes.length, 4);
  for (const e of episodes) {
    assert.ok(!state.trainingSeeds.includes(e.seed), `eval seed ${e.seed} was a training seed`);
    assert.equal(e.path.length, e.steps + 1);
    assert.equal(e.lastSteps.length, Math.min(32, e.steps));
    assert.equal(e.lastSteps[e.lastSteps.length - 1]!.step, e.steps);
    assert.ok(typeof e.final.blockUnderFoot === 'string' && typeof e.final.health === 'number');
    assert.equal(e.success, !e.truncated && !e.died);
  }
  const failed = JSON.parse(readFileSync(path.join(out, RUN_FILES.failedEpisodes), 'utf8')) as EpisodeRecord[];
  assert.deepEqual(
    failed.map((e) => e.episode),
    episodes.filter((e) => !e.success).map((e) => e.episode),
  );
  assert.equal(second.events.filter((e) => e.type === 'episode_failed').length, failed.length);

  // `eval CHECKPOINT` re-evaluates the trained policy into its own folder, with the run's reward copy.
  const evalDir = path.join(out, 'eval-again');
  const cli = await cliNodeArgs();
  const evaluated = await new Promise<CliRun>((resolve) => {
    const child = spawn(
      process.execPath,
      [...cli, 'eval', out, '--task', SHORT_TASK, '--episodes', '3', '--envs', '3', '--workers', '0', '--out', evalDir, '--events', 'ndjson'],
      { cwd: ROOT },
    );
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        events: stdout
          .split('\n')
          .map(parseEvent)
          .filter((e): e is RunnerEvent => e !== undefined),
        stderr,
      }),
    );
  });
  assert.equal(evaluated.code, 0, evaluated.stderr);
  const evalEvent = evaluated.events.find((e) => e.type === 'eval');
  assert.ok(evalEvent?.type === 'eval' && evalEvent.episodes === 3);
  const again = JSON.parse(readFileSync(path.join(evalDir, RUN_FILES.summary), 'utf8')) as RunSummary;
  assert.equal(again.eval.episodes, 3);
  assert.equal(again.reward_file, path.join(out, RUN_FILES.rewardCopy));
  assert.equal(readFileSync(path.join(evalDir, RUN_FILES.episodes), 'utf8').trim().split('\n').length, 3);
});

test('a sandbox host killed by SIGBUS mid-run fails the run with the signal named at the reward file, no stack trace, and --resume finishes it', {
  timeout: 300_000,
}, async () => {
  const out = path.join(tempDir('rewardsmith-host-died-'), 'run');
  // Small updates with a checkpoint after each; the host dies after the first, with 7 updates still to go.
  const small = ['--envs', '4', '--rollout-steps', '32', '--checkpoint-every', '1', '--workers', '0', '--eval-episodes', '0'];
  const first = await runTrain([REWARD, '--task', 'approach-tree', '--steps', String(4 * 32 * 8), '--seed', '3', '--out', out, ...small], (e, child) => {
    if (e.type === 'progress' && e.update === 1) process.kill(sandboxHostOf(child.pid!), 'SIGBUS');
    return false;
  });
  assert.equal(first.code, 1, first.stderr);
  assert.match(
    first.stderr,
    /rewardsmith train: reward error \(host\) at \S*approach-tree\.dense\.reward\.ts:\d+:\d+: the sandbox host was ended by SIGBUS \(.*\); the reward is not at fault: the same command with --resume continues from the last checkpoint/,
  );
  assert.doesNotMatch(first.stderr, /heap|EPIPE|\n\s+at /);
  const error = first.events.find((e) => e.type === 'reward_error');
  assert.ok(error?.type === 'reward_error' && error.kind === 'host', JSON.stringify(error));
  const second = await runTrain(['--resume', out, '--workers', '0']);
  assert.equal(second.code, 0, second.stderr);
  const started = second.events.find((e) => e.type === 'started');
  assert.ok(started?.type === 'started' && started.resumed_from_frames !== undefined && started.resumed_from_frames > 0, JSON.stringify(started));
  assert.ok(existsSync(path.join(out, RUN_FILES.summary)));
});

test("the loop's training step: a sandbox host that dies stops the loop (it is not a reward error for the designer), and the next call resumes the run", {
  timeout: 300_000,
}, async () => {
  const out = path.join(tempDir('rewardsmith-loop-host-died-'), 'run');
  const step = () =>
    trainReward({
      rewardFile: REWARD,
      task: BUILTIN_TASKS['approach-tree']!,
      // A checkpoint after update 4; the host dies once the job's log shows it (read with a delay: updates to spare).
      steps: 2 * DEFAULT_ROLLOUT_STEPS * 12,
      seed: 5,
      out,
      envs: 2,
      evalEpisodes: 0,
      emit: (e) => {
        if (e.type === 'progress' && e.update >= 4 && !killed) {
          killed = true;
          process.kill(sandboxHostOf(process.pid), 'SIGKILL');
        }
      },
    });
  let killed = false;
  await assert.rejects(step(), (err: unknown) => {
    assert.ok(err instanceof Error && !(err instanceof RewardError), String(err));
    assert.match(
      err.message,
      /^training \S+approach-tree\.dense\.reward\.ts stopped: \S+:\d+:\d+: the sandbox host was ended by SIGKILL \(.*\); the reward is not at fault: run the same command again to resume from the run's last checkpoint$/,
    );
    return true;
  });
  assert.ok(existsSync(path.join(out, RUN_FILES.checkpoint, 'state.json')));
  assert.deepEqual(await step(), { ok: true });
  const summary = JSON.parse(readFileSync(path.join(out, RUN_FILES.summary), 'utf8')) as RunSummary;
  assert.equal(summary.train.updates, 12);
});

test('a finished run: --eval-episodes 0 points to eval, not analyze; --resume says it has finished and changes nothing', { timeout: 300_000 }, async () => {
  const out = path.join(tempDir('rewardsmith-finished-'), 'run');
  const node = await cliNodeArgs();
  const cli = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...node, 'train', ...args], { cwd: ROOT });
      let stdout = '',
        stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d));
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const first = await cli([
    REWARD,
    '--task',
    'approach-tree',
    '--envs',
    '2',
    '--rollout-steps',
    '8',
    '--steps',
    '16',
    '--workers',
    '0',
    '--eval-episodes',
    '0',
    '--out',
    out,
  ]);
  assert.equal(first.code, 0, first.stderr);
  const next = /next: (.*)$/m.exec(first.stdout)?.[1] ?? '';
  assert.doesNotMatch(next, /^rewardsmith analyze/, 'analyze needs evaluation episodes, which this run has none of');
  assert.match(next, new RegExp(`^rewardsmith eval ${out.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} --episodes 100 --out `));
  const summaryBefore = readFileSync(path.join(out, RUN_FILES.summary), 'utf8');
  const metricsBefore = readFileSync(path.join(out, RUN_FILES.metrics), 'utf8');

  const resumed = await cli(['--resume', out]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, /has finished: 16 of 16 frames trained and 0 held-out episodes evaluated; nothing to resume/);
  assert.doesNotMatch(resumed.stderr, /evaluating/);
  assert.equal(readFileSync(path.join(out, RUN_FILES.summary), 'utf8'), summaryBefore, 'summary.json untouched');
  assert.equal(readFileSync(path.join(out, RUN_FILES.metrics), 'utf8'), metricsBefore);
});

test("the loop's training step trains the text the loop screened: a reward file replaced by a link to another reward after the check is refused, naming it; nothing trains", {
  timeout: 300_000,
}, async () => {
  const dir = tempDir('rewardsmith-loop-swapped-');
  const screened = readFileSync(REWARD, 'utf8');
  const file = path.join(dir, 'approach-tree.reward.ts');
  // The loop wrote and screened `screened` here; before the job read it, a link to another reward took its place.
  symlinkSync(path.join(ROOT, 'runner/rewards/approach-tree.sparse.reward.ts'), file);
  const out = path.join(dir, 'run');
  await assert.rejects(
    trainReward({
      rewardFile: file,
      rewardSha256: createHash('sha256').update(screened).digest('hex'),
      task: BUILTIN_TASKS['approach-tree']!,
      steps: 2 * DEFAULT_ROLLOUT_STEPS,
      seed: 1,
      out,
      envs: 2,
      evalEpisodes: 0,
    }),
    (err: Error) => {
      assert.ok(
        err.message.startsWith(`training ${file} on local failed: rewardsmith train: ${file}: not the reward text this run was given to train (its sha256 `),
        err.message,
      );
      assert.match(err.message, /changed or replaced after it was checked, so nothing was trained/);
      return true;
    },
  );
  assert.ok(!existsSync(path.join(out, RUN_FILES.metrics)), 'trained');
  assert.ok(!existsSync(path.join(out, RUN_FILES.summary)), 'trained');
});

test('train checks and trains one reading of the reward: a file changed while its check runs trains the checked text', { timeout: 300_000 }, async () => {
  const dir = tempDir('rewardsmith-gate-swapped-');
  const file = path.join(dir, 'approach-tree.reward.ts');
  const checked = readFileSync(REWARD, 'utf8');
  writeFileSync(file, checked);
  const other = readFileSync(path.join(ROOT, 'runner/rewards/approach-tree.sparse.reward.ts'), 'utf8');
  const out = path.join(dir, 'run');
  let gateSaw = '';
  // The check passes the text it was given; meanwhile someone writes another reward into the file.
  const gate: RewardGate = async (reward) => {
    gateSaw = reward.text;
    writeFileSync(file, other);
    return { report: [], errors: 0 };
  };
  const argv = [
    file,
    '--task',
    'approach-tree',
    '--out',
    out,
    '--envs',
    '2',
    '--steps',
    String(2 * DEFAULT_ROLLOUT_STEPS),
    '--eval-episodes',
    '0',
    '--events',
    'ndjson',
  ];
  const code = await trainCommand(argv, { gate });
  assert.equal(code, 0);
  assert.equal(gateSaw, checked);
  const summary = JSON.parse(readFileSync(path.join(out, RUN_FILES.summary), 'utf8')) as RunSummary;
  assert.equal(summary.reward_sha256, createHash('sha256').update(checked).digest('hex'), 'the run trained the checked text');
  assert.equal(readFileSync(path.join(out, rewardCopyName(file)), 'utf8'), checked, "the run's copy is the checked text");
});
