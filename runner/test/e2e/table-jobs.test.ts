// `rewardsmith table` runs its cells as jobs on the sweep's engine: as a user runs it (the CLI in a child
// process, real `pretrain` and `train` with tiny budgets), on a real Slurm cluster where one is up (`npm run
// slurm:local`; CI sets REWARDSMITH_REQUIRE_SLURM=1), else on the local engine. The table is SIGKILLed while
// its fine-tunings run; the same command then keeps the finished foundation and waits for the jobs the killed
// table left, never starting a cell twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { cliNodeArgs } from '../helpers/cli-process';
import { tempDir } from '../helpers/tmp';

const ROOT = path.resolve(__dirname, '../../..');

const slurm = spawnSync('squeue', ['-h'], { encoding: 'utf8' }).status === 0 || process.env.REWARDSMITH_REQUIRE_SLURM === '1';

interface TableRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `rewardsmith table ARGS` (its cells' jobs run the same CLI); `act` sees each progress line (stderr) and may signal the process. */
async function runTable(args: string[], act?: (line: string, kill: (s: NodeJS.Signals) => void) => void): Promise<TableRun> {
  const cli = await cliNodeArgs();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cli, 'table', ...args], { cwd: ROOT });
    let stdout = '',
      stderr = '',
      partial = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      partial += d.toString();
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        act?.(partial.slice(0, nl), (s) => child.kill(s));
        partial = partial.slice(nl + 1);
      }
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const jobRecord = (dir: string): { engine: string; job_id: string } | null =>
  existsSync(path.join(dir, 'job.json')) ? (JSON.parse(readFileSync(path.join(dir, 'job.json'), 'utf8')) as { engine: string; job_id: string }) : null;

/** The controller's view of a job: `scontrol show job` (this cluster keeps no sacct database). */
function slurmJob(id: string): { state: string; name: string } {
  const r = spawnSync('scontrol', ['show', 'job', '-o', id], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { state: /JobState=(\S+)/.exec(r.stdout)![1]!, name: /JobName=(\S+)/.exec(r.stdout)![1]! };
}

test(`table --engine ${slurm ? 'slurm' : 'local'}: every cell is a job; a killed table resumes without redoing or doubling any`, {
  timeout: 420_000,
}, async () => {
  const out = path.join(tempDir('rewardsmith-table-jobs-'), 'table');
  const engine = slurm ? ['--engine', 'slurm', '--time', '10:00', '--poll', '0.5'] : ['--engine', 'local', '--parallel', '2', '--poll', '0.2'];
  const args = ['--out', out, '--tasks', 'approach-tree', '--seeds', '7', '--steps', '512', '--envs', '8', '--demos', '1', '--eval-episodes', '2', ...engine];
  const cell = (method: string) => path.join(out, 'approach-tree', 'seed-7', method);

  // Killed as soon as a fine-tuning job is submitted: the foundation has finished, the fine-tunings go on without it.
  const killed = await runTable(args, (line, kill) => /foundation \+ (sparse|dense) .*\((job|pid) \d+\)$/.test(line) && kill('SIGKILL'));
  assert.equal(killed.signal, 'SIGKILL', killed.stderr);
  const foundation = jobRecord(cell('foundation'))!;
  assert.equal(foundation.engine, slurm ? 'slurm' : 'local');
  const pretrained = statSync(path.join(cell('foundation'), 'pretrain.json')).mtimeMs;
  const left = new Map(['sparse', 'dense'].flatMap((m) => (jobRecord(cell(m)) ? [[m, jobRecord(cell(m))!.job_id] as const] : [])));
  assert.ok(left.size >= 1, 'a fine-tuning job was running when the table was killed');

  const resumed = await runTable(args);
  assert.equal(resumed.code, 0, resumed.stderr);
  // The foundation was kept, not trained again; the jobs the killed table left were waited for, not started again.
  assert.equal(jobRecord(cell('foundation'))!.job_id, foundation.job_id);
  assert.equal(statSync(path.join(cell('foundation'), 'pretrain.json')).mtimeMs, pretrained);
  assert.doesNotMatch(resumed.stderr, /: foundation \(1 demonstrations/, 'the foundation was started again');
  for (const [method, id] of left) assert.equal(jobRecord(cell(method))!.job_id, id, `${method} was started twice`);
  // Each fine-tuning trains the bundled reward's text as the table read it, or nothing (train --reward-sha256).
  for (const method of ['sparse', 'dense']) {
    const hash = createHash('sha256')
      .update(readFileSync(path.join(ROOT, 'runner/rewards', `approach-tree.${method}.reward.ts`)))
      .digest('hex');
    assert.ok(readFileSync(path.join(cell(method), 'job.sh'), 'utf8').includes(`'--reward-sha256' '${hash}'`), `${method}'s job pins its reward text`);
  }
  for (const method of ['foundation', 'sparse', 'dense']) {
    assert.match(readFileSync(path.join(cell(method), 'job-exit.json'), 'utf8'), /"exit_code":0/, method);
    if (slurm) {
      const job = slurmJob(jobRecord(cell(method))!.job_id);
      assert.equal(job.name, `rewardsmith:approach-tree/seed-7/${method}`);
      assert.equal(job.state, 'COMPLETED', method);
    }
  }
  assert.match(
    resumed.stdout,
    /^\| approach-tree \| [\d.]+ \[[\d.]+, [\d.]+\] \| [\d.]+ \[[\d.]+, [\d.]+\] \| [\d.]+ \[[\d.]+, [\d.]+\] \| 4\.3 \| 73\.4 \|$/m,
  );
  assert.match(
    resumed.stdout,
    /Per seed: approach-tree foundation seed 7: \d\/2; approach-tree foundation \+ sparse seed 7: \d\/2; approach-tree foundation \+ dense seed 7: \d\/2\./,
  );
  assert.ok(existsSync(path.join(out, 'table.csv')) && existsSync(path.join(out, 'table.svg')));
});
