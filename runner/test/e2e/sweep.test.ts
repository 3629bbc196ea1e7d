// `rewardsmith sweep` as a user runs it: the CLI in a child process, real `train` runs with tiny budgets, on
// the local engine and on a real Slurm cluster (`npm run slurm:local`; CI brings it up and sets
// REWARDSMITH_REQUIRE_SLURM=1 so that a missing cluster fails instead of skipping). Interruptions are real:
// Ctrl-C (SIGINT) must cancel the jobs, SIGKILL of the sweep must leave them to be found again, and running
// the same command again must resume without training anything twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseEvent, type RunnerEvent, type SweepRunEvent } from '../../src/events';
import type { SweepResults } from '../../src/sweep/results';
import { cliAll } from '../helpers/cli-all';
import { cliNodeArgs } from '../helpers/cli-process';
import { tempDir } from '../helpers/tmp';

const ROOT = path.resolve(__dirname, '../../..');
const DENSE = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
const SPARSE = path.join(ROOT, 'runner/rewards/approach-tree.sparse.reward.ts');
const TINY = ['--steps', '512', '--envs', '8', '--workers', '0', '--eval-episodes', '4'];
/** The sweeps that train run approach-tree cut to 120-step episodes (a user task file): their evaluations and reports stay short. */
const SHORT_TASK = path.join(ROOT, 'runner/test/fixtures/short-approach-tree.yaml');

interface SweepRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  events: RunnerEvent[];
  stdout: string;
  stderr: string;
}

/** Runs `rewardsmith sweep ARGS --events ndjson` (its jobs run the same CLI); `act` sees each event and may signal the process. */
async function runSweep(args: string[], act?: (e: RunnerEvent, kill: (s: NodeJS.Signals) => void) => void): Promise<SweepRun> {
  const cli = await cliNodeArgs();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cli, 'sweep', ...args, '--events', 'ndjson'], { cwd: ROOT });
    const events: RunnerEvent[] = [];
    let buffered = '',
      stdout = '',
      stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const e = parseEvent(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (!e) continue;
        events.push(e);
        act?.(e, (s) => child.kill(s));
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code, signal) => resolve({ code, signal, events, stdout, stderr }));
  });
}

const runEvents = (r: SweepRun) => r.events.filter((e): e is SweepRunEvent => e.type === 'sweep_run');
const jobIds = (r: SweepRun) =>
  new Map(
    runEvents(r)
      .filter((e) => e.job_id)
      .map((e) => [e.run, e.job_id!]),
  );
const readResults = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as SweepResults;

