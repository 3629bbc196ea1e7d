// The no-LLM loop's decision and what it records, with scripted candidate outcomes: training and the extra
// evaluations go through the loop's RunSteps seam (the real patch sets, decision rule, records and table
// otherwise). Three iterations from a weak reward that lost ground against its foundation:
//   iteration 1: the starting reward, 11 of 100 (the foundation had 22 of 100);
//   iteration 2: candidate 1 ahead (20 of 100) but not yet shown better, then better over 200 episodes each:
//                kept; candidate 2 (15 of 100) not the best;
//   iteration 3: candidate 1 ahead at every look (28 → 55/200 → 80/300 against 20 → 41 → 65), never shown
//                better: rejected although its figure is the best of the loop; candidate 2 worse (8 of 100).
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { DECISION_LOOKS, runLoop } from '../src/llm/loop';
import type { ExtraEvaluation, LoopResult, RunSteps } from '../src/llm/loop-types';
import { resultsTable } from '../src/llm/loop-results';
import { rateRecord, type RunSummary, type SuggestionsRecord } from '../src/records';
import { resolveTask } from '../src/tasks';
import type { TrainStepOptions } from '../src/llm/train-step';
import { belowStartingPolicy, evaluateCheckpoint, train } from '../src/runs/train';
import { readEpisodes } from '../src/records';
import { tempDir } from './helpers/tmp';
import type { RunnerEvent } from '../src/events';

const WEAK = path.join(__dirname, 'fixtures/rewards/weak-approach-tree.reward.ts');

/** The no-LLM loop from WEAK on approach-tree, 2 candidates, its training and evaluation scripted by `runSteps`. */
function scriptedLoop(out: string, iterations: number, runSteps: RunSteps, say: (line: string) => void = () => {}): Promise<LoopResult> {
  return runLoop({
    task: resolveTask('approach-tree'),
    iterations,
    out,
    candidates: 2,
    steps: 2048,
    seed: 7,
    startReward: WEAK,
    noLlm: true,
    foundation: { demos: 4 },
    train: { evalEpisodes: 100 },
    say,
    runSteps,
  });
}
const out = tempDir('loop-decision-');
after(() => rmSync(out, { recursive: true, force: true }));

function summary(count: number, n: number): RunSummary {
  const success = rateRecord(count, n);
  const death = rateRecord(Math.floor(n / 10), n);
  return {
    task: 'approach-tree',
    reward_file: WEAK,
    reward_sha256: null,
    seed: 7,
    env: 'sim',
    env_steps: 2048,
    wall_seconds: 1,
    backend: 'cpu',
    train: {
      updates: 1,
      frames: 2048,
      mean_return: 0,
      success_rate: null,
      success: { ...rateRecord(0, 0), started_from_frame: 0, started_to_frame: 0, mean_return: null },
      entropy: 1,
      fps: 1,
    },
    eval: {
      episodes: n,
      success_rate: count / n,
      death_rate: death.rate!,
      success,
      death,
      death_causes: {},
      avg_steps: 100,
      avg_distance_moved: 10,
    },
    generalisation_gap: null,
  };
}

const approach = { kind: 'approach-record' as const, targets: ['oak_log', 'birch_log'], step: 0.1 };
function finding(id: string, episodes: number, patch?: object) {
  return {
    id,
    kind: id,
    share: episodes / 89,
    message: `${id}: scripted finding`,
    evidence: '',
    episodes: [],
    episode_ids: Array.from({ length: episodes }, (_, i) => i),
    ...(patch ? { patch: { ...patch, why: `${id}.` } } : {}),
  };
}
/** The analysis of each reward's run: the starting reward's, then the one iteration 2 keeps. */
const ANALYSES: Record<string, ReturnType<typeof finding>[]> = {
  'iteration-1': [
    finding('reward-gamed', 56, approach),
    finding('target-not-approached', 11, approach),
    finding('reward-misaligned', 5, { kind: 'target-names', known: ['oak_log'], targets: ['oak_log', 'birch_log'] }),
    finding('died-in-lava', 3),
  ],
  'iteration-2': [finding('looked-down', 30, { kind: 'pitch-limit', degrees: 60 }), finding('stuck', 20, { kind: 'stuck-penalty', window: 20, radius: 1 })],
};
/** Held-out successes of 100 episodes per trained candidate, by iteration/candidate. */
const TRAINED: Record<string, number> = {
  'iteration-1/candidate-1': 11,
  'iteration-2/candidate-1': 20,
  'iteration-2/candidate-2': 15,
  'iteration-3/candidate-1': 28,
  'iteration-3/candidate-2': 8,
};
/** Extra looks, 100 episodes each: [candidate, reward in force] by iteration/look. */
const LOOKS: Record<string, [number, number]> = {
  'iteration-2/look-2': [24, 10],
  'iteration-3/look-2': [27, 21],
  'iteration-3/look-3': [25, 24],
};

