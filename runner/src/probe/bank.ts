// The probe bank of a task: observation sequences recorded from real simulator episodes, the same
// StepObservations training hands the reward: the scripted teacher's successful episodes, a random policy, and
// scripted degenerate behaviours (standing still, turning in place, looking up or down, walking straight,
// wandering, oscillating near the target, staring at it from a distance, walking away from it while it is in
// view, walking into lava where the world has it). Seeded and deterministic: generated once per task (built-in
// or a user task file) and cached on disk.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cacheDir, writeAtomic } from '../files';
import { STEP_CODES } from '../records';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GAME_FACTS, type StepObservation } from '../schema';
import { hash32 } from '../seeds';
import { successTargets, type TaskSpec } from '../tasks';
import { Demonstrator } from '../pretrain/demonstrator';
import { SimEnv, blockNames, stateToBlock } from '../env/privileged';

/** Bumped whenever what a bank holds or how it is recorded changes: older cached banks are then regenerated. */
const BANK_VERSION = 5;

/** The behaviours of a bank. `teacher` episodes are the successful ones; every other behaviour is a failure mode. */
export const BEHAVIOURS = {
  teacher: 'a successful episode (the scripted teacher)',
  random: 'a random policy',
  still: 'standing still',
  turn: 'turning in place',
  'look-up': 'looking up',
  'look-down': 'looking down',
  straight: 'walking straight ahead',
  wander: 'wandering',
  oscillate: 'stepping forward and back near the target',
  stare: 'staring at the target from a distance',
  retreat: 'walking away from the target while it is in view',
  hazard: 'walking into lava',
} as const;
export type Behaviour = keyof typeof BEHAVIOURS;

/**
 * Whether the probes count an episode on past its recording, at the rate a repeat of its second half pays: a
 * failure mode the bank cut short goes on to the task's step limit in training. A retreat does not: the view
 * (64 m) bounds how long walking away from a target lasts, so what it earned is counted as recorded.
 */
export function continuesPastProbe(e: ProbeEpisode): boolean {
  return !e.success && !e.died && e.behaviour !== 'teacher' && e.behaviour !== 'retreat';
}

/** Steps a probe episode of a failure mode runs at most (a task's own limit may be 60,000; the tail is extrapolated). */
export const PROBE_STEPS = 400;
/** Steps the teacher gets to succeed in a probe episode. */
const TEACHER_STEPS = 2500;
/** Successful teacher episodes a bank keeps, out of at most TEACHER_TRIES. */
const TEACHER_EPISODES = 3;
const TEACHER_TRIES = 6;
/** A retreat begins once the target is in view this close (metres): from where the teacher's approach brought it. */
const RETREAT_FROM = 8;
/** A retreat turns back towards the target when it is more than this far off-centre (radians; a turn is 15°). */
const RETREAT_TURN = (10 * Math.PI) / 180;
/** Steps a retreat's probe episode runs past its teacher's success: 40 m of walking backwards, the view is 64 m. */
const RETREAT_STEPS = 200;
/** Episodes of each failure mode (each on its own world). */
const EPISODES_PER_BEHAVIOUR = 2;
const BANK_SEED = 0x9b0be;

export interface ProbeEpisode {
  behaviour: Behaviour;
  /** World seed. */
  seed: number;
  /** obs[0] is the observation the episode begins with; obs[t] the one after step t (what the reward's call t sees). */
  obs: StepObservation[];
  /** Step t's action, one STEP_CODES character each (records.ts): with the seed, what playback re-simulates. */
  actions: string;
  success: boolean;
  died: boolean;
}

export interface ProbeBank {
  version: number;
  task: string;
  /** The task's own episode limit: a failure mode that never ends runs this long in training. */
  maxSteps: number;
  episodes: ProbeEpisode[];
  /** Every name any observation of the bank holds, by parameter (what the task's world can show a reward). */
  names: { nearby: string[]; item: string[]; mob: string[] };
  /**
   * Every block and mob in the bank's worlds around where the episodes start (WORLD_SCAN_RADIUS), seen or not: a
   * name the task's worlds hold (lava in a cave nearby) may matter to a reward although no probe happened to see it.
   */
  worldNames: string[];
}

/** Blocks scanned around an episode's start for `worldNames`, horizontally and vertically (metres). */
export const WORLD_SCAN_RADIUS = 32;

