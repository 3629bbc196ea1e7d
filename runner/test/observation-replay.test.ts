// Every field of a step's observation survives record → replay, for every built-in task. An episode of the
// scripted teacher in the simulator (attack-cow's until it has hit and killed a cow) is recorded by the episode
// recorder with, as its reward, a fingerprint of every parameter a reward is passed; written and read back as a
// run's evaluation records; and replayed by the analyzer (rerunReward) in the sandbox with a reward file that
// computes the same fingerprint. Each recorded step holds every observation field as the agent saw it, and each
// replayed reward equals the recorded one. The analyzer's re-runs once replayed every step with no damage and
// no kill, so re-runs of attack rewards lost what the agent did.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { rerunReward } from '../src/analyze/rerun';
import { SimEnv } from '../src/env/sim/sim';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { readEpisodes, RunRecordError, type EpisodeRecord } from '../src/records';
import { writeEvalRecords } from '../src/runs/evaluate';
import { EpisodeRecorder } from '../src/runs/recorder';
import { STEP_OBSERVATION_FIELDS, type StepObservation } from '../src/schema';
import { hash32 } from '../src/seeds';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { tempDir } from './helpers/tmp';

const tmp = tempDir('rewardsmith-observation-replay-');

/** A fingerprint of the values of one reward call: a hash of their JSON text, object keys sorted. */
const FINGERPRINT_SOURCE = `function fingerprint(values) {
  const sorted = (key, value) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    const out = {};
    for (const k of Object.keys(value).sort()) out[k] = value[k];
    return out;
  };
  const text = JSON.stringify(values, sorted);
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}`;
const fingerprint = new Function(`${FINGERPRINT_SOURCE}\nreturn fingerprint;`)() as (values: unknown[]) => number;

/** The values the reward fingerprints: every parameter of the call, the history by its last entry (the current position). */
function callValues(obs: StepObservation, previousNearest: StepObservation['nearest'], attack: boolean): unknown[] {
  return [obs.nearest, previousNearest, obs.inventory_change, obs.health, obs.position, ...(attack ? [obs.damage_dealt, obs.kill_entity] : [])];
}

/** The same fingerprint as a reward file, run in the sandbox by the analyzer's replay. */
function fingerprintReward(attack: boolean): string {
  const params = ['current_nearest_blocks', 'previous_nearest_blocks', 'inventory_change', 'health', 'past_agent_positions', 'GLOBAL_DATA'];
  const extra = attack ? ['damage_dealt', 'kill_entity'] : [];
  const file = path.join(tmp, `fingerprint${attack ? '-attack' : ''}.reward.js`);
  const values = [
    'current_nearest_blocks',
    'previous_nearest_blocks',
    'inventory_change',
    'health',
    'past_agent_positions[past_agent_positions.length - 1]',
    ...extra,
  ];
  writeFileSync(
    file,
    `${FINGERPRINT_SOURCE}\n\nexport function reward_function(${[...params, ...extra].join(', ')}) {\n  return fingerprint([${values.join(', ')}]);\n}\n`,
  );
  return file;
}

/** Steps the teacher plays on a task without attacks (one more than a record keeps); an attack task plays until the kill. */
const STEPS = 33;
const ATTACK_STEP_LIMIT = 3000;

/** One teacher episode, its reward fingerprinted on what the agent saw, recorded; returns the record and the observations by step. */
function playRecorded(task: TaskSpec, episode: number): { record: EpisodeRecord; seen: Map<number, StepObservation> } {
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  const seed = 1234;
  let state = hash32(seed, episode);
  const teacher = new Demonstrator(task, () => (state = hash32(state, 1)) / 2 ** 32);
  let previous = env.reset(seed, features, 0);
  teacher.reset(env);
  const recorder = new EpisodeRecorder('reward_function');
  recorder.begin(0, seed, episode, previous);
  const seen = new Map<number, StepObservation>();
  const limit = task.attack ? ATTACK_STEP_LIMIT : STEPS;
  for (let step = 1; ; step++) {
    const action = teacher.act(env);
    const { obs, info } = env.step(action, features, 0);
    recorder.step(0, action, fingerprint(callValues(obs, previous.nearest, task.attack)), obs, info);
    seen.set(info.step, JSON.parse(JSON.stringify(obs))); // as a JSON record holds it (a yaw of -0 reads as 0)
    previous = obs;
    if (info.done || step === limit) return { record: recorder.finish(0, obs, info)!, seen };
  }
}

