// The programmatic trajectory analyzer on recorded runs with known failure causes (rolled out in the simulator
// by runner/test/fixtures/runs/generate.ts): it must name the cause with evidence, and every patch it proposes
// must apply with GNU patch and with the extension's applier, lint clean, and compile in the reward runtime.
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { analyzeRun, type Analysis, type Suggestion } from '../src/analyze/analyze';
import { liveAnalysis } from '../src/analyze/live';
import { resolveTask } from '../src/tasks';
import { patchReward, PatchUnavailable, type PatchRequest } from '../src/analyze/patches';
import { parseEvent, type SuggestionEvent } from '../src/events';
import { RUN_FILES } from '../src/records';
import { compileRewardFile, RewardSandbox } from '../src/reward/index';
import type { EpisodeRecord } from '../src/records';
import { applyWithPatch, lintProblems } from './helpers/patch-check';
import { cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
// `rewardsmith analyze ARGS…` through the real dispatcher, this file's command lines in one process (helpers/cli-all.ts).
const session = cliSession(ROOT, 120_000);
after(() => session.close());
const cli = async (args: string[]) => {
  const r = await session.run(['analyze', ...args]);
  return { status: r.code, stdout: r.out, stderr: r.err };
};
const FIXTURES = path.join(__dirname, 'fixtures/runs');
const tmp = tempDir('rewardsmith-analyze-');
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A scratch copy of a fixture run (the analyzer writes suggestions.json into it). */
function runCopy(name: string): string {
  const dir = path.join(tmp, `${name}-${Math.random().toString(36).slice(2, 8)}`);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** Every suggestion with a diff: applies exactly, lints clean, compiles under the reward runtime's contract check. */
function checkPatches(a: Analysis): void {
  const rewardFile = a.rewardFile!;
  const before = lintProblems(rewardFile, readFileSync(rewardFile, 'utf8'));
  for (const s of a.suggestions.filter((x) => x.diff)) {
    const patched = applyWithPatch(rewardFile, s.diff!);
    const file = path.join(tmp, `${s.id}-${path.basename(path.dirname(rewardFile))}.reward.ts`);
    writeFileSync(file, patched);
    assert.deepEqual(lintProblems(file, patched), before, `${s.id}: the patch adds no lint errors or warnings`);
    compileRewardFile(file); // throws a located RewardError if the reward runtime rejects the patched file
    assert.ok(s.lines && s.lines[0] >= 1 && s.lines[1] >= s.lines[0], `${s.id}: has a 1-based line range`);
  }
}

const byId = (a: Analysis, id: string): Suggestion => {
  const s = a.suggestions.find((x) => x.id === id);
  assert.ok(s, `expected a ${id} suggestion, got ${a.suggestions.map((x) => x.id).join(', ')}`);
  return s;
};

describe('analyze: recorded runs with known failure causes', () => {
  test('agents dying in lava: lava is the main death cause, lava was in view, the patch penalises lava in view', async () => {
    const dir = runCopy('lava-deaths');
    const a = await analyzeRun(dir);
    assert.equal(a.mainDeathCause, 'lava');
    assert.equal(a.deathCauses.lava, 3);
    const lava = a.suggestions[0]!;
    assert.equal(lava.id, 'death-lava', 'deaths are listed first');
    assert.match(lava.message, /^Main death cause: lava\. 3 failed episodes of 6 .* death by lava; the lava was in view before death in 3 of them/);
    assert.deepEqual(lava.episodes.map((e) => e.episode).sort(), [0, 1, 2]);
    for (const e of lava.episodes) assert.ok(e.steps && e.steps[0] <= e.steps[1], 'evidence has a step range');
    assert.match(lava.evidence, /episode 0 \(seed 2\), steps \d+–309: died of lava at step 309; lava in view/);
    assert.ok(lava.diff, lava.patchUnavailable);
    assert.match(lava.diff!, /^\+const LAVA_PENALTY_DISTANCE = \d+;/m);
    assert.match(lava.diff!, /^\+ +const lava_in_view = current_nearest_blocks\['lava'\];$/m);
    assert.match(lava.diff!, /^\+ +if \(lava_in_view !== undefined && lava_in_view\[0\] < LAVA_PENALTY_DISTANCE\) return -1;$/m);
    checkPatches(a);

    // The patched reward, replayed on the recorded steps before a death, now punishes lava in view.
    const episode = JSON.parse(readFileSync(path.join(dir, RUN_FILES.episodes), 'utf8').split('\n')[0]!) as EpisodeRecord;
    const patchedFile = path.join(tmp, 'lava-patched.reward.ts');
    writeFileSync(patchedFile, applyWithPatch(a.rewardFile!, lava.diff!));
    const distance = Number(/LAVA_PENALTY_DISTANCE = (\d+)/.exec(lava.diff!)![1]);
    // The sandbox's host process does not hold the event loop open; this timer does while we await it.
    const keepAlive = setInterval(() => undefined, 1000);
    const sandbox = await RewardSandbox.open(patchedFile, 1);
    try {
      const obs = episode.lastSteps.map((s) => ({
        nearest: s.nearest,
        inventory_change: s.inventory_change,
        health: s.health,
        position: s.position,
        damage_dealt: 0,
        kill_entity: {},
      }));
      await sandbox.beginEpisodes([0], [obs[0]!]);
      for (const o of obs.slice(1)) {
        const [r] = await sandbox.step([o]);
        const lavaNear = o.nearest['lava'] !== undefined && o.nearest['lava'][0] < distance;
        // Dense −1 makes the reward −0.1 (or −1.1 with the sparse penalty for getting hurt).
        if (lavaNear) assert.ok(r! < 0, `lava at ${o.nearest['lava']![0]} m: reward ${r} is not negative`);
      }
    } finally {
      await sandbox.close();
      clearInterval(keepAlive);
    }
  });

  test('records written by `rewardsmith rollout` (a random policy that fell into lava) read the same', async () => {
    // Made with: rewardsmith rollout --task explore-diamond --policy random --steps 20000 --seed 1 --envs 8
    const dir = runCopy('random-rollout-lava');
    const a = await analyzeRun(dir, { rewardFile: path.join(ROOT, 'runner/rewards/explore-diamond.dense.reward.ts') });
    assert.equal(a.mainDeathCause, 'lava');
    const lava = a.suggestions[0]!;
    assert.equal(lava.id, 'death-lava');
    assert.match(lava.message, /The reward already reads lava \(line [\d, ]+\), and the agents died anyway/);
    assert.match(lava.diff!, /^\+ +if \(lava_in_view !== undefined && lava_in_view\[0\] < LAVA_PENALTY_DISTANCE\) return -1;$/m);
    assert.ok(!a.suggestions.some((s) => s.kind === 'reward-never-positive'), 'a reward-less rollout says nothing about the reward sign');
    checkPatches(a);
  });

  test('spinning on the spot: stuck, with the turning and the positive reward as evidence; a standing-still penalty', async () => {
    const a = await analyzeRun(runCopy('spin-in-place'));
    assert.equal(a.mainDeathCause, null);
    const stuck = byId(a, 'stuck');
    assert.match(
      stuck.message,
      /5 failed episodes of 5 \(100 %\) spent most of their time without moving; in 5 of them the reward was still positive while standing still|5 failed episodes of 5 \(100 %\) spent most of their time without moving \(100 % of all failed-episode steps\); in 5 of them the reward was still positive/,
    );
    assert.match(stuck.evidence, /turn_left ×32, turned \d+° in place; reward \+\d+/);
    assert.match(stuck.diff!, /^\+ +if \(Math\.hypot\(stuck_x1 - stuck_x0, stuck_z1 - stuck_z0\) < STUCK_RADIUS\) return -1;$/m);
    assert.ok(!a.suggestions.some((s) => s.id === 'back-and-forth'), 'spinning is not back-and-forth');
    // The bundled reward pays for turning towards a log and never for turning away: spinning farms it.
    const turning = byId(a, 'turning-farmed');
    assert.match(turning.evidence, /turned on the spot on 31 of the last 32 steps and the reward was positive on \d+ of them \(in view then: .*oak_log/);
    assert.match(turning.diff!, /^\+ +if \(Math\.abs\(now\[1\]\) > Math\.abs\(before\[1\]\) \+ 0\.01\) return -1; \/\/ turned away from it/m);
    checkPatches(a);
  });

  test('walking back and forth on a "moved" bonus: farming found, the bonus replaced by an unvisited-cell bonus', async () => {
    const a = await analyzeRun(runCopy('back-and-forth'));
    const bf = a.suggestions[0]!;
    assert.equal(bf.id, 'back-and-forth');
    assert.match(
      bf.message,
      /6 failed episodes of 6 \(100 %\) walked back and forth with no net progress, and in 6 of them the reward paid more often than it cost/,
    );
    assert.ok(!a.suggestions.some((s) => s.id === 'stuck'), 'walking back and forth is not standing still');
    // The movement bonus and the locals that only fed it go; a GLOBAL_DATA set of visited cells comes in.
    assert.match(bf.diff!, /^- +if \(moved > 0\.05\) return 1; \/\/ keep moving$/m);
    assert.match(bf.diff!, /^- +const moved = Math\.hypot\(x1 - x0, z1 - z0\);$/m);
    assert.match(bf.diff!, /^\+ +if \(!\('visited_cells' in GLOBAL_DATA\)\) GLOBAL_DATA\.visited_cells = new Set\(\);$/m);
    assert.match(bf.diff!, /^\+ +if \(!GLOBAL_DATA\.visited_cells\.has\(cell_key\)\) \{$/m);
    checkPatches(a);
  });

  test('looking at the floor: extreme pitch and the pig never seen; the exported dense gains the parameters it needs', async () => {
    const a = await analyzeRun(runCopy('look-down'));
    const pitch = byId(a, 'extreme-pitch');
    assert.match(pitch.message, /6 failed episodes of 6 \(100 %\) held the pitch beyond ±30°/);
    assert.match(pitch.evidence, /pitch 90° \(down\) held for 32 of the last 32 steps/);
    assert.match(pitch.diff!, /^-export function dense\(current_nearest_blocks, previous_nearest_blocks\) \{$/m);
    assert.match(
      pitch.diff!,
      /^\+export function dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions\) \{$/m,
    );
    assert.match(byId(a, 'timeout-target-unseen').message, /without the target \(pig\) in view/);
    checkPatches(a);
  });

  test('a sparse reward on a random walk: never positive; an exploration bonus goes into the empty dense term', async () => {
    const a = await analyzeRun(runCopy('sparse-random'));
    assert.match(byId(a, 'reward-never-positive').message, /never positive in 192 recorded steps of 6 episodes \(values seen: 0\): it was 0 throughout/);
    const explore = byId(a, 'timeout-target-unseen');
    assert.match(explore.diff!, /^\+ +if \(nearest_target\(current_nearest_blocks\) !== undefined\) GLOBAL_DATA\.target_seen = true;/m);
    assert.match(explore.diff!, /^\+ +if \(!\('target_seen' in GLOBAL_DATA\)\) \{$/m);
    assert.match(explore.diff!, /^\+ +GLOBAL_DATA\.visited_cells\.add\(cell_key\);$/m);
    checkPatches(a);

    // Searching pays until the target is first seen, never after: wandering to new cells must not outpay walking up to it.
    const patchedFile = path.join(tmp, 'explore-patched.reward.ts');
    writeFileSync(patchedFile, applyWithPatch(a.rewardFile!, explore.diff!));
    const keepAlive = setInterval(() => undefined, 1000);
    const sandbox = await RewardSandbox.open(patchedFile, 1);
    try {
      const at = (x: number, cow: boolean) => ({
        nearest: (cow ? { cow: [20, 0, 0] } : {}) as Record<string, [number, number, number]>,
        inventory_change: {},
        health: 10,
        position: [x, 64, 0, 0, 0] as [number, number, number, number, number],
        damage_dealt: 0,
        kill_entity: {},
      });
      await sandbox.beginEpisodes([0], [at(0, false)]);
      const [newCellBefore] = await sandbox.step([at(10, false)]);
      assert.ok(newCellBefore! > 0, `a new cell before any sighting pays (${newCellBefore})`);
      await sandbox.step([at(11, true)]);
      const [newCellAfter] = await sandbox.step([at(30, false)]);
      assert.ok(!(newCellAfter! > 0), `a new cell after the cow was seen pays nothing (${newCellAfter})`);
    } finally {
      await sandbox.close();
      clearInterval(keepAlive);
    }
  });

  test('a reward that pays for being alive: always positive, and the idle agent is stuck', async () => {
    const a = await analyzeRun(runCopy('alive-bonus'));
    assert.match(byId(a, 'reward-always-positive').message, /positive on every one of 128 recorded steps of 4 episodes \(values seen: 0\.1\)/);
    assert.match(byId(a, 'stuck').message, /in 4 of them the reward was still positive while standing still/);
    checkPatches(a);
  });

  test('the weak approach-tree reward (knows only oak_log, pays any approach): ≥ 80 % of failures explained, each cause with its episodes', async () => {
    // 30 held-out episodes of a 256,000-frame run (seed 7) of runner/test/fixtures/rewards/weak-approach-tree.reward.ts.
    const dir = runCopy('weak-tree');
    const a = await analyzeRun(dir);
    assert.equal(a.failed_episodes, 22);
    assert.ok(a.explained_episodes / a.failed_episodes >= 0.8, `explained ${a.explained_episodes} of ${a.failed_episodes}`);
    const failedIds = new Set(
      readEpisodesOf(dir)
        .filter((e) => !e.success)
        .map((e) => e.episode),
    );
    for (const s of a.suggestions) for (const id of s.episode_ids) assert.ok(failedIds.has(id), `${s.id}: episode ${id} is a failed one`);
    // approach-tree's success counts birch logs too, but plains grow oak only: reading only oak_log misses
    // nothing, and no patch adds a name the world cannot hold.
    assert.ok(!a.suggestions.some((s) => s.id === 'reward-misaligned'), a.suggestions.map((s) => s.id).join(', '));
    for (const s of a.suggestions) assert.doesNotMatch(s.diff ?? '', /birch/, `${s.id} adds birch_log to a plains reward`);
    const gamed = byId(a, 'reward-gamed');
    assert.match(
      gamed.message,
      /re-run in the sandbox on the recorded observations of the failed episodes, the dense term was positive on \d+ % of the \d+ steps .* no progress/,
    );
    assert.match(gamed.message, /Failing pays more than succeeding/);
    // While training runs, the same classifier sees the rewards the agent received, and says that rather than "re-run".
    const reward = path.join(dir, RUN_FILES.rewardCopy);
    const live = await liveAnalysis(readEpisodesOf(dir), {
      frames: 64_000,
      totalFrames: 256_000,
      task: resolveTask('approach-tree'),
      reward: { file: reward, text: readFileSync(reward, 'utf8') },
    });
    const liveGamed = live.find((e) => e.type === 'suggestion' && e.id === 'training/reward-gamed');
    assert.ok(liveGamed && liveGamed.type === 'suggestion', live.map((e) => (e.type === 'suggestion' ? e.id : e.type)).join(', '));
    assert.match(liveGamed.message, /in the rewards the agent received during training \(recorded, not re-run\), the dense term was positive/);
    assert.doesNotMatch(liveGamed.message, /re-run (in the sandbox )?on the recorded/);
    assert.match(byId(a, 'target-not-approached').message, /had the target \(oak_log\) in view and did not walk up to it/);
    assert.equal(a.causes['reward-gamed'], gamed.episode_ids.length);
    checkPatches(a);
    const out = await cli([dir]);
    assert.match(out.stdout, /Coverage: \d+ of 22 failed episodes explained \(\d+ %\); causes: .*reward-gamed \d+/);
    const written = JSON.parse(readFileSync(path.join(dir, RUN_FILES.suggestions), 'utf8'));
    assert.equal(written.failed_episodes, 22);
    assert.equal(written.explained_episodes, a.explained_episodes);
  });

  test('the same reward in the dense/sparse layout gets the same two patches, lint-clean', () => {
    const file = path.join(__dirname, 'fixtures/rewards/weak-approach-tree.dense-sparse.reward.ts');
    const text = readFileSync(file, 'utf8');
    const widened = patchReward(file, text, { kind: 'target-names', known: ['oak_log'], targets: ['oak_log', 'birch_log'], why: 'birch counts.' });
    assert.match(widened.diff, /^\+ +const log_now = nearest_target\(current_nearest_blocks\);$/m);
    assert.match(widened.diff, /^\+ +const log = nearest_target\(current_nearest_blocks\);$/m);
    const approach = patchReward(file, widened.patched, { kind: 'approach-record', targets: ['oak_log', 'birch_log'], step: 0.1, why: 'creeping paid.' });
    assert.doesNotMatch(approach.diff, /nearest_target_2/, 'the helper added by the first patch is reused');
    assert.match(
      approach.diff,
      /^-export function dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions\) \{$/m,
    );
    assert.match(
      approach.diff,
      /^\+export function dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA\) \{$/m,
    );
    const out = path.join(tmp, 'weak-both.reward.ts');
    writeFileSync(out, approach.patched);
    assert.deepEqual(lintProblems(out, approach.patched), []);
    compileRewardFile(out);
  });
});

function readEpisodesOf(dir: string): EpisodeRecord[] {
  return readFileSync(path.join(dir, RUN_FILES.episodes), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as EpisodeRecord);
}

describe('analyze: patches on every bundled reward', () => {
  const requests: PatchRequest[] = [
    { kind: 'hazard-penalty', names: ['lava'], distance: 4, why: 'lava.' },
    { kind: 'hazard-penalty', names: ['zombie', 'skeleton'], distance: 4, label: 'mob', why: 'mobs.' },
    { kind: 'pitch-limit', degrees: 45, why: 'pitch.' },
    { kind: 'stuck-penalty', window: 20, radius: 0.5, why: 'stuck.' },
    { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log', 'birch_log'], why: 'explore.' },
    { kind: 'symmetric-turning', why: 'turning.' },
    { kind: 'movement-to-cells', cellSize: 2, why: 'cells.' },
    { kind: 'approach-record', targets: ['oak_log', 'birch_log'], step: 0.1, why: 'approach.' },
  ];
  const rewards = path.join(ROOT, 'runner/rewards');
  const files = readdirRewards(rewards);
  // patchReward refuses any patch that adds a lint diagnostic; the fixture tests above re-lint independently,
  // so this matrix checks the diff and the runtime's compile (keeping the suite's time down).
  test('each patch either applies and compiles, or says why there is no place for it', () => {
    let made = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const req of requests) {
        try {
          const p = patchReward(file, text, req);
          assert.equal(applyWithPatch(file, p.diff), p.patched, `${path.basename(file)} ${req.kind}`);
          compileRewardFile(file, p.patched);
          made++;
        } catch (err) {
          if (!(err instanceof PatchUnavailable)) throw err;
          assert.match(err.message, /already pays|no bonus conditioned|no bonus for turning/, `${path.basename(file)} ${req.kind}: ${err.message}`);
        }
      }
    }
    assert.ok(made >= files.length * 4, `${made} patches made`);
  });

  test('a reward file that does not parse gets no patch, and the reason says where it is broken', () => {
    const file = path.join(tmp, 'broken.reward.ts');
    const text = readFileSync(path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts'), 'utf8').replace(/return 1;/, 'return 1 +;');
    const line = text.split('\n').findIndex((l) => l.includes('return 1 +;')) + 1;
    assert.throws(
      () => patchReward(file, text, { kind: 'pitch-limit', degrees: 45, why: 'pitch.' }),
      (err: Error) => err instanceof PatchUnavailable && new RegExp(`does not parse \\(line ${line}, column \\d+: Expression expected`).test(err.message),
    );
  });
});

describe('analyze: command line', () => {
  test('--events ndjson streams suggestion events and writes suggestions.json', async () => {
    const dir = runCopy('lava-deaths');
    const reward = path.join(dir, 'explore-diamond.reward.ts');
    cpSync(path.join(dir, RUN_FILES.rewardCopy), reward);
    const r = await cli([dir, '--reward', reward, '--events', 'ndjson']);
    assert.equal(r.status, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => parseEvent(l));
    assert.ok(
      events.every((e) => e !== undefined),
      'stdout holds only events',
    );
    const suggestions = events.filter((e): e is SuggestionEvent => e!.type === 'suggestion');
    assert.equal(suggestions[0]!.id, 'death-lava');
    assert.match(suggestions[0]!.diff!, /^\+\+\+ b\/explore-diamond\.reward\.ts$/m);
    assert.match(r.stderr, /Main death cause: lava\./);
    const written = JSON.parse(readFileSync(path.join(dir, RUN_FILES.suggestions), 'utf8')) as Analysis;
    assert.equal(written.rewardFile, reward);
    assert.deepEqual(
      written.suggestions.map((s) => s.id),
      suggestions.map((s) => s.id),
    );
    assert.ok(written.suggestions.every((s) => typeof s.evidence === 'string' && s.evidence.length > 0 && s.episodes.length > 0));
  });

  test('a malformed episode line is reported with its file and line, and nothing is written', async () => {
    const dir = runCopy('spin-in-place');
    const file = path.join(dir, RUN_FILES.episodes);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = lines[2]!.slice(0, 50);
    writeFileSync(file, lines.join('\n'));
    const r = await cli([dir]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /eval\/episodes\.ndjson:3: not valid JSON/);
    assert.throws(() => readFileSync(path.join(dir, RUN_FILES.suggestions)), /ENOENT/);
    const usage = await cli([]);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /^rewardsmith analyze: missing RUN_DIR\nRun `rewardsmith analyze --help` for its options/);
  });
});

function readdirRewards(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.reward.ts'))
    .map((f) => path.join(dir, f));
}