const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;

/** The nearest target entry of an observation, or undefined when none is in view. */
function nearestTarget(task: TaskSpec, o: StepObservation): [number, number, number] | undefined {
  let best: [number, number, number] | undefined;
  for (const n of successTargets(task)) {
    const e = o.nearest[n];
    if (e && (!best || e[0] < best[0])) best = e;
  }
  return best;
}

/** A policy: the action for the env's state, given the last observation and the step about to be taken (1-based). */
type Policy = (env: SimEnv, last: StepObservation, step: number) => number;

function makeRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = hash32(s, 0x7a11);
    return s / 2 ** 32;
  };
}

/** The policy of a behaviour for one episode. */
function policyOf(behaviour: Behaviour, task: TaskSpec, random: () => number): { policy: Policy; teacher?: Demonstrator } {
  const n = GAME_FACTS.actions.length;
  switch (behaviour) {
    case 'teacher': {
      const teacher = new Demonstrator(task, random, 'world');
      return { teacher, policy: (env) => teacher.act(env) };
    }
    case 'random':
      return { policy: () => Math.floor(random() * n) };
    case 'still':
      return { policy: () => A.no_op };
    case 'turn':
      return { policy: () => A.turn_left };
    case 'look-up':
      return { policy: () => A.turn_up };
    case 'look-down':
      return { policy: () => A.turn_down };
    case 'straight':
      return { policy: (env) => (env.entity.isCollidedHorizontally ? A.forward_jump : A.forward) };
    case 'wander': {
      let turning = 0;
      let turn: number = A.turn_left;
      return {
        policy: (env) => {
          if (turning > 0) {
            turning--;
            return turn;
          }
          if (random() < 0.05) {
            turning = 1 + Math.floor(random() * 6);
            turn = random() < 0.5 ? A.turn_left : A.turn_right;
          }
          return env.entity.isCollidedHorizontally ? A.forward_jump : A.forward;
        },
      };
    }
    case 'oscillate': {
      // The teacher's approach until the target is within 5 m, then three steps back, three forward, forever.
      const teacher = new Demonstrator(task, random, 'world');
      let near = -1;
      return {
        teacher,
        policy: (env, last, step) => {
          const t = nearestTarget(task, last);
          if (near < 0 && t && t[0] < 5) near = step;
          if (near < 0) return teacher.act(env);
          return Math.floor((step - near) / 3) % 2 === 0 ? A.back : A.forward;
        },
      };
    }
    case 'stare': {
      // The teacher's approach until the target is in view farther than 6 m, then nothing but standing there.
      const teacher = new Demonstrator(task, random, 'world');
      let seen = false;
      return {
        teacher,
        policy: (env, last) => {
          const t = nearestTarget(task, last);
          if (t && t[0] > 6) seen = true;
          return seen ? A.no_op : teacher.act(env);
        },
      };
    }
    case 'retreat': {
      // What a policy paid for distance gained from the target learns: the teacher's approach until the target
      // is in view within RETREAT_FROM m, then walking backwards, facing it (turning back to it when it drifts
      // off-centre), for as long as it stays in view; once it is lost, the teacher's approach again.
      const teacher = new Demonstrator(task, random, 'world');
      let retreating = false;
      return {
        teacher,
        policy: (env, last) => {
          const t = nearestTarget(task, last);
          if (retreating && !t) {
            retreating = false;
            teacher.reset(env); // it plans its approach afresh from here
          } else if (t && t[0] < RETREAT_FROM) retreating = true;
          if (!retreating || !t) return teacher.act(env);
          // Relative yaw is positive to the right (observe.ts).
          if (Math.abs(t[1]) > RETREAT_TURN) return t[1] > 0 ? A.turn_right : A.turn_left;
          return A.back;
        },
      };
    }
    case 'hazard': {
      // The teacher sent to the nearest lava instead of the task's target: it walks into it.
      const lava: TaskSpec = { ...task, success: { kind: 'near', names: ['lava'], distance: 0 } };
      const teacher = new Demonstrator(lava, random, 'world');
      return { teacher, policy: (env) => teacher.act(env) };
    }
  }
}

