// The improvement loop's probe screen: every candidate reward and every analyzer patch set is probed on the
// task's bank before it is trained. A reward with an error is not trained (a designer's candidate goes back to
// the designer with it, as a run-time error would); nor is a patch set that makes the reward pay a failure mode
// more than success (an incentive warning the reward it patches did not have). Each is a training run saved. The
// verdict is a file beside the candidate (PROBE_SCREEN_FILE), so a resumed loop neither probes nor counts it twice.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { writeAtomic } from '../files';
import { checkReward, formatDiagnostic } from '../lint/check';
import { readRecordObject, RunRecordError } from '../records';
import type { TaskSpec } from '../tasks';

export const PROBE_SCREEN_FILE = 'probe-screen.json';

interface ScreenVerdict {
  /** Why the reward was not trained (its errors and incentive warnings, one per line), or null when it passed. */
  refused: string | null;
}

/** Errors and incentive warnings of a reward, as `file:line:col: severity code: message` lines. */
async function blockers(file: string, text: string, task: TaskSpec): Promise<{ errors: string[]; incentives: string[] }> {
  const { diagnostics } = await checkReward(file, text, task);
  const line = (d: (typeof diagnostics)[number]) => formatDiagnostic(path.basename(file), d);
  return {
    errors: diagnostics.filter((d) => d.severity === 'error').map(line),
    incentives: diagnostics.filter((d) => d.code === 'probe-incentive').map(line),
  };
}

/**
 * Probes the reward (`file` holding `text`, as the loop wrote or checked it) before the loop trains it; returns why it must not train, or null. `baseline` is the
 * reward a patch set changes: incentive warnings beyond its own count refuse the patch. Without one, errors alone
 * refuse (a designer's reward is judged by its training run; its warnings are the critic's and the analyzer's to raise).
 */
export async function screenReward(
  { file, text }: { file: string; text: string },
  task: TaskSpec,
  baseline?: { file: string; text: string },
): Promise<string | null> {
  const verdictFile = path.join(path.dirname(file), PROBE_SCREEN_FILE);
  if (existsSync(verdictFile)) return readVerdict(verdictFile).refused;
  const found = await blockers(file, text, task);
  const before = baseline ? (await blockers(baseline.file, baseline.text, task)).incentives.length : Number.POSITIVE_INFINITY;
  const reasons = [...found.errors, ...(found.incentives.length > before ? found.incentives : [])];
  const refused = reasons.length > 0 ? `the probes found, before training:\n${reasons.join('\n')}` : null;
  writeAtomic(path.dirname(file), verdictFile, `${JSON.stringify({ refused } satisfies ScreenVerdict, null, 2)}\n`);
  return refused;
}

/** A saved verdict, checked: a damaged one is named rather than read as "not refused". */
function readVerdict(file: string): ScreenVerdict {
  const { refused } = readRecordObject(file, "the probes' verdict");
  if (typeof refused !== 'string' && refused !== null)
    throw new RunRecordError(`${file}: the probes' verdict says whether they refused the reward (refused: a reason or null); this one does not`);
  return { refused };
}

/** Training runs the probe screen saved in an experiment folder: the candidates it refused. */
export function runsSavedByProbes(out: string): number {
  let saved = 0;
  const walk = (dir: string, depth: number) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (name === PROBE_SCREEN_FILE && readVerdict(p).refused !== null) saved++;
      // iteration-N/candidate-K/attempt-J/: run folders below are not searched.
      else if (depth < 3 && name !== 'run' && statSync(p).isDirectory()) walk(p, depth + 1);
    }
  };
  if (existsSync(out)) walk(out, 0);
  return saved;
}