function assertCompleteResults(dir: string, rewards: string[], seeds: number): void {
  const results = readResults(dir);
  assert.equal(results.runs.length, rewards.length * seeds);
  for (const run of results.runs) {
    assert.equal(run.state, 'completed', `${run.reward}/seed-${run.seed}: ${run.message}`);
    assert.equal(run.success!.n, 4);
    assert.ok(run.success!.ci95[0] <= run.success!.rate! && run.success!.rate! <= run.success!.ci95[1]);
    assert.ok(run.wall_seconds! > 0);
    assert.ok(existsSync(path.join(dir, run.run_dir, 'summary.json')));
  }
  assert.deepEqual(results.rewards.map((r) => r.reward).sort(), rewards.sort());
  for (const r of results.rewards) {
    assert.equal(r.seeds, seeds);
    assert.equal(r.episodes, 4 * seeds);
    assert.ok(r.ci95![0] <= r.mean_success! && r.mean_success! <= r.ci95![1], JSON.stringify(r));
    assert.ok(r.rank! >= 1);
  }
  const md = readFileSync(path.join(dir, 'results.md'), 'utf8');
  for (const r of rewards) assert.match(md, new RegExp(`\\| ${r.replace('.', '\\.')} \\|`));
  assert.match(readFileSync(path.join(dir, 'results.svg'), 'utf8'), /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
}

test('sweep: usage errors name the option and lose nothing', { timeout: 60_000 }, async () => {
  const out = tempDir('rewardsmith-sweep-usage-');
  // The three command lines in one process through the real dispatcher (helpers/cli-all.ts).
  const [missing, slurmOnly, task] = await cliAll(
    ROOT,
    [
      ['--task', 'approach-tree', '--rewards', DENSE, 'nope.reward.ts', '--out', out],
      ['--task', 'approach-tree', '--rewards', DENSE, '--out', out, '--partition', 'gpu'],
      ['--task', 'approach-tre', '--rewards', DENSE, '--out', out],
    ].map((args) => ({ args: ['sweep', ...args] })),
    60_000,
  );
  assert.equal(missing!.code, 2);
  assert.match(missing!.err, /^rewardsmith sweep: --rewards: nope\.reward\.ts: no such file/);
  assert.equal(slurmOnly!.code, 2);
  assert.match(slurmOnly!.err, /--partition is a Slurm option; add --engine slurm/);
  assert.equal(task!.code, 2);
  assert.doesNotMatch(task!.err, /\n\s+at /);
  assert.equal(existsSync(path.join(out, 'sweep.json')), false);
});

const alive = (pid: string) => existsSync(`/proc/${pid}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('sweep --engine local: killed mid-run, the same command takes the jobs that ended meanwhile and waits for the running one; a third run keeps everything', {
  timeout: 240_000,
}, async () => {
  const out = path.join(tempDir('rewardsmith-sweep-local-'), 'sweep');
  const args = ['--task', SHORT_TASK, '--rewards', DENSE, SPARSE, '--seeds', '1', ...TINY, '--parallel', '2', '--out', out];
  const first = await runSweep(args, (e, kill) => e.type === 'sweep_run' && e.state === 'running' && kill('SIGKILL'));
  assert.equal(first.signal, 'SIGKILL');
  const started = jobIds(first);
  assert.ok(started.size >= 1);
  // Let one job end while no sweep watches it.
  const [firstRun, firstPid] = [...started][0]!;
  while (alive(firstPid)) await sleep(200);

  const second = await runSweep(args);
  assert.equal(second.code, 0, second.stderr);
  // The jobs the killed sweep started were taken or waited for, never started again.
  for (const [run, id] of started) assert.equal(jobIds(second).get(run), id, `${run} was started twice`);
  assert.ok(runEvents(second).some((e) => e.run === firstRun && e.state === 'completed'));
  assertCompleteResults(out, ['approach-tree.dense', 'approach-tree.sparse'], 1);

  const third = await runSweep(args);
  assert.equal(third.code, 0, third.stderr);
  assert.ok(runEvents(third).every((e) => e.state === 'completed'));
  assert.match(third.stderr, /kept \(completed earlier\)/);
});

// Its limit leaves room for a loaded machine: the two runs took 153 s at load average 27.
test("sweep: a run whose reward throws fails with the reward file's line, the others complete, and exit is 1", { timeout: 300_000 }, async () => {
  const out = path.join(tempDir('rewardsmith-sweep-fail-'), 'sweep');
  const broken = path.join(path.dirname(out), 'broken.reward.ts');
  writeFileSync(broken, readFileSync(path.join(ROOT, 'runner/test/fixtures/rewards/throws-typed.reward.ts'), 'utf8'));
  const r = await runSweep(['--task', SHORT_TASK, '--rewards', DENSE, broken, '--seeds', '1', ...TINY, '--out', out]);
  assert.equal(r.code, 1, r.stderr);
  // The reward is refused by the check before training (it throws on the probe bank), at its line.
  assert.match(r.stderr, /rewardsmith sweep: 1 of 2 runs did not complete \(broken\/seed-0: .*error\(s\) found before training/);
  const results = readResults(out);
  const failed = results.runs.find((x) => x.reward === 'broken')!;
  assert.equal(failed.state, 'failed');
  assert.match(failed.message!, /broken\.reward\.ts:\d+:\d+/);
  assert.equal(results.rewards.find((x) => x.reward === 'broken')!.mean_success, null);
  assert.equal(results.rewards.find((x) => x.reward === 'approach-tree.dense')!.rank, 1);
});

function slurmUp(): boolean {
  return spawnSync('squeue', ['-h'], { encoding: 'utf8' }).status === 0;
}

/** The controller's view of a job: `scontrol show job` (this cluster keeps no sacct database). */
function slurmJob(id: string): { state: string; name: string; workDir: string } {
  // COMPLETING is Slurm's passage from running to an end state (the job's processes are being cleaned up after a
  // scancel or an exit): wait, bounded, for the state it ends in.
  for (let tries = 0; ; tries++) {
    const r = spawnSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const job = { state: /JobState=(\S+)/.exec(r.stdout)![1]!, name: /JobName=(\S+)/.exec(r.stdout)![1]!, workDir: /WorkDir=(\S+)/.exec(r.stdout)![1]! };
    if (job.state !== 'COMPLETING' || tries >= 60) return job;
    spawnSync('sleep', ['0.5']);
  }
}

test('sweep --engine slurm: real jobs; Ctrl-C cancels them, a killed sweep is resumed without submitting twice', {
  timeout: 420_000,
  skip: !slurmUp() && process.env.REWARDSMITH_REQUIRE_SLURM !== '1' ? 'no Slurm cluster here (npm run slurm:local brings one up)' : false,
}, async () => {
  const out = path.join(tempDir('rewardsmith-sweep-slurm-'), 'sweep');
  const args = [
    '--task',
    SHORT_TASK,
    '--rewards',
    DENSE,
    SPARSE,
    '--seeds',
    '2',
    ...TINY,
    '--engine',
    'slurm',
    '--time',
    '10:00',
    '--poll',
    '0.5',
    '--out',
    out,
  ];

  // Ctrl-C as soon as a job runs: every job of the sweep is cancelled with scancel.
  const interrupted = await runSweep(args, (e, kill) => e.type === 'sweep_run' && e.state === 'running' && kill('SIGINT'));
  assert.equal(interrupted.code, 130, interrupted.stderr);
  const cancelled = jobIds(interrupted);
  assert.equal(cancelled.size, 4);
  for (const [run, id] of cancelled) {
    const job = slurmJob(id);
    assert.equal(job.name, `rewardsmith:${run}`);
    assert.equal(job.workDir, path.join(out, 'runs', run));
    assert.ok(['CANCELLED', 'COMPLETED'].includes(job.state), `${run}: ${job.state}`);
  }
  assert.ok([...cancelled.values()].some((id) => slurmJob(id).state === 'CANCELLED'));

  // Run again, then kill the sweep itself: its jobs go on in Slurm.
  const killed = await runSweep(args, (e, kill) => e.type === 'sweep_run' && e.state === 'running' && kill('SIGKILL'));
  assert.equal(killed.signal, 'SIGKILL');
  const resubmitted = jobIds(killed);
  for (const [run, id] of resubmitted) assert.notEqual(id, cancelled.get(run), `${run}: a cancelled job cannot be waited for`);

  // And again: the jobs of the killed sweep are waited for, not submitted a second time.
  const resumed = await runSweep(args);
  assert.equal(resumed.code, 0, resumed.stderr);
  for (const [run, id] of resubmitted) assert.equal(jobIds(resumed).get(run), id, `${run} was submitted twice`);
  assertCompleteResults(out, ['approach-tree.dense', 'approach-tree.sparse'], 2);
  const results = readResults(out);
  for (const run of results.runs) {
    assert.equal(slurmJob(run.job_id!).state, 'COMPLETED');
    assert.match(readFileSync(path.join(out, run.run_dir, 'job-exit.json'), 'utf8'), /"exit_code":0/);
  }
});

test('sweep --engine slurm: a job the scheduler holds says why, in the terminal and in its event, until it runs', {
  timeout: 300_000,
  skip: !slurmUp() && process.env.REWARDSMITH_REQUIRE_SLURM !== '1' ? 'no Slurm cluster here (npm run slurm:local brings one up)' : false,
}, async () => {
  const out = path.join(tempDir('rewardsmith-sweep-held-'), 'sweep');
  const args = ['--task', SHORT_TASK, '--rewards', SPARSE, '--seeds', '1', ...TINY, '--engine', 'slurm', '--time', '10:00', '--poll', '0.5', '--out', out];
  // Submitted held (sbatch --hold): it waits in the queue until released, as a job behind a busy cluster's would.
  let released = '';
  let fallback: NodeJS.Timeout | undefined;
  const held = await runSweep([...args, '--sbatch-arg=--hold'], (e) => {
    if (e.type !== 'sweep_run' || e.state !== 'queued' || !e.job_id || released) return;
    // A sweep that never says why still gets its job released (after 20 s), so that it fails here instead of hanging.
    fallback ??= setTimeout(() => spawnSync('scontrol', ['release', e.job_id!]), 20_000);
    if (!e.message) return;
    released = e.message;
    clearTimeout(fallback);
    spawnSync('scontrol', ['release', e.job_id]);
  });
  assert.equal(held.code, 0, held.stderr);
  const jobId = [...jobIds(held).values()][0]!;
  assert.equal(released, `held by its user: \`scontrol release ${jobId}\` lets it run (Slurm: JobHeldUser)`);
  assert.match(held.stderr + held.stdout, new RegExp(`approach-tree\\.sparse/seed-0: queued: held by its user: \`scontrol release ${jobId}\``));
  assertCompleteResults(out, ['approach-tree.sparse'], 1);
  assert.equal(readResults(out).runs[0]!.message ?? null, null, 'the reason is gone once the job ran');
});
