// A job's log (job.log) in a run folder that may be someone else's: neither engine writes through a link
// planted at its name, and reading the log back neither follows a link out of the folder nor waits on a FIFO.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { JOB_FILES, SlurmEngine, type Job } from '../src/sweep/engine';
import { tempDir } from './helpers/tmp';

const slurmUp = spawnSync('squeue', ['-h'], { encoding: 'utf8' }).status === 0;

/** A folder with job.log linked to a file outside it, and a job that only prints a line (no training). */
function plantedLog(): { job: Job; outside: string } {
  const root = tempDir('rs-engine-log-');
  const outside = path.join(root, 'outside.txt');
  writeFileSync(outside, 'mine\n');
  const runDir = path.join(root, 'run');
  const job: Job = { name: 'planted-log', runDir, start: ['train'] };
  spawnSync('mkdir', [runDir]);
  symlinkSync(outside, path.join(runDir, JOB_FILES.log));
  return { job, outside };
}

test('slurm: a job.log planted as a link in the run folder is refused before submitting, nothing written through it', {
  timeout: 60_000,
  skip: !slurmUp && process.env.REWARDSMITH_REQUIRE_SLURM !== '1' ? 'no Slurm cluster here (npm run slurm:local brings one up)' : false,
}, async () => {
  const { job, outside } = plantedLog();
  // The job script runs `echo written-through train`: what it prints is what slurmd writes to --output.
  const engine = new SlurmEngine({ time: '1:00', pollMs: 200, runner: { node: '/bin/echo', cli: 'written-through' } });
  const outcome = await engine.run(job).then(
    (result) => result,
    (err: Error) => err,
  );
  assert.equal(readFileSync(outside, 'utf8'), 'mine\n', 'written through the link');
  assert.ok(outcome instanceof Error, `not refused: ${JSON.stringify(outcome)}`);
  assert.equal(outcome.name, 'UnsafePathError');
  assert.ok(outcome.message.startsWith(`${path.join(job.runDir, JOB_FILES.log)} is a symbolic link`), outcome.message);
  assert.ok(!existsSync(path.join(job.runDir, JOB_FILES.record)), 'no job was submitted');
});

test('local: a FIFO planted at job.log is refused, not waited on', { timeout: 60_000 }, () => {
  const { job } = plantedLog();
  const log = path.join(job.runDir, JOB_FILES.log);
  spawnSync('rm', [log]);
  assert.equal(spawnSync('mkfifo', [log]).status, 0);
  // In a child process with a time limit: a FIFO opened for writing with no reader blocks the whole process.
  const script = `const { LocalEngine } = require(${JSON.stringify(path.join(__dirname, '../src/sweep/engine.ts'))});
    new LocalEngine({ runner: { node: '/bin/echo', cli: 'x' } }).run(${JSON.stringify(job)}).then(
      (r) => console.log('resolved', JSON.stringify(r)),
      (e) => console.log(e.name + ': ' + e.message));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.signal, null, 'waited on the FIFO (killed after 30 s)');
  assert.equal(r.stdout.trim(), `UnsafePathError: ${log} is not a plain file (a FIFO or a socket); refusing to write to it, nothing was written`, r.stderr);
});

test("slurm: a link swapped in at job.log, or another job.sh, while the job waits in the queue is not written through or run; the job's own output reaches its job.log", {
  timeout: 120_000,
  skip: !slurmUp && process.env.REWARDSMITH_REQUIRE_SLURM !== '1' ? 'no Slurm cluster here (npm run slurm:local brings one up)' : false,
}, async () => {
  const root = tempDir('rs-engine-log-swap-');
  const outside = path.join(root, 'outside.txt');
  writeFileSync(outside, 'mine\n');
  // Held in the queue (sbatch --hold) until `swap` has changed the folder, then released.
  const held = new SlurmEngine({ time: '1:00', pollMs: 200, extra: ['--hold'] });
  const runHeld = async (job: Job, swap: () => void) => {
    let released = false;
    const result = await held.run(job, {
      onState: (state, jobId) => {
        if (state !== 'queued' || !jobId || released) return;
        released = true;
        swap();
        execFileSync('scontrol', ['release', jobId]);
      },
    });
    assert.ok(released, 'the job was never queued');
    return result;
  };
  const linked: Job = { name: 'swapped-log', runDir: path.join(root, 'swapped-log'), start: ['lint', '--help'] };
  const log = path.join(linked.runDir, JOB_FILES.log);
  const result = await runHeld(linked, () => {
    rmSync(log);
    symlinkSync(outside, log);
  });
  assert.equal(readFileSync(outside, 'utf8'), 'mine\n', 'written through the link');
  assert.equal(result.state, 'failed');
  assert.ok(result.message?.startsWith(`${log}: `), String(result.message));
  // Another job.sh put in place while the job waits: the script submitted runs, its output in job.log.
  const ran = path.join(root, 'ran.txt');
  const script: Job = { name: 'swapped-script', runDir: path.join(root, 'swapped-script'), start: ['lint', '--help'] };
  await runHeld(script, () => writeFileSync(path.join(script.runDir, JOB_FILES.script), `#!/bin/bash\necho swapped > ${ran}\n`));
  assert.ok(!existsSync(ran), 'the job.sh put in place while the job waited was run');
  assert.match(readFileSync(path.join(script.runDir, JOB_FILES.log), 'utf8'), /rewardsmith lint/);
});
