// Every observation field reaches the reward function unchanged, in both sandboxes (TypeScript and Python), for
// every built-in task (the attack fields included). The scripted teacher plays each task in the simulator; a window
// of its observations is stepped through the real sandbox, with a reward file that holds the same observations and
// compares each parameter it is passed with what the schema says that parameter is (this step's field, the previous
// step's nearest blocks, the position history). It returns which parameters differed, so a field the encoder or a
// decoder drops, shifts or reorders fails here naming the parameter, task and step.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SimEnv } from '../src/env/sim/sim';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { RewardSandbox } from '../src/reward';
import { PARAMETERS, parameterNames, STEP_OBSERVATION_FIELDS, type StepObservation } from '../src/schema';
import { hash32 } from '../src/seeds';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { tempDir } from './helpers/tmp';

const tmp = tempDir('rewardsmith-observation-wire-');

/** Reward calls per task at most: the window of a teacher's episode stepped through the sandbox (shorter when the episode is). */
const CALLS = 40;
const ATTACK_STEP_LIMIT = 3000;

/**
 * A window of up to CALLS + 1 observations of the teacher's episode on `task`, as the live run hands them to the
 * sandbox: the first begins the episode. A task without attacks plays from the start; an attack task's window
 * ends at the kill, so that it holds hits and the kill.
 */
function teacherWindow(task: TaskSpec, episode: number): StepObservation[] {
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  const seed = 4321 + episode;
  let state = hash32(seed, episode);
  const teacher = new Demonstrator(task, () => (state = hash32(state, 1)) / 2 ** 32);
  const observations = [env.reset(seed, features, 0)];
  teacher.reset(env);
  const limit = task.attack ? ATTACK_STEP_LIMIT : CALLS;
  for (let step = 1; step <= limit; step++) {
    const { obs, info } = env.step(teacher.act(env), features, 0);
    observations.push(obs);
    if (info.done) break;
  }
  assert.ok(observations.length > 5, `${task.id}: the teacher's episode has more than 5 steps`);
  return observations.slice(-(CALLS + 1));
}

/** What each parameter is, as the schema describes it: the reward compares what it is passed with this. */
const SOURCES = PARAMETERS.map((p) => p.source);

/**
 * The checking reward in TypeScript: its first call finds its episode by where it starts (position and nearest
 * blocks); each call returns
 * the sum of 2^i over the parameters i that differ from what the episode's observations say they are (-1: no
 * episode starts there; 0 past the episode's window).
 */
function tsReward(windows: StepObservation[][], attack: boolean): string {
  const params = parameterNames(attack);
  return `const EPISODES = ${JSON.stringify(windows)};
const SOURCES = ${JSON.stringify(SOURCES)};
function same(a, b) {
  if (Array.isArray(b)) return Array.isArray(a) && a.length === b.length && b.every((v, i) => same(a[i], v));
  if (b !== null && typeof b === 'object') {
    if (a === null || typeof a !== 'object' || Array.isArray(a)) return false;
    const keys = Object.keys(b);
    return Object.keys(a).length === keys.length && keys.every((k) => Object.prototype.hasOwnProperty.call(a, k) && same(a[k], b[k]));
  }
  return a === b;
}
function expected(source, episode, t) {
  if ('field' in source) return episode[t][source.field];
  if (source.episode === 'previous') return episode[t - 1].nearest;
  if (source.episode === 'history') return episode.slice(0, t + 1).map((o) => o.position);
  return undefined;
}
export function reward_function(${params.join(', ')}) {
  const args = [${params.join(', ')}];
  if (GLOBAL_DATA.episode === undefined) {
    GLOBAL_DATA.episode = EPISODES.findIndex((e) => same(past_agent_positions[0], e[0].position) && same(previous_nearest_blocks, e[0].nearest));
    GLOBAL_DATA.t = 0;
  }
  if (GLOBAL_DATA.episode < 0) return -1;
  const episode = EPISODES[GLOBAL_DATA.episode];
  const t = ++GLOBAL_DATA.t;
  if (t >= episode.length) return 0;
  let differ = 0;
  args.forEach((value, i) => {
    const source = SOURCES[i];
    if (source.episode === 'memory' ? value !== GLOBAL_DATA : !same(value, expected(source, episode, t))) differ += 2 ** i;
  });
  return differ;
}
`;
}

