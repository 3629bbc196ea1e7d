// Episode playback: a recorded episode re-simulated from its seed and its actions (the simulator is
// deterministic), with a small first-person frame of what the agent saw and a timeline of what it got (reward,
// its dense and sparse terms, distance to the nearest target, health, action) beside the analyzer's notes on
// the steps it cites. Nothing per step is stored while training or evaluating beyond one character per action
// and per reward (runs/recorder.ts): the frames are rendered here, after the fact. `replayEpisodes` re-simulates
// several on two threads (the report's playback).
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { SimEnv } from '../env/sim/sim';
import { startWorker } from '../threads';
import { FRAME_HEIGHT, FRAME_PALETTE, FRAME_WIDTH, renderFrame } from '../env/sim/frame';
import { episodeActions, episodeRewards, type EpisodeRecord, type PlaybackNote, type PlaybackRow, type ProbeOrigin, type SuggestionRecord } from '../records';
import { GAME_FACTS, splitScaled, type StepObservation } from '../schema';
import { successTargets, type TaskSpec } from '../tasks';

/** Frames kept per episode: a longer episode shows every k-th step (k = ⌈steps / MAX_FRAMES⌉), and says so. */
export const MAX_FRAMES = 500;

export interface Playback {
  episode: number;
  seed: number;
  task: string;
  steps: number;
  outcome: string;
  width: number;
  height: number;
  /** [r, g, b] per palette index. */
  palette: readonly [number, number, number][];
  /** Steps between frames (1: every step). */
  every: number;
  /** One palette-indexed frame per row (width × height, row by row). */
  frames: Uint8Array[];
  rows: PlaybackRow[];
  notes: PlaybackNote[];
  /** What the page says about this playback: subsampling, and a re-simulation that did not follow the record. */
  remarks: string[];
  /** Whether re-simulating reproduced every recorded position and the outcome. */
  reproduced: boolean;
  /** A probe episode's origin (probe.ts); absent for a run's episode. */
  probe?: ProbeOrigin;
}

/** Why an episode cannot be played back (a user-facing sentence). */
export class PlaybackError extends Error {
  override name = 'PlaybackError';
}

/** How an episode ended, in words. */
export function outcomeOf(ep: EpisodeRecord): string {
  return ep.success ? 'succeeded' : ep.died ? `died: ${ep.deathCause ?? 'other'}` : ep.truncated ? 'ran out of time' : 'failed';
}

/**
 * The analyzer's notes that cite this episode. suggestions.json is a shared file: steps that are not two
 * whole numbers are dropped (the note then covers the episode) and every text is made a string.
 */
export function notesFor(episode: number, suggestions: readonly Pick<SuggestionRecord, 'id' | 'episodes'>[]): PlaybackNote[] {
  const stepsOf = (v: unknown): [number, number] | null =>
    Array.isArray(v) && v.length === 2 && v.every((n) => Number.isInteger(n) && n >= 0) ? [v[0], v[1]] : null;
  return suggestions.flatMap((s) =>
    (Array.isArray(s.episodes) ? s.episodes : [])
      .filter((e) => e?.episode === episode)
      .map((e) => ({ suggestion: String(s.id), steps: stepsOf(e.steps), note: String(e.note ?? '') })),
  );
}

function targetDistance(obs: StepObservation, names: readonly string[]): number | null {
  let best = Infinity;
  for (const n of names) {
    const d = obs.nearest[n]?.[0];
    if (d !== undefined && d < best) best = d;
  }
  return Number.isFinite(best) ? best : null;
}

/** Options of a replay: frames at most (`frames: false` skips them: the timeline alone) and the analyzer's notes. */
export interface ReplayOptions {
  maxFrames?: number;
  frames?: boolean;
  suggestions?: readonly Pick<SuggestionRecord, 'id' | 'episodes'>[];
}

/**
 * Re-simulates a recorded episode of `task` and renders its frames. The record must carry its actions (records
 * written since playback exists do).
 */
export function replayEpisode(task: TaskSpec, ep: EpisodeRecord, opts: ReplayOptions = {}): Playback {
  const actions = episodeActions(ep);
  if (!actions)
    throw new PlaybackError(`episode ${ep.episode} has no recorded actions (recorded before playback existed): evaluate the run again to record them`);
  const rewards = episodeRewards(ep);
  const playback = replayActions(
    task,
    { episode: ep.episode, seed: ep.seed, actions, rewards, split: ep.reward_exports === 'dense_sparse', path: ep.path, success: ep.success, died: ep.died },
    opts,
  );
  if (!rewards) playback.remarks.push('The record has no per-step rewards (a rollout, or a record from before playback).');
  return { ...playback, steps: ep.steps, outcome: outcomeOf(ep), notes: notesFor(ep.episode, opts.suggestions ?? []) };
}

