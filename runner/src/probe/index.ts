// Reward probes: judgments grounded in execution before any training. A reward file is replayed on its task's
// probe bank (bank.ts: real simulator episodes of success and of failure modes) in the real sandbox with
// training's semantics (replay.ts), and what the replay shows becomes located findings (properties.ts).
// `rewardsmith lint`, `train`'s check, the improvement loop and the language server all call `probeReward`.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { RewardError } from '../reward/index';
import type { TaskSpec } from '../tasks';
import { bankFile, probeBankAsync, type ProbeBank } from './bank';
import { checkProperties, type ProbeFinding } from './properties';
import { rewardProfile, type LineProfile } from './profile';
import { replayBank, type Replay } from './replay';

export {
  BEHAVIOURS,
  bankFile,
  continuesPastProbe,
  probeBank,
  probeBankAsync,
  recordBank,
  PROBE_STEPS,
  type Behaviour,
  type ProbeBank,
  type ProbeEpisode,
} from './bank';
export { PROPERTIES, type ProbeFinding } from './properties';
export { replayBank, type Replay } from './replay';
export { profileText, type LineProfile } from './profile';

export interface ProbeResult {
  findings: ProbeFinding[];
  /** The reward profile: per deciding line, how often it ran and its share of the pay, successes vs failure modes. */
  profile: LineProfile[];
  /** Episodes and reward calls of the replay. */
  episodes: number;
  calls: number;
  /** Wall time of the replay and the properties (not the bank's recording), ms. */
  ms: number;
}

/** The last probes' results by task and text: the loop's designer and its screen probe the same draft once. */
const recent = new Map<string, ProbeResult>();
const RECENT_RESULTS = 8;

/**
 * Probes a reward file (or `source`, its unsaved text) on the task's bank. A file that does not compile or
 * breaks the contract is not probed (no findings: lint reports it). The bank is recorded on first use. The same
 * text on the same bank again gives the same result, from memory.
 */
export async function probeReward(file: string, task: TaskSpec, options: { source?: string; bank?: ProbeBank } = {}): Promise<ProbeResult> {
  const text = options.source ?? readFileSync(file, 'utf8');
  const key = options.bank ? undefined : `${bankFile(task)}\0${createHash('sha256').update(text).digest('hex')}`;
  const known = key === undefined ? undefined : recent.get(key);
  if (known) return known;
  const result = await probeUncached(file, task, { source: text, bank: options.bank });
  if (key !== undefined && !result.findings.some((f) => f.code === 'probe-not-run')) {
    recent.set(key, result);
    for (const old of recent.keys()) if (recent.size > RECENT_RESULTS) recent.delete(old);
  }
  return result;
}

async function probeUncached(file: string, task: TaskSpec, options: { source: string; bank?: ProbeBank }): Promise<ProbeResult> {
  const bank = options.bank ?? (await probeBankAsync(task));
  const start = performance.now();
  let replay: Replay;
  try {
    replay = await replayBank(file, task, bank, options.source);
  } catch (err) {
    if (err instanceof RewardError && (err.kind === 'compile' || err.kind === 'contract'))
      return { findings: [], profile: [], episodes: 0, calls: 0, ms: performance.now() - start };
    throw err;
  }
  const findings = checkProperties(replay, { task, bank, source: options.source });
  return { findings, profile: rewardProfile(replay, bank), episodes: bank.episodes.length, calls: replay.calls, ms: performance.now() - start };
}
