// The rollout collector: cleanrl's `for step in range(num_steps)`. Each step the policy acts on the envs'
// features, the envs step, the reward sandbox scores the new observations, and the step's features, action,
// log-probability, value, reward and done go into the buffer PPO learns from. Between rollouts it keeps what
// outlives one: the features the envs stand at, each env's running return, which world each env is in.
import type { StepObservation } from '../schema';
import type { EpisodeRecord } from '../records';
import type { StepInfo, VecEnv, VecStepResult } from '../env/types';
import type { RewardSandbox } from '../reward/index';
import { nextEpisodeSeed } from '../seeds';
import { sampleActions, type PolicyNetwork, type Rng } from '../ppo/policy';
import type { RolloutBuffer } from '../ppo/ppo';
import { measured, measuredAsync, type PhaseProfile } from '../ppo/profile';
import { EpisodeRecorder } from './recorder';
import type { TrainingSuccess } from './training-success';

/** What a rollout leaves besides the filled buffer. */
export interface Rollout {
  /** The episodes that ended in it, in the order they ended. */
  finished: { ret: number; success: boolean }[];
  /** The value of the states the envs stand in after the last step (GAE bootstraps from them). */
  lastValues: Float32Array;
}

export interface CollectorParts {
  env: VecEnv;
  sandbox: RewardSandbox;
  net: PolicyNetwork;
  numActions: number;
  rng: Rng;
  buffer: RolloutBuffer;
  /** The run's counters the collector advances: frames stepped, and the seed of each env's current world. */
  progress: { frames: number; envSeeds: number[] };
  /** Every world trained on (an evaluation never uses one). */
  trainingSeeds: Set<number>;
  successCurve: TrainingSuccess;
  /** Training episodes recorded in the analyzer's format, when someone analyses them while training runs. */
  recent: RecentEpisodes | null;
  profile?: PhaseProfile;
}

export class RolloutCollector {
  private features: Float32Array;
  private readonly episodeReturn: Float64Array;

  private constructor(
    private readonly p: CollectorParts,
    features: Float32Array,
  ) {
    this.features = features;
    this.episodeReturn = new Float64Array(p.env.numEnvs);
  }

  /** Puts every env on its current world (a resumed run restarts those worlds) and begins its episode. */
  static async start(p: CollectorParts): Promise<RolloutCollector> {
    const n = p.env.numEnvs;
    const reset = await p.env.reset(p.progress.envSeeds);
    await p.sandbox.beginEpisodes(
      Array.from({ length: n }, (_, i) => i),
      reset.obs,
    );
    reset.obs.forEach((o, i) => p.recent?.begin(i, p.progress.envSeeds[i]!, o));
    return new RolloutCollector(p, reset.features);
  }

  /** The mean return so far of the episodes still running (the curve's figure while none has ended). */
  unfinishedReturn(): number {
    return this.episodeReturn.reduce((s, r) => s + r, 0) / this.episodeReturn.length;
  }