test('loop --no-llm decides by the difference test, evaluates close calls again on fresh worlds, and records every candidate', async () => {
  // The foundation the loop would build, already there (a resumed experiment reuses it): 22 of 100 held-out.
  const foundation = path.join(out, 'foundation');
  mkdirSync(foundation, { recursive: true });
  writeFileSync(path.join(foundation, 'summary.json'), JSON.stringify(summary(22, 100)));
  writeFileSync(path.join(foundation, 'pretrain.json'), JSON.stringify({ demos: 4 }));

  const trainedRuns: string[] = [];
  const evaluations: ExtraEvaluation[] = [];
  const steps: RunSteps = {
    async train(o: TrainStepOptions) {
      const key = path.relative(out, o.out).split(path.sep).slice(0, 2).join('/');
      const count = TRAINED[key];
      assert.ok(count !== undefined, `unexpected training of ${key}`);
      trainedRuns.push(key);
      assert.equal(o.init, foundation, 'every candidate fine-tunes the foundation');
      mkdirSync(o.out, { recursive: true });
      writeFileSync(path.join(o.out, 'summary.json'), JSON.stringify(summary(count, 100)));
      const analysis: Partial<SuggestionsRecord> = {
        failed_episodes: 100 - count,
        explained_episodes: 100 - count,
        suggestions: (ANALYSES[key.split('/')[0]!] ?? []) as never,
      };
      writeFileSync(path.join(o.out, 'suggestions.json'), JSON.stringify(analysis));
      return { ok: true };
    },
    async evaluate(o) {
      evaluations.push(o);
      const [iteration, , look, who] = path.relative(out, o.out).split(path.sep);
      const counts = LOOKS[`${iteration}/${look}`];
      assert.ok(counts, `unexpected evaluation ${o.out}`);
      const count = who === 'current' ? counts[1] : counts[0];
      const seeds = Array.from({ length: o.episodes }, (_, i) => o.seed + i);
      return { success: rateRecord(count, o.episodes), death: rateRecord(0, o.episodes), seeds };
    },
  };
  const lines: string[] = [];
  const result: LoopResult = await scriptedLoop(out, 3, steps, (l) => lines.push(l));
  assert.deepEqual(trainedRuns, Object.keys(TRAINED));
  const [it1, it2, it3] = result.iterations;

  // Iteration 1: the starting reward, below its own foundation by the test (11 vs 22 of 100).
  const start = it1!.candidates[0]!;
  assert.equal(start.decision, 'kept (the starting reward)');
  assert.equal(start.below_start?.verdict, 'worse');

  // Iteration 2: candidate 1 ahead by 9 points, not shown better at 100 episodes each; both rewards are
  // evaluated on 100 more fresh worlds, and at 44 of 200 against 21 of 200 it is better: kept.
  assert.equal(it2!.chosen, 1);
  assert.equal(it2!.kept_previous, false);
  const d2 = it2!.decision!;
  assert.equal(d2.alpha_per_look, 0.05 / (DECISION_LOOKS * 2), 'Bonferroni over the looks and the two candidates');
  assert.deepEqual(
    d2.looks.map((l) => [l.candidate.count, l.candidate.n, l.current.count, l.current.n, l.comparison.verdict]),
    [
      [20, 100, 11, 100, 'no difference'],
      [44, 200, 21, 200, 'better'],
    ],
  );
  assert.equal(d2.current.reward, 'iteration-1/candidate-1/attempt-1/approach-tree.reward.ts');
  const kept = it2!.candidates[0]!;
  assert.match(kept.decision!, /^kept: better by \+11\.5 pts \[\+\d+\.\d, \+\d+\.\d\] \(98\.3 % CI\) over 200 and 200 held-out episodes$/);
  assert.deepEqual([kept.success?.count, kept.success?.n], [44, 200]);
  assert.equal(it2!.candidates[1]!.decision, 'not kept: candidate 1 did better');
  assert.equal(readFileSync(path.join(out, it2!.reward!), 'utf8'), readFileSync(path.join(out, kept.reward!), 'utf8'));

  // Iteration 3: ahead at every look but never shown better (80 of 300 against 65 of 300): the reward in force stays.
  assert.equal(it3!.chosen, 0);
  assert.equal(it3!.kept_previous, true);
  const d3 = it3!.decision!;
  assert.equal(d3.looks.length, DECISION_LOOKS);
  assert.deepEqual(
    d3.looks.map((l) => [l.candidate.count, l.current.count, l.current.n]),
    [
      [28, 20, 100],
      [55, 41, 200],
      [80, 65, 300],
    ],
  );
  assert.ok(d3.looks.every((l) => l.comparison.verdict === 'no difference' && l.comparison.difference > 0));
  const rejectedBetter = it3!.candidates[0]!;
  assert.match(rejectedBetter.decision!, /^not better: difference \+5\.0 pts \[−\d+\.\d, \+\d+\.\d\] \(98\.3 % CI\) over 300 and 300 held-out episodes$/);
  const rejectedWorse = it3!.candidates[1]!;
  assert.equal(rejectedWorse.versus_current?.verdict, 'worse');
  assert.equal(rejectedWorse.decision, 'not kept: worse than the reward in force');
  assert.equal(rejectedWorse.below_start?.verdict, 'worse', '8 of 100 is below the foundation too');
  assert.equal(readFileSync(path.join(out, it3!.reward!), 'utf8'), readFileSync(path.join(out, kept.reward!), 'utf8'));

  // The extra looks ran on fresh worlds: each look its own evaluation stream, both rewards on the same one, and
  // every world evaluated before left out.
  assert.equal(evaluations.length, 6);
  const look3 = evaluations.filter((e) => e.out.includes(`iteration-3${path.sep}decision${path.sep}look-3`));
  const look2 = evaluations.filter((e) => e.out.includes(`iteration-3${path.sep}decision${path.sep}look-2`));
  assert.equal(look3[0]!.seed, look3[1]!.seed);
  assert.notEqual(look2[0]!.seed, look3[0]!.seed);
  for (const s of [look2[0]!.seed, look2[0]!.seed + 99]) assert.ok(look3[0]!.excludeSeeds.includes(s), `look 3 leaves out look 2's world ${s}`);
  assert.deepEqual(
    evaluations.map((e) => e.episodes),
    [100, 100, 100, 100, 100, 100],
  );

  // Suggestions: which candidates applied each, with their measured effect, and whether kept.
  const outcome = (id: string) => result.suggestion_outcomes.find((s) => s.id === id)!;
  assert.deepEqual(
    outcome('reward-gamed').applied_in.map((a) => [a.iteration, a.candidate, a.kept, a.versus_current?.verdict]),
    [
      [2, 1, true, 'better'],
      [2, 2, false, 'no difference'],
    ],
  );
  assert.equal(outcome('reward-gamed').helped, true);
  assert.deepEqual(
    outcome('reward-misaligned').applied_in.map((a) => [a.iteration, a.candidate]),
    [[2, 1]],
  );
  assert.equal(outcome('died-in-lava').applied, false, 'a finding with no patch was applied by no candidate');
  assert.deepEqual(outcome('died-in-lava').applied_in, []);
  const lookedDown = outcome('looked-down');
  assert.equal(lookedDown.iteration, 2);
  assert.deepEqual(
    lookedDown.applied_in.map((a) => [a.iteration, a.candidate, a.kept]),
    [
      [3, 1, false],
      [3, 2, false],
    ],
  );
  assert.equal(lookedDown.helped, false);

  // The best reward measured in the whole loop is iteration 3's rejected candidate (80 of 300 = 26.7 %).
  assert.deepEqual(
    [result.best?.iteration, result.best?.candidate, result.best?.kept, result.best?.success.count, result.best?.success.n],
    [3, 1, false, 80, 300],
  );
  assert.equal(result.best?.reward, rejectedBetter.reward);

  // results.json holds the same, and results.txt is the table the CLI prints.
  const stored = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as LoopResult;
  assert.deepEqual(stored.best, result.best);
  assert.equal(stored.iterations[2]!.candidates[0]!.decision, rejectedBetter.decision);
  const table = resultsTable(result, out);
  if (process.env.SHOW_TABLE) console.log(table);
  assert.equal(readFileSync(path.join(out, 'results.txt'), 'utf8'), table + '\n');
  const row = (iteration: number, candidate: number) => table.split('\n').find((l) => new RegExp(`^${iteration} +${candidate} `).test(l)) ?? '';
  assert.match(row(1, 1), /11\.0 % \[6\.3–18\.6 %\] of 100, below the foundation's 22\.0 % \[15\.0–31\.1 %\] of 100 .* kept \(the starting reward\)/);
  assert.match(
    row(2, 1),
    /22\.0 % \[[\d.]+–[\d.]+ %\] of 200 .* \+11\.5 pts \[.*\] \(98\.3 % CI\) +reward-gamed\+target-not-approached\+reward-misaligned +kept: better by/,
  );
  assert.match(row(2, 2), /15\.0 % .* of 100 .* reward-gamed\+target-not-approached +not kept: candidate 1 did better/);
  assert.match(row(3, 1), /26\.7 % .* of 300 .* \+5\.0 pts .* not better: difference \+5\.0 pts/);
  assert.match(row(3, 2), /8\.0 % .* of 100, below the foundation's 22\.0 % .* −12\.0 pts .* not kept: worse than the reward in force/);
  assert.match(
    table,
    /^ {2}reward-gamed \(iteration 1's analysis\): applied in iteration 2 candidate 1: 22\.0 % \[[\d.]+–[\d.]+ %\] of 200, \+11\.5 pts .*, kept; iteration 2 candidate 2: 15\.0 % .* of 100, \+4\.0 pts .*, not kept — /m,
  );
  assert.match(table, /^ {2}died-in-lava \(iteration 1's analysis\): not applied — /m);
  assert.match(
    table,
    /^Best reward measured: iteration 3, candidate 1: 26\.7 % \[[\d.]+–[\d.]+ %\] of 300 held-out \(not better: .*\)\. File: .*iteration-3\/candidate-1\/attempt-1\/approach-tree\.reward\.ts$/m,
  );
  // The progress lines name a result below the foundation as it comes (as the table does), and not one that is not.
  assert.deepEqual(
    lines.filter((l) => /^ {2}candidate \d: held-out success/.test(l)),
    [
      "  candidate 1: held-out success 11.0 % [6.3–18.6 %] of 100, below the foundation's 22.0 % [15.0–31.1 %] of 100",
      '  candidate 1: held-out success 20.0 % [13.3–28.9 %] of 100',
      '  candidate 2: held-out success 15.0 % [9.3–23.3 %] of 100',
      '  candidate 1: held-out success 28.0 % [20.1–37.5 %] of 100',
      "  candidate 2: held-out success 8.0 % [4.1–15.0 %] of 100, below the foundation's 22.0 % [15.0–31.1 %] of 100",
    ],
  );
  // The progress lines say why more episodes were evaluated.
  assert.ok(
    lines.some((l) =>
      /iteration 3: candidate 1 is ahead, \+8\.0 pts .* but not shown better; evaluating both rewards on 100 more held-out worlds \(look 2 of 3\)/.test(l),
    ),
  );
});

test("a resumed loop lists the suggestions of its runs' analyses as they are now, re-analysed since", async () => {
  const dir = path.join(out, 'resumed');
  const foundation = path.join(dir, 'foundation');
  mkdirSync(foundation, { recursive: true });
  writeFileSync(path.join(foundation, 'summary.json'), JSON.stringify(summary(22, 100)));
  writeFileSync(path.join(foundation, 'pretrain.json'), JSON.stringify({ demos: 4 }));
  const analysed = (findings: ReturnType<typeof finding>[], count: number): Partial<SuggestionsRecord> => ({
    failed_episodes: 100 - count,
    explained_episodes: 100 - count,
    suggestions: findings as never,
  });
  const trained: string[] = [];
  const steps: RunSteps = {
    async train(o: TrainStepOptions) {
      const key = path.relative(dir, o.out).split(path.sep).slice(0, 2).join('/');
      trained.push(key);
      const count = key === 'iteration-1/candidate-1' ? 11 : 5;
      mkdirSync(o.out, { recursive: true });
      writeFileSync(path.join(o.out, 'summary.json'), JSON.stringify(summary(count, 100)));
      writeFileSync(path.join(o.out, 'suggestions.json'), JSON.stringify(analysed([finding('reward-gamed', 56, approach), finding('died-in-lava', 3)], count)));
      return { ok: true };
    },
    evaluate: () => assert.fail('no close call to look at again'),
  };
  const loop = (iterations: number) => scriptedLoop(dir, iterations, steps);
  const first = await loop(1);
  const run = path.join(dir, first.iterations[0]!.run!);
  // The starting reward's run analysed again (a newer analyzer): its findings worded anew, one gone, one new.
  const reanalysis = (word: string) =>
    analysed(
      [
        { ...finding('reward-gamed', 56, approach), message: `reward-gamed: ${word}` },
        { ...finding('stuck', 20, { kind: 'stuck-penalty', window: 20, radius: 1 }), message: `stuck: ${word}` },
      ],
      11,
    );
  writeFileSync(path.join(run, 'suggestions.json'), JSON.stringify(reanalysis('re-analysed')));
  // Resumed for a second iteration: its patch sets come from the analysis as it is now, and so does the list.
  const second = await loop(2);
  assert.deepEqual(trained, ['iteration-1/candidate-1', 'iteration-2/candidate-1', 'iteration-2/candidate-2']);
  assert.ok(second.iterations[1]!.candidates.some((c) => c.applied?.includes('stuck')));
  const listed = (r: LoopResult) => r.suggestion_outcomes.map((s) => `${s.id}: ${s.message}, applied ${s.applied}`);
  assert.deepEqual(listed(second), ['reward-gamed: reward-gamed: re-analysed, applied true', 'stuck: stuck: re-analysed, applied true']);
  // Analysed once more and resumed with nothing left to train: the list and results.txt follow the analysis.
  writeFileSync(path.join(run, 'suggestions.json'), JSON.stringify(reanalysis('analysed a third time')));
  const third = await loop(2);
  assert.equal(trained.length, 3, 'nothing trained again');
  assert.deepEqual(listed(third), ['reward-gamed: reward-gamed: analysed a third time, applied true', 'stuck: stuck: analysed a third time, applied true']);
  const table = readFileSync(path.join(dir, 'results.txt'), 'utf8');
  assert.match(table, /^ {2}stuck \(iteration 1's analysis\): applied in iteration 2 candidate \d: .* — stuck: analysed a third time$/m);
  assert.doesNotMatch(table, /died-in-lava|re-analysed|scripted finding/);
});

test('a resumed loop whose records name a reward outside its folder refuses it, naming it, and reads nothing there', async () => {
  const dir = path.join(out, 'forged');
  const foundation = path.join(dir, 'foundation');
  mkdirSync(foundation, { recursive: true });
  writeFileSync(path.join(foundation, 'summary.json'), JSON.stringify(summary(22, 100)));
  writeFileSync(path.join(foundation, 'pretrain.json'), JSON.stringify({ demos: 4 }));
  const trained: string[] = [];
  const steps: RunSteps = {
    async train(o: TrainStepOptions) {
      trained.push(path.relative(dir, o.out));
      mkdirSync(o.out, { recursive: true });
      writeFileSync(path.join(o.out, 'summary.json'), JSON.stringify(summary(11, 100)));
      writeFileSync(
        path.join(o.out, 'suggestions.json'),
        JSON.stringify({ failed_episodes: 89, explained_episodes: 89, suggestions: [finding('reward-gamed', 56, approach)] }),
      );
      return { ok: true };
    },
    evaluate: () => assert.fail('no close call to look at again'),
  };
  await scriptedLoop(dir, 1, steps);
  // The first iteration's record edited to name, as the reward in force, a file beside the loop folder.
  const planted = path.join(out, 'planted.reward.ts');
  writeFileSync(planted, readFileSync(WEAK, 'utf8').replace('// task:', '// planted\n// task:'));
  const record = path.join(dir, 'iteration-1', 'iteration.json');
  const it1 = JSON.parse(readFileSync(record, 'utf8')) as { reward: string };
  writeFileSync(record, JSON.stringify({ ...it1, reward: path.join('..', 'planted.reward.ts') }));
  await assert.rejects(scriptedLoop(dir, 2, steps), {
    name: 'RunRecordError',
    message: `${path.join(dir, '..', 'planted.reward.ts')}: named by ${dir}'s records, but outside that folder; not read`,
  });
  assert.deepEqual(trained, [path.join('iteration-1', 'candidate-1', 'attempt-1', 'run')], 'no candidate was made from it');
});

test("a decision's extra look evaluates a trained policy on worlds it neither trained on nor was evaluated on", async () => {
  // A tiny real run (64 frames, 6 held-out episodes of approach-tree cut to 120 steps by a task file), then the
  // loop's extra evaluation of its checkpoint.
  const runDir = path.join(out, 'real-run');
  const shortTask = path.join(__dirname, 'fixtures', 'short-approach-tree.yaml');
  await train({
    rewardFile: WEAK,
    task: shortTask,
    envs: 2,
    rolloutSteps: 8,
    steps: 64,
    evalEpisodes: 6,
    workers: 0,
    backend: 'cpu',
    seed: 7,
    out: runDir,
  });
  const base = readEpisodes(runDir).map((e) => e.seed);
  assert.equal(base.length, 6);
  const state = JSON.parse(readFileSync(path.join(runDir, 'checkpoint', 'state.json'), 'utf8')) as { trainingSeeds: number[] };
  // The evaluation stream the run's own evaluation used (seed 7), with its worlds excluded: the next ones instead.
  const look = await evaluateCheckpoint({
    runDir,
    task: resolveTask(shortTask),
    episodes: 6,
    seed: 7,
    excludeSeeds: base,
    out: path.join(runDir, 'look'),
    backend: 'cpu',
  });
  const fresh = look.episodes.map((e) => e.seed);
  assert.equal(look.summary.success.n, 6);
  assert.equal(fresh.length, 6);
  assert.ok(
    fresh.every((s) => !base.includes(s) && !state.trainingSeeds.includes(s)),
    `fresh worlds ${fresh} vs ${base}`,
  );
  assert.deepEqual(
    readEpisodes(path.join(runDir, 'look')).map((e) => e.seed),
    fresh,
    'the look keeps its episode records',
  );
  // A look's folder that is a link (a loop folder someone else prepared) is refused before evaluating, not written through.
  const elsewhere = path.join(out, 'look-elsewhere');
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, path.join(runDir, 'linked-look'));
  const linkedLook = {
    runDir,
    task: resolveTask(shortTask),
    episodes: 6,
    seed: 7,
    excludeSeeds: [],
    out: path.join(runDir, 'linked-look'),
    backend: 'cpu' as const,
  };
  await assert.rejects(evaluateCheckpoint(linkedLook), {
    name: 'UnsafePathError',
    message: /linked-look is a symbolic link \(to .*look-elsewhere\); refusing to write through it/,
  });
  assert.deepEqual(readdirSync(elsewhere), []);
});

test('a loop folder whose iteration folder is a link out of it is refused, naming the link, before anything is written or trained through it', async () => {
  const loop = path.join(out, 'linked-iteration');
  const elsewhere = path.join(out, 'iteration-elsewhere');
  mkdirSync(loop);
  mkdirSync(elsewhere);
  const foundation = path.join(loop, 'foundation');
  mkdirSync(foundation);
  writeFileSync(path.join(foundation, 'summary.json'), JSON.stringify(summary(22, 100)));
  writeFileSync(path.join(foundation, 'pretrain.json'), JSON.stringify({ demos: 4 }));
  symlinkSync(elsewhere, path.join(loop, 'iteration-1'));
  const never = async () => assert.fail('nothing is trained or evaluated');
  await assert.rejects(scriptedLoop(loop, 1, { train: never, evaluate: never }), {
    name: 'UnsafePathError',
    message: /iteration-1 is a symbolic link \(to .*iteration-elsewhere\); refusing to write through it, nothing was written/,
  });
  assert.deepEqual(readdirSync(elsewhere), []);
});

test('train --init: a fine-tuned result below its own starting policy is named, with the difference', () => {
  const foundation = path.join(out, 'start-22');
  mkdirSync(path.join(foundation, 'checkpoint'), { recursive: true });
  writeFileSync(path.join(foundation, 'summary.json'), JSON.stringify(summary(22, 100)));
  assert.equal(
    belowStartingPolicy(summary(11, 100), path.join(foundation, 'checkpoint')),
    `warning: held-out success 11.0 % of 100 episodes (95 % CI 6.3–18.6 %) is below its starting policy's 22.0 % of 100 episodes (95 % CI 15.0–31.1 %) (${path.join(foundation, 'checkpoint')}): −11.0 pts [−19.6, −2.3] (90 % CI); fine-tuning on this reward lost ground.`,
  );
  assert.equal(belowStartingPolicy(summary(18, 100), foundation), null, '18 of 100 is not shown below 22 of 100');
  assert.equal(belowStartingPolicy(summary(11, 100), path.join(out, 'no-such-start')), null, 'no evaluated start, nothing to compare');
});

test('train --init: the run records a held-out success below its start in summary.json and the eval event, for the CLI and the dashboard', async () => {
  // A real policy to start from, whose own held-out evaluation says 100 of 100 (its summary beside the checkpoint):
  // a 64-frame fine-tuning of it cannot match that on 4 held-out worlds.
  const startRun = path.join(out, 'strong-start');
  await train({
    rewardFile: WEAK,
    task: 'approach-tree',
    envs: 2,
    rolloutSteps: 8,
    steps: 16,
    evalEpisodes: 0,
    workers: 0,
    backend: 'cpu',
    seed: 7,
    out: startRun,
  });
  writeFileSync(path.join(startRun, 'summary.json'), JSON.stringify(summary(100, 100)));
  const runDir = path.join(out, 'fine-tuned-below');
  const events: RunnerEvent[] = [];
  const tuned = await train({
    rewardFile: WEAK,
    task: 'approach-tree',
    envs: 2,
    rolloutSteps: 8,
    steps: 64,
    evalEpisodes: 4,
    workers: 0,
    backend: 'cpu',
    seed: 7,
    out: runDir,
    init: path.join(startRun, 'checkpoint'),
    emit: (e) => events.push(e),
  });
  const below = tuned.below_start;
  assert.ok(below, `${tuned.eval.success.count} of 4 is below 100 of 100`);
  assert.deepEqual([below.start.count, below.start.n, below.difference.verdict], [100, 100, 'worse']);
  assert.match(
    below.message,
    /^held-out success \d+\.\d % of 4 episodes .* is below its starting policy's 100\.0 % of 100 episodes .*: −\d+\.\d pts .*; fine-tuning on this reward lost ground\.$/,
  );
  assert.deepEqual(JSON.parse(readFileSync(path.join(runDir, 'summary.json'), 'utf8')).below_start, JSON.parse(JSON.stringify(below)));
  const evalEvent = events.find((e) => e.type === 'eval');
  assert.deepEqual(evalEvent?.type === 'eval' ? evalEvent.below_start : undefined, below, 'the dashboard gets it live');
  assert.equal(belowStartingPolicy(tuned, path.join(startRun, 'checkpoint')), `warning: ${below.message}`, 'the CLI says what the summary recorded');
});