/** A request to the replay worker (playback/worker.ts, its one message): replay these episodes. */
export interface ReplayRequest {
  type: 'replay';
  task: TaskSpec;
  episodes: EpisodeRecord[];
  opts: ReplayOptions;
}
export type ReplayReply = { type: 'replayed'; playbacks: Playback[] } | { type: 'error'; message: string; playbackError: boolean };

/** The replay worker's answer to a ReplayRequest, with the frames' buffers to transfer. */
export function answerReplay(msg: ReplayRequest): { reply: ReplayReply; transfer: ArrayBuffer[] } {
  try {
    const playbacks = msg.episodes.map((ep) => replayEpisode(msg.task, ep, msg.opts));
    return { reply: { type: 'replayed', playbacks }, transfer: playbacks.flatMap((p) => p.frames.map((f) => f.buffer as ArrayBuffer)) };
  } catch (err) {
    return { reply: { type: 'error', message: err instanceof Error ? err.message : String(err), playbackError: err instanceof PlaybackError }, transfer: [] };
  }
}

/**
 * A replay's cost in steps' worth of CPU: its steps, and its frames (a frame costs about as much as 7 steps of
 * re-simulation: `--cpu-prof` of a report of 100 approach-tree episodes, 6 played back, 8,600 steps re-simulated
 * and 906 frames drawn, 2026-11-27). The replay worker starts with `WORKER_START` of them (loading the simulator's
 * bundle in its thread).
 */
const replayCost = (ep: EpisodeRecord, opts: ReplayOptions) => {
  const every = Math.max(1, Math.ceil(ep.steps / Math.max(1, opts.maxFrames ?? MAX_FRAMES)));
  return ep.steps + (opts.frames === false ? 0 : 7 * (Math.ceil(ep.steps / every) + 1));
};
const WORKER_START = 500;

/** Which episodes (indices, ascending) this thread and the replay worker re-simulate: the largest first, each to the side with less work so far. */
export function replayShares(episodes: readonly EpisodeRecord[], opts: ReplayOptions = {}): { mine: number[]; theirs: number[] } {
  const mine: number[] = [],
    theirs: number[] = [];
  if (episodes.length < 2) return { mine: episodes.map((_, i) => i), theirs };
  let mineCost = 0,
    theirCost = WORKER_START;
  const order = episodes.map((ep, i) => ({ i, cost: replayCost(ep, opts) })).sort((a, b) => b.cost - a.cost || a.i - b.i);
  for (const { i, cost } of order) {
    if (mineCost <= theirCost) (mineCost += cost), mine.push(i);
    else (theirCost += cost), theirs.push(i);
  }
  return { mine: mine.sort((a, b) => a - b), theirs: theirs.sort((a, b) => a - b) };
}

/**
 * `replayEpisode` of each episode, in their order; on two threads where there are two cores: a worker thread
 * re-simulates some of them while this thread re-simulates the others (the largest first, each to the thread with
 * less work so far). Each replay starts from a fresh simulator built from its episode's seed, so a replay is the
 * same whichever thread makes it, frame for frame.
 */
export async function replayEpisodes(task: TaskSpec, episodes: readonly EpisodeRecord[], opts: ReplayOptions = {}): Promise<Playback[]> {
  const { mine, theirs } = availableParallelism() < 2 ? { mine: [], theirs: [] } : replayShares(episodes, opts);
  if (theirs.length === 0) return episodes.map((ep) => replayEpisode(task, ep, opts));
  const worker = startWorker('replay-worker.js', path.join(__dirname, 'worker.ts'));
  try {
    const reply = new Promise<ReplayReply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`replay worker exited with code ${code} before replaying`)));
    });
    reply.catch(() => undefined); // awaited below, after this thread's replays
    const request: ReplayRequest = { type: 'replay', task, episodes: theirs.map((i) => episodes[i]!), opts };
    worker.postMessage(request);
    const out: Playback[] = new Array(episodes.length);
    for (const i of mine) out[i] = replayEpisode(task, episodes[i]!, opts);
    const r = await reply;
    if (r.type === 'error') throw r.playbackError ? new PlaybackError(r.message) : new Error(`replay worker: ${r.message}`);
    theirs.forEach((i, k) => (out[i] = r.playbacks[k]!));
    return out;
  } finally {
    await worker.terminate();
  }
}

