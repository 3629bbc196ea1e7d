// Cancelling a local job signals its process group, named by the job script's pid: only while that pid is
// still this folder's job script. Once the script has exited, the number can lead another program's group
// (another job's script, started a moment later), and a late cancel must not stop it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { type Job, LocalEngine } from '../src/sweep/engine';
import { tempDir } from './helpers/tmp';

class CancellingEngine extends LocalEngine {
  cancelNow(jobId: string, job: Job): Promise<void> {
    return this.cancel(jobId, job);
  }
}

/** Whether the process runs (a zombie, exited but not yet reaped by its parent, does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

test('local engine: a cancel for a job whose script has exited leaves the process group now under its number alone', async () => {
  const root = tempDir('rs-engine-cancel-');
  const job: Job = { name: 'gone', runDir: path.join(root, 'run'), start: [] };
  // Another program leading its own group, standing in for whatever the old pid now names.
  const other = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  try {
    await new CancellingEngine({ pollMs: 50 }).cancelNow(String(other.pid), job);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(alive(other.pid!), 'a process that is not the job script was signalled');
  } finally {
    other.kill('SIGKILL');
  }
});

test('local engine: aborting a running job stops its script and the command under it', async () => {
  const root = tempDir('rs-engine-cancel-');
  const job: Job = { name: 'sleeper', runDir: path.join(root, 'run'), start: [] };
  // The job's command is `/bin/sleep 30`: the engine runs `<node> <cli> <args…>`.
  const engine = new LocalEngine({ pollMs: 50, runner: { node: '/bin/sleep', cli: '30' } });
  const controller = new AbortController();
  let pid: number | null = null;
  const result = await engine.run(job, {
    signal: controller.signal,
    onState: (state, jobId) => {
      if (state === 'running' && pid === null) {
        pid = Number(jobId);
        controller.abort();
      }
    },
  });
  assert.equal(result.state, 'cancelled');
  assert.ok(pid !== null && !alive(pid), 'the job script still runs');
});