/** Plays one probe episode on the world of `seed`: until it ends or `limit` steps; yields after each step. */
function* playEpisode(task: TaskSpec, behaviour: Behaviour, seed: number, limit: number, worldNames?: Set<string>): Generator<void, ProbeEpisode> {
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  const random = makeRandom(hash32(seed, 0xbe4a));
  const first = env.reset(seed, features, 0);
  if (worldNames) yield* scanWorld(env, worldNames);
  const { policy, teacher } = policyOf(behaviour, task, random);
  teacher?.reset(env);
  const obs: StepObservation[] = [first];
  let actions = '';
  let success = false;
  let died = false;
  for (let step = 1; step <= Math.min(limit, task.maxSteps); step++) {
    const action = policy(env, obs[obs.length - 1]!, step);
    const r = env.step(action, features, 0);
    obs.push(r.obs);
    actions += STEP_CODES[action]!;
    success = r.info.success;
    died = r.info.died;
    if (r.info.done) break;
    yield;
  }
  return { behaviour, seed, obs, actions, success, died };
}

/** Adds the names of every block within WORLD_SCAN_RADIUS of the agent and of every mob of the world to `names`. */
function* scanWorld(env: SimEnv, names: Set<string>): Generator<void, void> {
  const { x, y, z } = env.entity.pos;
  const seen = new Set<number>();
  for (let dx = -WORLD_SCAN_RADIUS; dx <= WORLD_SCAN_RADIUS; dx++) {
    for (let dz = -WORLD_SCAN_RADIUS; dz <= WORLD_SCAN_RADIUS; dz++)
      for (let dy = -WORLD_SCAN_RADIUS; dy <= WORLD_SCAN_RADIUS; dy++) {
        const by = Math.floor(y) + dy;
        if (by >= 0 && by < 256) seen.add(stateToBlock[env.world.stateAt(Math.floor(x) + dx, by, Math.floor(z) + dz)]!);
      }
    yield;
  }
  for (const b of seen) if (blockNames[b]) names.add(blockNames[b]);
  for (const m of env.mobs) names.add(m.type);
}

/** Whether the task's world has lava to walk into (underground worlds do; plains do not). */
const hasLava = (task: TaskSpec) => task.world === 'underground';

/** Records a task's bank (seconds of simulation; see `probeBank` for the cached one). */
export function recordBank(task: TaskSpec): ProbeBank {
  const recording = bankRecording(task);
  for (;;) {
    const next = recording.next();
    if (next.done) return next.value;
  }
}

/** Steps of simulation between two yields to the event loop when a bank is recorded in a server (a few ms). */
const STEPS_PER_SLICE = 16;