  /** Steps every env `steps` times, filling the buffer's first `steps` rows. */
  async collect(steps: number): Promise<Rollout> {
    const { env, sandbox, net, numActions, rng, buffer, progress, profile } = this.p;
    const n = env.numEnvs;
    const finished: Rollout['finished'] = [];
    let evaluated = measured(profile, 'act: policy forward', () => net.evaluate(this.features, n));
    for (let t = 0; t < steps; t++) {
      const { probs, values } = evaluated;
      const row = t * n;
      const actions = measured(profile, 'act: sample + buffer', () => {
        const actions = sampleActions(probs, n, numActions, rng);
        buffer.features.set(this.features, row * env.featureSize);
        for (let i = 0; i < n; i++) {
          buffer.actions[row + i] = actions[i]!;
          buffer.logProbs[row + i] = Math.log(Math.max(probs[i * numActions + actions[i]!]!, 1e-8));
          buffer.values[row + i] = values[i]!;
        }
        return actions;
      });
      const res = await measuredAsync(profile, 'env step (wait for workers)', () => env.step(actions));
      const doneEnvs: number[] = [],
        firstObs: StepObservation[] = [];
      res.info.forEach((info, i) => {
        if (!info.done) return;
        doneEnvs.push(i);
        firstObs.push(res.resetObs[i]!);
      });
      // The reward host works while this thread evaluates the policy on the next features.
      const rewardsPending = sandbox.step(res.obs).then(async (r) => {
        await sandbox.beginEpisodes(doneEnvs, firstObs);
        return r;
      });
      rewardsPending.catch(() => {});
      this.features = res.features;
      evaluated = measured(profile, 'act: policy forward', () => net.evaluate(this.features, n));
      const truncatedValues = measured(profile, 'act: policy forward', () => this.truncatedValues(res));
      const rewards = await measuredAsync(profile, 'reward (wait for sandbox)', () => rewardsPending);
      for (let i = 0; i < n; i++) {
        buffer.rewards[row + i] = rewards[i]!;
        buffer.dones[row + i] = res.info[i]!.done ? 1 : 0;
        buffer.truncated[row + i] = res.info[i]!.truncated ? 1 : 0;
        buffer.truncatedValues[row + i] = truncatedValues?.[i] ?? 0;
        this.episodeReturn[i] += rewards[i]!;
        this.p.recent?.step(i, actions[i]!, rewards[i]!, res.obs[i]!, res.info[i]!);
      }
      for (const i of doneEnvs) {
        const nextSeed = nextEpisodeSeed(progress.envSeeds[i]!, i);
        this.p.recent?.finish(i, res.obs[i]!, res.info[i]!, nextSeed, res.resetObs[i]!);
        finished.push({ ret: this.episodeReturn[i]!, success: res.info[i]!.success });
        this.p.successCurve.end(i, progress.frames + n, res.info[i]!.success, this.episodeReturn[i]!);
        this.episodeReturn[i] = 0;
        progress.envSeeds[i] = nextSeed;
        this.p.trainingSeeds.add(nextSeed);
      }
      buffer.length = t + 1;
      progress.frames += n;
    }
    return { finished, lastValues: evaluated.values };
  }

  /** The values of the last states of the episodes the time limit cut in this step (null when none was cut). */
  private truncatedValues(res: VecStepResult): Float32Array | null {
    if (!res.terminalFeatures.some((x) => x)) return null;
    const f = this.p.env.featureSize;
    // A whole batch, the cut rows replaced: the network keeps its batch size (its workspaces are per size).
    const x = res.features.slice();
    res.terminalFeatures.forEach((t, i) => t && x.set(t, i * f));
    return this.p.net.evaluate(x, this.p.env.numEnvs).values;
  }
}

/** The most recent finished training episodes in the analyzer's format (what live analysis looks at). */
export class RecentEpisodes {
  readonly window: EpisodeRecord[] = [];
  private readonly recorder: EpisodeRecorder;

  constructor(
    rewardExports: EpisodeRecord['reward_exports'],
    /** Numbering of the next episode (a resumed run goes on from the checkpoint's count). */
    private nextEpisode: number,
    private readonly size: number,
  ) {
    this.recorder = new EpisodeRecorder(rewardExports);
  }

  begin(i: number, seed: number, obs: StepObservation): void {
    this.recorder.begin(i, seed, this.nextEpisode++, obs);
  }

  step(i: number, action: number, reward: number, obs: StepObservation, info: StepInfo): void {
    this.recorder.step(i, action, reward, obs, info);
  }

  /** Env `i`'s episode ended; its next one starts on world `nextSeed`. */
  finish(i: number, obs: StepObservation, info: StepInfo, nextSeed: number, firstObs: StepObservation): void {
    const record = this.recorder.finish(i, obs, info);
    if (record) this.window.push(record);
    if (this.window.length > this.size) this.window.shift();
    this.begin(i, nextSeed, firstObs);
  }
}
