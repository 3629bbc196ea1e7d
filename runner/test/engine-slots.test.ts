// The engine's slots: jobs beyond its capacity wait for a slot on the command's abort signal. A table queues its
// 27 cells on one signal; each waiting job used to add a listener of its own, and Node printed
// MaxListenersExceededWarning on every table run.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Engine, JOB_FILES, type Job } from '../src/sweep/engine';
import { RUN_FILES } from '../src/records';

/** An engine whose jobs finish as they are submitted (what they wrote is all `run` reads), one at a time. */
class InstantEngine extends Engine {
  readonly kind = 'local' as const;
  protected readonly capacity = 1;
  protected readonly pollMs = 1;
  running = 0;
  mostAtOnce = 0;
  protected async submit(job: Job): Promise<string> {
    this.mostAtOnce = Math.max(this.mostAtOnce, ++this.running);
    await new Promise((r) => setTimeout(r, 2));
    writeFileSync(path.join(job.runDir, RUN_FILES.summary), '{}\n');
    writeFileSync(path.join(job.runDir, JOB_FILES.exit), JSON.stringify({ exit_code: 0, started: 0, ended: 0, host: 'here' }));
    this.running--;
    return '1';
  }
  protected async status(): Promise<null> {
    return null;
  }
  protected async cancel(): Promise<void> {}
}

test('engine: 20 jobs on one signal through one slot run one at a time and put one abort listener on it, not one per waiting job', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rs-slots-'));
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const engine = new InstantEngine();
    const controller = new AbortController();
    const jobs = Array.from({ length: 20 }, (_, i) => ({ name: `job-${i}`, runDir: path.join(dir, `job-${i}`), start: ['train'] }));
    const results = await Promise.all(jobs.map((job) => engine.run(job, { signal: controller.signal })));
    assert.deepEqual(
      results.map((r) => r.state),
      jobs.map(() => 'completed'),
    );
    assert.equal(engine.mostAtOnce, 1);
    assert.ok(getEventListeners(controller.signal, 'abort').length <= 1);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('engine: aborting while jobs wait for a slot cancels the waiting ones and the next job still gets the slot', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rs-slots-'));
  try {
    const engine = new InstantEngine();
    const controller = new AbortController();
    const waiting = Array.from({ length: 5 }, (_, i) =>
      engine.run({ name: `w-${i}`, runDir: path.join(dir, `w-${i}`), start: ['train'] }, { signal: controller.signal }),
    );
    controller.abort();
    const states = (await Promise.all(waiting)).map((r) => r.state);
    assert.ok(
      states.slice(1).every((s) => s === 'cancelled'),
      states.join(' '),
    );
    // A job after the abort, on no signal, must not wait forever behind the cancelled waiters.
    const after = await engine.run({ name: 'after', runDir: path.join(dir, 'after'), start: ['train'] });
    assert.equal(after.state, 'completed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