test('every observation field survives record → replay, for every task (the attack fields included)', { timeout: 240_000 }, async () => {
  const tasks = Object.values(BUILTIN_TASKS);
  assert.ok(tasks.some((t) => t.attack) && tasks.some((t) => !t.attack));
  const records: EpisodeRecord[] = [];
  const seen = new Map<number, Map<number, StepObservation>>();
  const taskOf = new Map<number, TaskSpec>();
  for (const task of tasks) {
    const played = playRecorded(task, records.length);
    records.push(played.record);
    seen.set(played.record.episode, played.seen);
    taskOf.set(played.record.episode, task);
  }
  const runDir = path.join(tmp, 'run');
  writeEvalRecords(runDir, records);
  const read = readEpisodes(runDir);

  // Recorded: every field of every recorded step, as the live reward saw it.
  for (const ep of read) {
    const task = taskOf.get(ep.episode)!;
    for (const s of ep.lastSteps)
      for (const field of Object.keys(STEP_OBSERVATION_FIELDS) as (keyof StepObservation)[])
        assert.deepEqual(s[field], seen.get(ep.episode)!.get(s.step)![field], `${task.id} step ${s.step}: ${field} as recorded`);
  }
  const attackEpisode = read.find((ep) => taskOf.get(ep.episode)!.attack)!;
  assert.ok(attackEpisode.success, 'the teacher killed the cow');
  assert.ok(
    attackEpisode.lastSteps.some((s) => (s.damage_dealt ?? 0) > 0) && attackEpisode.lastSteps.some((s) => Object.keys(s.kill_entity ?? {}).length > 0),
    'the recorded steps of the attack episode hold a hit and the kill',
  );

  // Replayed: the analyzer's re-run gives each recorded step the reward the live run gave it.
  for (const attack of [false, true]) {
    const episodes = read.filter((ep) => taskOf.get(ep.episode)!.attack === attack);
    const rerun = await rerunReward(fingerprintReward(attack), episodes, attack);
    if ('error' in rerun) assert.fail(rerun.error);
    for (const ep of episodes) {
      const live = ep.lastSteps.slice(1).map((s) => ({ step: s.step, reward: s.reward }));
      const replayed: { step: number; reward: number }[] = rerun.steps.get(ep.episode)!.map((s) => ({ step: s.step, reward: s.reward }));
      assert.deepEqual(replayed, live, `${taskOf.get(ep.episode)!.id}: replayed rewards equal those of the steps as the agent saw them`);
    }
  }
});

test('a recorded step with malformed attack fields is refused where it is read, naming the file, line and step', () => {
  const source = path.join(__dirname, 'fixtures/runs/spin-in-place');
  const line = readFileSync(path.join(source, 'eval/episodes.ndjson'), 'utf8').split('\n')[0]!;
  const runDir = path.join(tmp, 'malformed');
  for (const [field, value] of [
    ['damage_dealt', '3'],
    ['kill_entity', { cow: 'one' }],
  ] as const) {
    const ep = JSON.parse(line) as EpisodeRecord;
    (ep.lastSteps[4] as unknown as Record<string, unknown>)[field] = value;
    writeEvalRecords(runDir, [ep]);
    assert.throws(
      () => readEpisodes(runDir),
      (err: Error) =>
        err instanceof RunRecordError && /episodes\.ndjson:1: lastSteps\[4\] has a damage_dealt that is not a number or a kill_entity/.test(err.message),
      field,
    );
  }
});