/** Records a task's bank in slices, letting the event loop run between them (the language server stays responsive). */
export async function recordBankAsync(task: TaskSpec): Promise<ProbeBank> {
  const recording = bankRecording(task);
  for (let steps = 0; ; steps++) {
    const next = recording.next();
    if (next.done) return next.value;
    if (steps % STEPS_PER_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

function* bankRecording(task: TaskSpec): Generator<void, ProbeBank> {
  const episodes: ProbeEpisode[] = [];
  const seed = (k: number) => hash32(BANK_SEED, k);
  let k = 0;
  for (let tries = 0, kept = 0; tries < TEACHER_TRIES && kept < TEACHER_EPISODES; tries++) {
    const e = yield* playEpisode(task, 'teacher', seed(k++), TEACHER_STEPS);
    if (e.success) {
      episodes.push(e);
      kept++;
    }
  }
  // Every failure mode plays the same worlds, so their returns differ by the behaviour alone; worlds that start
  // within reach of the target (a diamond in view at the start) are skipped: there, standing still succeeds.
  const worlds: number[] = [];
  const worldNames = new Set<string>();
  for (let w = 1000; worlds.length < EPISODES_PER_BEHAVIOUR && w < 1100; w++)
    if (!(yield* playEpisode(task, 'still', seed(w), 20, worldNames)).success) worlds.push(seed(w));
  // A retreat plays the worlds of the shortest successes instead: its approach is the teacher's own, step for step
  // (the same seed draws the same teacher), so it walks away from a target the teacher walked up to, and it gets
  // RETREAT_STEPS after that approach (the failure modes' worlds may hold the target 400 steps away).
  const successes = episodes.map((e) => ({ seed: e.seed, steps: e.obs.length - 1 })).sort((a, b) => a.steps - b.steps);
  for (const behaviour of Object.keys(BEHAVIOURS) as Behaviour[]) {
    if (behaviour === 'teacher' || (behaviour === 'hazard' && !hasLava(task))) continue;
    if (behaviour === 'retreat') {
      for (const s of successes.slice(0, EPISODES_PER_BEHAVIOUR)) {
        const retreat = yield* playEpisode(task, behaviour, s.seed, s.steps + RETREAT_STEPS);
        // One that succeeded never had the target in view before it was reached (a diamond behind the last block
        // dug): it is the teacher's episode again.
        if (!retreat.success) episodes.push(retreat);
      }
      continue;
    }
    for (const world of worlds) episodes.push(yield* playEpisode(task, behaviour, world, PROBE_STEPS));
  }
  const names = { nearby: new Set<string>(), item: new Set<string>(), mob: new Set<string>() };
  for (const e of episodes)
    for (const o of e.obs) {
      for (const n in o.nearest) names.nearby.add(n);
      for (const n in o.inventory_change) names.item.add(n);
      for (const n in o.kill_entity) names.mob.add(n);
    }
  const sorted = (s: Set<string>) => [...s].sort();
  return {
    version: BANK_VERSION,
    task: task.id,
    maxSteps: task.maxSteps,
    episodes,
    names: { nearby: sorted(names.nearby), item: sorted(names.item), mob: sorted(names.mob) },
    worldNames: sorted(worldNames),
  };
}

/** Where banks are cached: $XDG_CACHE_HOME/rewardsmith/probe-banks (default ~/.cache). */
export function bankCacheDir(): string {
  return cacheDir('probe-banks');
}

/** The cache file of a task's bank: keyed by everything about the task that shapes its episodes. */
export function bankFile(task: TaskSpec): string {
  const { id, world, worldOptions, startY, inventory, success, maxSteps, attack } = task;
  const key = createHash('sha256')
    .update(JSON.stringify({ BANK_VERSION, id, world, worldOptions: worldOptions ?? null, startY, inventory, success, maxSteps, attack }))
    .digest('hex')
    .slice(0, 16);
  return path.join(bankCacheDir(), `${id.replace(/[^A-Za-z0-9_.-]/g, '_')}-${key}.json.gz`);
}

const banks = new Map<string, ProbeBank>();

/** The task's probe bank: from memory, else the cache, else recorded now (blocking) and cached. */
export function probeBank(task: TaskSpec): ProbeBank {
  for (;;) {
    const known = cachedBank(task);
    if (known) return known;
    const release = claimRecording(bankFile(task), { blocking: true });
    if (!release) {
      sleepSync(RECORDING_POLL_MS);
      continue;
    }
    try {
      return cachedBank(task) ?? storeBank(task, recordBank(task));
    } finally {
      release();
    }
  }
}

/** The task's probe bank, recorded in slices that let the event loop run when it is not cached yet. */
export async function probeBankAsync(task: TaskSpec): Promise<ProbeBank> {
  for (;;) {
    const known = cachedBank(task);
    if (known) return known;
    const release = claimRecording(bankFile(task), { blocking: false });
    if (!release) {
      await new Promise((resolve) => setTimeout(resolve, RECORDING_POLL_MS));
      continue;
    }
    try {
      return cachedBank(task) ?? storeBank(task, await recordBankAsync(task));
    } finally {
      release();
    }
  }
}

/** How often a process waiting for another's recording looks for the bank. */
const RECORDING_POLL_MS = 250;
/** A recording claimed longer ago than this is taken over (its process on another host may be gone). */
const RECORDING_STALE_MS = 10 * 60_000;
/** A cached bank read this long after it was last written or read is marked in use again (its file's time). */
const IN_USE_MARK_MS = 24 * 3_600_000;
/** Banks of the task's other versions or definitions unused for this long are removed when a new one is stored. */
const UNUSED_BANK_MS = 7 * 24 * 3_600_000;

/**
 * One recorder per bank across processes (a sweep's parallel jobs, a test run's files, two editors on a fresh
 * machine): `<bank>.recording`, created exclusively, names the recorder; the others wait for its bank instead of
 * recording it too. Returns the release of the claim, or null while another live process holds it. A claim
 * whose process has ended (on this host) or that is older than RECORDING_STALE_MS is taken over; a cache
 * folder that cannot be written lets every process record on its own, as before. A blocking wait never waits
 * for this process's own recording (it could not go on meanwhile): it records without a claim.
 */
function claimRecording(file: string, how: { blocking: boolean }): (() => void) | null {
  const claim = `${file}.recording`;
  const mine = JSON.stringify({ host: os.hostname(), pid: process.pid, started: Date.now() });
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const fd = openSync(claim, 'wx');
    try {
      writeSync(fd, mine);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return () => {};
    const holder = claimHolder(claim);
    if (holder === 'other' || (holder === 'self' && !how.blocking)) return null;
    if (holder === 'self') return () => {};
    rmSync(claim, { force: true });
    return claimRecording(file, how);
  }
  return () => {
    try {
      if (readFileSync(claim, 'utf8') === mine) rmSync(claim, { force: true });
    } catch {
      // Taken over meanwhile, or the folder went away: nothing of ours to remove.
    }
  };
}

/** Who holds a recording claim: this process, another live one, or none any more ('stale'). */
function claimHolder(claim: string): 'self' | 'other' | 'stale' {
  let holder: { host?: unknown; pid?: unknown; started?: unknown };
  try {
    holder = JSON.parse(readFileSync(claim, 'utf8')) as typeof holder;
  } catch {
    // Being written this instant, or damaged: stale once old.
    try {
      return Date.now() - statSync(claim).mtimeMs > RECORDING_STALE_MS ? 'stale' : 'other';
    } catch {
      return 'stale';
    }
  }
  if (typeof holder.started !== 'number' || Date.now() - holder.started > RECORDING_STALE_MS) return 'stale';
  if (holder.host !== os.hostname() || typeof holder.pid !== 'number') return 'other';
  if (holder.pid === process.pid) return 'self';
  try {
    process.kill(holder.pid, 0);
    return 'other';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'stale' : 'other';
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function cachedBank(task: TaskSpec): ProbeBank | undefined {
  const file = bankFile(task);
  const known = banks.get(file);
  if (known) return known;
  if (!existsSync(file)) return undefined;
  try {
    const read = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as ProbeBank;
    if (read.version !== BANK_VERSION || !Array.isArray(read.episodes)) return undefined;
    banks.set(file, read);
    markInUse(file);
    return read;
  } catch {
    return undefined; // a damaged cache file is recorded again
  }
}

/** Keeps a bank's file time recent while it is read, so that no other version's cleanup takes it as unused. */
function markInUse(file: string): void {
  try {
    if (Date.now() - statSync(file).mtimeMs > IN_USE_MARK_MS) utimesSync(file, new Date(), new Date());
  } catch {
    // A read-only cache: its banks are not removed by a cleanup either.
  }
}

function storeBank(task: TaskSpec, recorded: ProbeBank): ProbeBank {
  const file = bankFile(task);
  // Rounded as the cache stores it, so a fresh bank and a cached one give the same results.
  const bank = JSON.parse(JSON.stringify(recorded, roundNumbers)) as ProbeBank;
  try {
    // Atomic (it makes the cache folder when missing), with a temporary file of this process's own: two processes may record the same bank at once.
    writeAtomic(path.dirname(file), file, gzipSync(JSON.stringify(bank)), { tmpSuffix: `.${process.pid}.tmp` });
    // The task's banks of earlier bank versions or task definitions go once unused for a while: another
    // checkout or version of rewardsmith on this machine may be reading its own (removing those at once made
    // two checkouts record their banks again and again).
    const prefix = `${path.basename(file).replace(/-[0-9a-f]{16}\.json\.gz$/, '')}-`;
    for (const old of readdirSync(path.dirname(file))) {
      if (!old.startsWith(prefix) || !/^[0-9a-f]{16}\.json\.gz$/.test(old.slice(prefix.length)) || old === path.basename(file)) continue;
      const oldFile = path.join(path.dirname(file), old);
      const unused = Date.now() - (statSync(oldFile, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > UNUSED_BANK_MS;
      if (unused) rmSync(oldFile, { force: true });
    }
  } catch {
    // A read-only cache only costs the recording next time.
  }
  banks.set(file, bank);
  return bank;
}

/** Numbers in a cached bank keep 6 significant digits: a third of the size, far below what a reward distinguishes. */
function roundNumbers(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(6)) : value;
}
