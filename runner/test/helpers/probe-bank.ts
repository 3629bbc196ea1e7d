// A test that gives a process a fresh cache folder (an editor's own XDG_CACHE_HOME) hands it the task's probe
// bank from this machine's cache, recorded there once if need be, so that the process does not record it again.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { bankFile, probeBank } from '../../src/probe/index';
import { resolveTask } from '../../src/tasks';

/** Copies the probe bank of task `id` into the cache folder `cacheHome` (as XDG_CACHE_HOME would name it). */
export function seedProbeBank(cacheHome: string, id: string): void {
  const task = resolveTask(id);
  probeBank(task);
  const from = bankFile(task);
  const saved = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cacheHome;
  let to: string;
  try {
    to = bankFile(task);
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  }
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(from, to);
}