/** What a replay starts from: a world seed and the actions taken in it, with what was recorded to check against. */
export interface ReplaySource {
  episode: number;
  seed: number;
  actions: number[];
  /** The reward of each step (null: none recorded); `split`: a dense/sparse file's (the scale rule's terms). */
  rewards: readonly number[] | null;
  split: boolean;
  /** The recorded position after each step (path[0]: the start). */
  path: readonly (readonly number[])[];
  success: boolean;
  died: boolean;
}

/** Re-simulates `src.actions` on the world of `src.seed` (the simulator is deterministic), frames and timeline. */
export function replayActions(task: TaskSpec, src: ReplaySource, opts: ReplayOptions = {}): Playback {
  const { actions, rewards, split } = src;
  const bad = actions.findIndex((a) => !(a >= 0 && a < GAME_FACTS.actions.length));
  if (bad >= 0) throw new PlaybackError(`episode ${src.episode}: step ${bad + 1} has no action ${actions[bad]} (the game has ${GAME_FACTS.actions.length})`);
  const every = Math.max(1, Math.ceil(actions.length / Math.max(1, opts.maxFrames ?? MAX_FRAMES)));
  const names = successTargets(task);
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  const drawFrames = opts.frames ?? true;
  const frames: Uint8Array[] = [];
  const rows: PlaybackRow[] = [];
  const draw = () => {
    if (!drawFrames) return;
    const e = env.entity;
    const frame = new Uint8Array(FRAME_WIDTH * FRAME_HEIGHT);
    renderFrame(env.world, { x: e.pos.x, y: e.pos.y, z: e.pos.z, yaw: e.yaw, pitch: e.pitch }, env.mobs, frame);
    frames.push(frame);
  };
  let obs = env.reset(src.seed, features, 0);
  rows.push({ step: 0, action: null, reward: null, dense: null, sparse: null, target: targetDistance(obs, names), health: obs.health, position: xyz(obs) });
  draw();
  let firstDivergence = -1;
  let reward = 0,
    dense = 0,
    sparse = 0;
  let last = { success: false, died: false };
  for (let i = 0; i < actions.length; i++) {
    const res = env.step(actions[i]!, features, 0);
    obs = res.obs;
    last = res.info;
    const recorded = src.path[i + 1];
    if (firstDivergence < 0 && (!recorded || recorded.some((v, k) => v !== obs.position[k]))) firstDivergence = i + 1;
    const r = rewards?.[i] ?? 0;
    reward += r;
    if (split) {
      const terms = splitScaled(r);
      dense += terms.dense;
      sparse += terms.sparse;
    }
    if ((i + 1) % every !== 0 && i + 1 !== actions.length) continue;
    rows.push({
      step: i + 1,
      action: GAME_FACTS.actions[actions[i]!]!,
      reward: rewards && i < rewards.length ? round6(reward) : null,
      dense: rewards && split && i < rewards.length ? round6(dense) : null,
      sparse: rewards && split && i < rewards.length ? round6(sparse) : null,
      target: targetDistance(obs, names),
      health: obs.health,
      position: xyz(obs),
    });
    reward = dense = sparse = 0;
    draw();
  }
  const remarks: string[] = [];
  if (every > 1)
    remarks.push(
      `${actions.length.toLocaleString('en-US')} steps: one frame every ${every} steps (at most ${opts.maxFrames ?? MAX_FRAMES} frames); rewards are summed over the steps between frames.`,
    );
  const outcomeMatches = last.success === src.success && last.died === src.died;
  if (firstDivergence >= 0)
    remarks.push(
      `Re-simulating does not follow the record from step ${firstDivergence} on (the simulator changed since the run?): the frames show what the agent would see now.`,
    );
  else if (!outcomeMatches) remarks.push('Re-simulating reproduced the path but not the outcome (the simulator changed since the run?).');
  return {
    episode: src.episode,
    seed: src.seed,
    task: task.id,
    steps: actions.length,
    outcome: src.success ? 'succeeded' : src.died ? 'died' : 'failed',
    width: FRAME_WIDTH,
    height: FRAME_HEIGHT,
    palette: FRAME_PALETTE,
    every,
    frames,
    rows,
    notes: [],
    remarks,
    reproduced: firstDivergence < 0 && outcomeMatches,
  };
}

const xyz = (o: StepObservation): [number, number, number] => [o.position[0], o.position[1], o.position[2]];
const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/**
 * Which recorded episodes a report plays back: the failed ones first (up to `failures`), then a few successes,
 * in episode order; only episodes whose records carry actions.
 */
export function playbackEpisodes(episodes: readonly EpisodeRecord[], failures = 6, successes = 2): EpisodeRecord[] {
  const playable = episodes.filter((e) => e.actions !== undefined);
  return [...playable.filter((e) => !e.success).slice(0, failures), ...playable.filter((e) => e.success).slice(0, successes)];
}