/** The same checking reward in Python. */
function pythonReward(windows: StepObservation[][], attack: boolean): string {
  const params = parameterNames(attack);
  return `EPISODES = ${JSON.stringify(windows)}
SOURCES = ${JSON.stringify(SOURCES)}


def same(a, b):
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return isinstance(a, dict) and len(a) == len(b) and all(k in a and same(a[k], b[k]) for k in b)
    return not isinstance(a, (list, dict)) and a == b


def expected(source, episode, t):
    if 'field' in source:
        return episode[t][source['field']]
    if source['episode'] == 'previous':
        return episode[t - 1]['nearest']
    if source['episode'] == 'history':
        return [o['position'] for o in episode[:t + 1]]
    return None


def reward_function(${params.join(', ')}):
    args = [${params.join(', ')}]
    if 'episode' not in GLOBAL_DATA:
        starts = [i for i, e in enumerate(EPISODES) if same(past_agent_positions[0], e[0]['position']) and same(previous_nearest_blocks, e[0]['nearest'])]
        GLOBAL_DATA['episode'] = starts[0] if starts else -1
        GLOBAL_DATA['t'] = 0
    if GLOBAL_DATA['episode'] < 0:
        return -1
    episode = EPISODES[GLOBAL_DATA['episode']]
    GLOBAL_DATA['t'] += 1
    t = GLOBAL_DATA['t']
    if t >= len(episode):
        return 0
    differ = 0
    for i, value in enumerate(args):
        source = SOURCES[i]
        if source.get('episode') == 'memory':
            if value is not GLOBAL_DATA:
                differ += 2 ** i
        elif not same(value, expected(source, episode, t)):
            differ += 2 ** i
    return differ
`;
}

const TASKS = Object.values(BUILTIN_TASKS);
const WINDOWS = new Map(TASKS.map((task, i) => [task, teacherWindow(task, i)]));

test('the checking rewards see every observation field: each reaches a parameter, and the windows hold an inventory change, hits, a kill and distinct starts', () => {
  const used = new Set<string>(SOURCES.flatMap((s) => ('field' in s ? [s.field] : [])));
  // The episode's own state is built from these fields (previous nearest blocks, the position history).
  used.add('nearest').add('position');
  for (const field of Object.keys(STEP_OBSERVATION_FIELDS)) assert.ok(used.has(field), `observation field ${field} reaches no reward parameter`);
  assert.ok(TASKS.some((t) => t.attack) && TASKS.some((t) => !t.attack), 'the built-in tasks include attack tasks and others');
  for (const [task, window] of WINDOWS) {
    if (!task.attack) continue;
    assert.ok(
      window.some((o) => o.damage_dealt > 0) && window.some((o) => Object.keys(o.kill_entity).length > 0),
      `${task.id}: the window holds a hit and the kill`,
    );
  }
  assert.ok(
    [...WINDOWS.values()].some((w) => w.some((o) => Object.keys(o.inventory_change).length > 0)),
    'some window holds an inventory change',
  );
  const starts = [...WINDOWS.values()].map((w) => JSON.stringify([w[0]!.position, w[0]!.nearest]));
  assert.equal(new Set(starts).size, starts.length, 'each window starts where no other does (the reward finds its episode by it)');
});

for (const language of ['ts', 'py'] as const) {
  test(`every observation field reaches the ${language === 'ts' ? 'TypeScript' : 'Python'} reward unchanged, for every task`, {
    timeout: 240_000,
  }, async () => {
    for (const attack of [false, true]) {
      const tasks = TASKS.filter((t) => t.attack === attack);
      const windows = tasks.map((t) => WINDOWS.get(t)!);
      const file = path.join(tmp, `check${attack ? '-attack' : ''}.reward.${language}`);
      writeFileSync(file, language === 'ts' ? tsReward(windows, attack) : pythonReward(windows, attack));
      const sandbox = await RewardSandbox.open(file, tasks.length, { attack });
      try {
        await sandbox.beginEpisodes(
          tasks.map((_, e) => e),
          windows.map((w) => w[0]!),
        );
        const params = parameterNames(attack);
        for (let t = 1; t <= CALLS; t++) {
          // A window that has ended repeats its last observation, which its reward does not check.
          const values = await sandbox.step(windows.map((w) => w[Math.min(t, w.length - 1)]!));
          values.forEach((differ, e) => {
            assert.notEqual(differ, -1, `${tasks[e]!.id}: the reward found its episode`);
            const wrong = params.filter((_, i) => Math.floor(differ / 2 ** i) % 2 === 1);
            assert.deepEqual(wrong, [], `${tasks[e]!.id} step ${t}: parameters the reward received changed`);
          });
        }
      } finally {
        await sandbox.close();
      }
    }
  });
}
