// The reward profile the editor shows above a reward's lines (CodeLens): for each statement that runs on some
// probe calls but not on all, how often it ran on the successful episodes and on the failure modes, and the share
// of each one's pay (the positive rewards) earned in the calls it ran in. From the replay's coverage counts.
import { percentText } from '../stats';
import type { ProbeBank } from './bank';
import { statementTotals, type Replay } from './replay';

export interface ProfileShare {
  /** Share of the calls in which the line ran. */
  ran: number;
  /** Share of the pay (sum of positive rewards) earned in calls in which it ran. */
  pay: number;
  calls: number;
}

export interface LineProfile {
  /** 1-based. */
  line: number;
  column: number;
  successes: ProfileShare;
  failureModes: ProfileShare;
}

/** Envs of the replay whose episodes are the teacher's successes, and those of the failure modes (not random, not succeeded). */
function groups(replay: Replay, bank: ProbeBank): { successes: number[]; failureModes: number[] } {
  const successes: number[] = [];
  const failureModes: number[] = [];
  replay.traces.forEach((t, env) => {
    const e = bank.episodes[t.episode]!;
    if (e.behaviour === 'teacher') successes.push(env);
    else if (e.behaviour !== 'random' && !e.success) failureModes.push(env);
  });
  return { successes, failureModes };
}

function share(replay: Replay, envs: number[], k: number): ProfileShare {
  const { runs, paidSum: paid } = statementTotals(replay.coverage!, envs, k);
  let calls = 0,
    pay = 0;
  for (const env of envs)
    for (const v of replay.traces[env]!.values) {
      calls++;
      if (v > 0) pay += v;
    }
  return { ran: calls > 0 ? runs / calls : 0, pay: pay > 0 ? paid / pay : 0, calls };
}

/**
 * One entry per line whose innermost statement is conditional on the bank (ran on some probe calls, not on all):
 * the lines where the reward decides something. Empty when the replay failed (no coverage).
 */
export function rewardProfile(replay: Replay, bank: ProbeBank): LineProfile[] {
  const cov = replay.coverage;
  if (!cov || replay.failure) return [];
  const { successes, failureModes } = groups(replay, bank);
  const all = replay.traces.map((_, env) => env);
  const totalCalls = replay.traces.reduce((n, t) => n + t.values.length, 0);
  // The innermost statement starting on each line: statements are numbered parents first.
  const byLine = new Map<number, number>();
  replay.compiled.statements.forEach((s, k) => byLine.set(s.line, k));
  const profile: LineProfile[] = [];
  for (const [line, k] of byLine) {
    let runs = 0;
    for (const env of all) runs += cov.runs[env * cov.statements + k]!;
    if (runs === 0 || runs >= totalCalls) continue;
    profile.push({ line, column: replay.compiled.statements[k]!.column, successes: share(replay, successes, k), failureModes: share(replay, failureModes, k) });
  }
  return profile.sort((a, b) => a.line - b.line);
}

/** A share as the lens shows it: a line that ran once in 300 calls is not 0 %. */
const percent = (x: number) => (x > 0 && x < 0.005 ? '<1 %' : percentText(x, 0));

/** A profile line as the CodeLens shows it. */
export function profileText(p: LineProfile): string {
  const part = (name: string, s: ProfileShare) =>
    s.calls === 0 ? `${name}: none probed` : `${name}: ran ${percent(s.ran)} of calls, ${percent(s.pay)} of pay`;
  return `${part('successes', p.successes)} · ${part('failure modes', p.failureModes)}`;
}
