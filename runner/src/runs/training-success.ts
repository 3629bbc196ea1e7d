// Training success that means what it says. Each env plays its episodes one after another; counting the last
// N *finished* episodes favours short ones (a 150-step success finishes thirteen times while a 2,000-step
// time-out runs once), so on a task where successes are short the curve showed 30 % while held-out
// evaluation gave 1 %. Here an episode belongs to the window its *first frame* lies in and is counted when it
// ends; a window is reported only once every episode that started in it has ended. Whether an episode is
// in the window then depends on when it started (on earlier episodes), never on its own length or outcome.
import { checkpointHeldOut, type BelowStart, type GeneralisationGap, type RateRecord, type TrainingSuccessRecord } from '../records';
import { compareRates, formatDifference, formatRate, wilson } from '../stats';

/** Episodes behind one estimate: about the most recent this many complete starts. */
export const TRAINING_SUCCESS_WINDOW = 100;

interface EndedEpisode {
  /** Frame counter when the episode's first step was taken. */
  start: number;
  success: boolean;
  ret: number;
}

/** What a checkpoint keeps so a resumed run continues the same estimate. */
export interface TrainingSuccessState {
  starts: number[];
  ended: EndedEpisode[];
}

export class TrainingSuccess {
  /** Start frame of each env's episode in progress. */
  private readonly starts: number[];
  /** Ended episodes, oldest start first, pruned to what the window can still use. */
  private ended: EndedEpisode[];

  constructor(
    numEnvs: number,
    private readonly window = TRAINING_SUCCESS_WINDOW,
    state?: TrainingSuccessState,
  ) {
    this.starts = state?.starts.slice() ?? new Array<number>(numEnvs).fill(0);
    if (this.starts.length !== numEnvs) throw new Error(`training success state has ${this.starts.length} envs, the run ${numEnvs}`);
    this.ended = state?.ended.slice() ?? [];
  }

  /** Env `env`'s episode ended after `frame` frames in total; its next episode starts at `frame`. */
  end(env: number, frame: number, success: boolean, ret: number): void {
    const ep = { start: this.starts[env]!, success, ret };
    // Keep the list ordered by start (episodes of different envs end out of start order).
    let i = this.ended.length;
    while (i > 0 && this.ended[i - 1]!.start > ep.start) i--;
    this.ended.splice(i, 0, ep);
    this.starts[env] = frame;
    this.prune();
  }

  /** Every episode that started before this frame has ended. */
  private horizon(): number {
    return Math.min(...this.starts);
  }

  private complete(): EndedEpisode[] {
    const h = this.horizon();
    let k = this.ended.length;
    while (k > 0 && this.ended[k - 1]!.start >= h) k--;
    const all = this.ended.slice(0, k);
    if (all.length <= this.window) return all;
    // The most recent `window` starts, widened to every episode sharing the boundary's start frame (envs that
    // started together are in or out together).
    let from = all.length - this.window;
    while (from > 0 && all[from - 1]!.start === all[from]!.start) from--;
    return all.slice(from);
  }

  private prune(): void {
    const keep = this.complete();
    if (keep.length === 0) return;
    const first = keep[0]!.start;
    let drop = 0;
    while (drop < this.ended.length && this.ended[drop]!.start < first) drop++;
    if (drop > 0) this.ended = this.ended.slice(drop);
  }

  /** The estimate over the latest window whose episodes have all ended; n = 0 (rate null) before one has. */
  estimate(): TrainingSuccessRecord {
    const eps = this.complete();
    const successes = eps.filter((e) => e.success).length;
    const w = wilson(successes, eps.length);
    return {
      count: successes,
      n: eps.length,
      rate: eps.length > 0 ? w.rate : null,
      ci95: w.ci95,
      started_from_frame: eps[0]?.start ?? 0,
      started_to_frame: eps.length > 0 ? this.horizon() : 0,
      mean_return: eps.length > 0 ? eps.reduce((s, e) => s + e.ret, 0) / eps.length : null,
    };
  }

  state(): TrainingSuccessState {
    return { starts: this.starts.slice(), ended: this.ended.slice() };
  }
}

/**
 * The warning when training and held-out success differ: the 95 % interval of their difference (Newcombe's,
 * two-sided, stats.ts `compareRates`) excludes 0, so the policy does not do on new worlds what it did on its
 * training worlds (or the training figure is not comparable). Null otherwise.
 */
export function generalisationGap(train: RateRecord, heldOut: RateRecord, episodeSteps?: { train: number; heldOut: number }): GeneralisationGap | null {
  if (train.n === 0 || heldOut.n === 0) return null;
  const difference = compareRates(heldOut, train, 0.025);
  if (difference.verdict === 'no difference') return null;
  const direction = difference.verdict === 'worse' ? 'lower' : 'higher';
  const figures = `held-out success ${formatRate(heldOut)} is ${direction} than training success ${formatRate(train)}: ${formatDifference(difference)}`;
  // Training episodes cut shorter than held-out ones (train --train-episode-steps) succeed less for that alone:
  // the difference is named, but not as the policy's failure to generalise.
  const shorter = episodeSteps !== undefined && episodeSteps.train < episodeSteps.heldOut;
  return {
    train: { count: train.count, n: train.n, rate: train.rate, ci95: train.ci95 },
    held_out: heldOut,
    message: shorter
      ? `Not a generalisation gap: training episodes ended at ${episodeSteps.train.toLocaleString('en-US')} steps and held-out ones at ${episodeSteps.heldOut.toLocaleString('en-US')}, so ${figures}.`
      : `Generalisation gap: ${figures}.`,
  };
}

/**
 * The warning when a run fine-tuned from `checkpoint` ends below where it started: its held-out success is worse
 * than the checkpoint's own held-out evaluation by the decision rule (one-sided 5 %, stats.ts `compareRates`).
 * Null otherwise, or when the checkpoint was never evaluated.
 */
export function belowStart(heldOut: RateRecord, checkpoint: string): BelowStart | null {
  const start = checkpointHeldOut(checkpoint);
  if (!start || heldOut.n === 0) return null;
  const difference = compareRates(heldOut, start);
  if (difference.verdict !== 'worse') return null;
  return {
    checkpoint,
    start,
    difference,
    message: `held-out success ${formatRate(heldOut)} is below its starting policy's ${formatRate(start)} (${checkpoint}): ${formatDifference(difference)}; fine-tuning on this reward lost ground.`,
  };
}
