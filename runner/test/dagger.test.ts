// pretrain's DAgger rounds: the clone drives, the scripted teacher labels the states the clone reaches. That
// needs a teacher that has an answer in states its own demonstrations never reach: explore-diamond's clone
// digs straight down to bedrock (y 1–4 in 1.16.5) and attacks it for the rest of the episode. The teacher used
// to do the same from there (it tunnels at a fixed height and attacked whatever its crosshair was on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GAME_FACTS } from '../src/schema';
import { SimEnv } from '../src/env/sim/sim';
import { blockNames, LookRay, stateToBlock, targetBlock, type BlockHit } from '../src/env/privileged';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { demoStreamSeed, pretrain, recordStudentStates } from '../src/pretrain/pretrain';
import { newNetwork } from '../src/ppo/learner';
import { readPolicyCheckpoint, Rng } from '../src/ppo/policy';
import { loadTaskFile, resolveTask, type TaskSpec } from '../src/tasks';
import { hash32 } from '../src/seeds';
import { RUN_FILES } from '../src/records';

const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;
const fixture = (name: string) => path.join(__dirname, 'fixtures', name);

/** Looks straight down and digs until bedrock stops it: where the clone ends up. */
function digDownToBedrock(env: SimEnv, features: Float32Array): void {
  for (let t = 0; t < 1500; t++) {
    const action = env.entity.pitch > -Math.PI / 2 + 0.01 ? A.turn_down : A.attack;
    assert.equal(env.step(action, features, 0).info.done, false, `world ${t}: the dig ended the episode`);
  }
}

// Worlds 2 and 6 (explore-diamond, seeds of SimEnv.reset): digging down from y 11 ends at y 3 and at y 1, the
// second in a shaft walled by bedrock on every side, where only pillaring up (jump_place) gets out.
for (const [seed, bottom] of [
  [2, 3],
  [6, 1],
] as const) {
  test(`world ${seed}: from the bottom of a shaft at y ${bottom}, the teacher climbs back to its tunnelling height without attacking bedrock`, () => {
    const task = resolveTask('explore-diamond');
    const env = new SimEnv(task);
    const features = new Float32Array(env.featureSize);
    env.reset(seed, features, 0);
    digDownToBedrock(env, features);
    assert.equal(Math.floor(env.entity.pos.y + 0.01), bottom);
    let s = hash32(seed, 0xc1);
    const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
    teacher.reset(env);
    const ray = new LookRay();
    const hit: BlockHit = { x: 0, y: 0, z: 0, t: 0 };
    let climbedAt = -1;
    for (let t = 0; t < 1500 && climbedAt < 0; t++) {
      const action = teacher.act(env);
      if (action === A.attack && targetBlock(env.world, ray.from(env.entity), hit)) {
        const name = blockNames[stateToBlock[env.world.stateAt(hit.x, hit.y, hit.z)]!];
        assert.notEqual(name, 'bedrock', `step ${t}: the teacher attacks bedrock at y ${hit.y}`);
      }
      const { info } = env.step(action, features, 0);
      assert.equal(info.died, false, `step ${t}: the teacher died (${info.deathCause})`);
      if (env.entity.pos.y >= (task.startY as number) - 2) climbedAt = t;
    }
    assert.ok(climbedAt >= 0, `still at y ${env.entity.pos.y.toFixed(1)} after 1,500 steps`);
  });
}

test('a DAgger round: the clone drives, the teacher labels the states it reaches (no yaw turns to a target the clone cannot see), episodes end at the training length on worlds of their own', () => {
  // A training length of 150 steps keeps the test short; the round must cut its episodes there, not at 60,000.
  const task = { ...resolveTask('explore-diamond'), trainEpisodeSteps: 150 };
  const net = newNetwork('js', { featureSize: new SimEnv(task).featureSize, numActions: GAME_FACTS.actions.length, hidden: [16] }, new Rng(1));
  try {
    const round = recordStudentStates(task, net, 3, 7, 1);
    assert.equal(round.episodes.length, 3);
    for (const e of round.episodes) assert.ok(e.steps <= 150, `an episode of ${e.steps} steps`);
    assert.ok(round.actions.length > 0);
    // An untrained clone turns, jumps and digs at random. The teacher's yaw turns towards its planned target are
    // left out (the clone cannot see the target; cloning them taught turning in place), so what is kept is
    // digging, walking and pitch, and fewer labels than states.
    const yawTurns = round.actions.filter((a) => a === A.turn_left || a === A.turn_right).length;
    assert.ok(yawTurns < 0.1 * round.actions.length, `${yawTurns} of ${round.actions.length} labels are yaw turns`);
    const steps = round.episodes.reduce((sum, e) => sum + e.steps, 0);
    assert.ok(round.actions.length < steps, `${round.actions.length} labels kept of ${steps} states`);
    // Its worlds are not the demonstrations' (round 0), so the clone is labelled in new places.
    for (let i = 0; i < 3; i++) assert.ok(!round.seeds.includes(demoStreamSeed(7, i, 0)));
    assert.ok(round.seeds.includes(demoStreamSeed(7, 0, 1)));
  } finally {
    net.dispose();
  }
});

