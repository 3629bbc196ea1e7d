// Reward probes: judgments grounded in execution before any training. A reward file is replayed on its task's
// probe bank (bank.ts: real simulator episodes of success and of failure modes) in the real sandbox with
// training's semantics (replay.ts), and what the replay shows becomes located findings (properties.ts).
// `rewardsmith lint`, `train`'s check, the improvement loop and the language server all call `probeReward`.
import { readFileSync } from 'node:fs';
import { isPythonFile, RewardError } from '../reward/index';
import type { TaskSpec } from '../tasks';
import { probeBankAsync, type ProbeBank } from './bank';
import { checkProperties, type ProbeFinding } from './properties';
import { replayBank, type Replay } from './replay';

export { BEHAVIOURS, bankFile, probeBank, probeBankAsync, recordBank, PROBE_STEPS, type Behaviour, type ProbeBank, type ProbeEpisode } from './bank';
export { PROPERTIES, type ProbeFinding } from './properties';
export { replayBank, type Replay } from './replay';

export interface ProbeResult {
  findings: ProbeFinding[];
  /** Episodes and reward calls of the replay. */
  episodes: number;
  calls: number;
  /** Wall time of the replay and the properties (not the bank's recording), ms. */
  ms: number;
  /** Why the file was not probed (see notProbedReason); absent when it was. */
  notProbed?: string;
}

/**
 * Why a reward file cannot be probed at all, or undefined: the replay counts statements in the compiled
 * JavaScript (coverage), which Python rewards do not have, so they are linted and trained but not probed.
 */
export function notProbedReason(file: string): string | undefined {
  return isPythonFile(file) ? 'probes replay TypeScript and JavaScript rewards only (Python rewards are linted, not probed)' : undefined;
}

/**
 * Probes a reward file (or `source`, its unsaved text) on the task's bank. A file that does not compile or
 * breaks the contract is not probed (no findings: lint reports it). The bank is recorded on first use.
 */
export async function probeReward(file: string, task: TaskSpec, options: { source?: string; bank?: ProbeBank } = {}): Promise<ProbeResult> {
  const notProbed = notProbedReason(file);
  if (notProbed) return { findings: [], episodes: 0, calls: 0, ms: 0, notProbed };
  const bank = options.bank ?? (await probeBankAsync(task));
  const start = performance.now();
  let replay: Replay;
  try {
    replay = await replayBank(file, task, bank, options.source);
  } catch (err) {
    if (err instanceof RewardError && (err.kind === 'compile' || err.kind === 'contract'))
      return { findings: [], episodes: 0, calls: 0, ms: performance.now() - start };
    throw err;
  }
  const source = options.source ?? readFileSync(file, 'utf8');
  const findings = checkProperties(replay, { task, bank, source });
  return { findings, episodes: bank.episodes.length, calls: replay.calls, ms: performance.now() - start };
}
