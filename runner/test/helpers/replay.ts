// Replays reward code on a task's probe bank (real simulator episodes) in the real sandbox, for tests that check
// a lint rule's claim about run time against what the runtime really does.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { probeBank, replayBank, type Replay } from '../../src/probe/index';
import { resolveTask } from '../../src/tasks';
import { tempDir } from './tmp';

let dir: string | undefined;
let n = 0;

/** Replays `code` (a whole reward file) on every episode of the task's probe bank. */
export async function replayCode(code: string, taskId = 'approach-cow'): Promise<Replay> {
  dir ??= tempDir('rewardsmith-replay-');
  const file = path.join(dir, `replayed-${n++}.reward.ts`);
  writeFileSync(file, code);
  const task = resolveTask(taskId);
  return replayBank(file, task, probeBank(task));
}

/** Every reward value of the replay's first calls of an episode (step 1 of each). */
export const firstCalls = (r: Replay) => r.traces.map((t) => t.values[0]!);