test('pretrain --dagger-rounds: pretrain.json records each round, and held-out evaluation skips the worlds the rounds played', async () => {
  const out = mkdtempSync(path.join(tmpdir(), 'dagger-'));
  try {
    const { record } = await pretrain({
      task: loadTaskFile(fixture('short-approach-tree.yaml')),
      out,
      demos: 2,
      epochs: 2,
      seed: 3,
      daggerRounds: 2,
      evalEpisodes: 0,
      backend: 'js',
    });
    assert.deepEqual(
      record.dagger.map((d) => [d.round, d.student.n]),
      [
        [1, 2],
        [2, 2],
      ],
    );
    const dagger = record.dagger.reduce((sum, d) => sum + d.samples, 0);
    assert.ok(dagger > 0 && record.samples > dagger, `${record.samples} samples, ${dagger} of them labelled in DAgger rounds`);
    const { file } = readPolicyCheckpoint(path.join(out, RUN_FILES.checkpoint));
    for (const round of [0, 1, 2]) assert.ok(file.worldSeeds?.includes(demoStreamSeed(3, 0, round)), `round ${round}'s first world is not excluded`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("a task file's daggerRounds sets its foundation's DAgger rounds; a bad value is reported at its line", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'dagger-task-'));
  try {
    const file = path.join(dir, 'task.yaml');
    writeFileSync(file, 'id: deep\nextends: explore-diamond\ndaggerRounds: 2\n');
    assert.equal(loadTaskFile(file).daggerRounds, 2);
    writeFileSync(file, 'id: deep\nextends: explore-diamond\ndaggerRounds: -1\n');
    assert.throws(() => loadTaskFile(file), /task\.yaml:3:\d+.*daggerRounds/);
    assert.equal(resolveTask('approach-tree').daggerRounds, undefined, "approach-tree's foundation is the demonstrations' clone alone");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A sighted teacher at the start of world 5 of `task`, labelling a student (`follows`) or demonstrating. */
function sightedTeacherAtStart(task: TaskSpec, follows: boolean) {
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  env.reset(5, features, 0);
  const teacher = new Demonstrator(task, () => 0.5);
  teacher.followsStudent = follows;
  teacher.reset(env);
  return { env, features, teacher };
}

// The sighted teacher labelling a clone: its tunnel's heading follows the student's. Keeping its own heading, it
// labelled turns back to a heading the student never saw after every turn the student made on its own.
test('labelling a student that turned away on its own, the sighted teacher tunnels the way the student faces', () => {
  const task: TaskSpec = { ...resolveTask('explore-diamond'), teacher: 'sight' };
  const labels = (follows: boolean) => {
    const { env, features, teacher } = sightedTeacherAtStart(task, follows);
    // The teacher's own start (its look around) until it first digs, then the student turns 90° on its own.
    for (let t = 0; t < 200; t++) {
      const a = teacher.act(env);
      if (a === A.attack) break;
      env.step(a, features, 0);
    }
    for (let t = 0; t < 6; t++) env.step(A.turn_left, features, 0);
    const out: number[] = [];
    for (let t = 0; t < 10; t++) out.push(teacher.act(env));
    return out;
  };
  const yaw = (a: number) => a === A.turn_left || a === A.turn_right;
  const own = labels(false).filter(yaw).length,
    follows = labels(true).filter(yaw).length;
  assert.ok(own >= 5, `keeping its own heading it labels ${own} turns back of 10`);
  assert.ok(follows <= 1, `following the student it labels ${follows} yaw turns of 10`);
});

test('a DAgger round with the sighted teacher keeps its yaw turns: they follow what the clone sees, not a target it cannot', () => {
  const task: TaskSpec = { ...resolveTask('explore-diamond'), teacher: 'sight', trainEpisodeSteps: 150 };
  const net = newNetwork('js', { featureSize: new SimEnv(task).featureSize, numActions: GAME_FACTS.actions.length, hidden: [16] }, new Rng(1));
  try {
    const round = recordStudentStates(task, net, 2, 7, 1);
    const steps = round.episodes.reduce((sum, e) => sum + e.steps, 0);
    assert.equal(round.actions.length, steps, 'every state the clone reached is labelled');
    assert.ok(round.actions.some((a) => a === A.turn_left || a === A.turn_right));
  } finally {
    net.dispose();
  }
});

test('labelling a student that does not turn, the sighted teacher does not ask for its look around all episode', () => {
  const task: TaskSpec = { ...resolveTask('explore-diamond'), teacher: 'sight' };
  const { env, features, teacher } = sightedTeacherAtStart(task, true);
  // The student digs ahead whatever it is told; with its look around pending, the teacher labelled turns for ever
  // (DAgger on explore-diamond seed 7: 95 % of the labels, and a clone that turned in place).
  const labels: number[] = [];
  for (let t = 0; t < 200; t++) {
    labels.push(teacher.act(env));
    env.step(t % 3 === 2 ? A.forward : A.attack, features, 0);
  }
  const turns = labels.filter((a) => a === A.turn_left || a === A.turn_right).length;
  assert.ok(turns < 0.5 * labels.length, `${turns} of ${labels.length} labels are yaw turns`);
  assert.ok(labels.includes(A.attack), 'it labels digging');
});
