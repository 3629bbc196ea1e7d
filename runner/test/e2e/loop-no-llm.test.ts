// `rewardsmith loop --no-llm` end to end: the improvement loop with the analyzer's patches as the update step, no
// LLM at all (no server, no key), every candidate fine-tuned from the task's foundation policy that the loop builds.
// Small budgets (one demonstration, a few thousand frames, approach-tree cut to 120-step episodes by a user task
// file): the test checks the loop's records, not that training improves. About 100 s: part of `npm run test:e2e`.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { loopCommand } from '../../src/llm/loop-command';
import type { LoopResult } from '../../src/llm/loop-types';
import { readStoredConfig } from '../../src/runs/config';
import { readEpisodes } from '../../src/records';
import { lintText } from '../../src/lint/rules';
import { tempDir } from '../helpers/tmp';

const WEAK = path.join(__dirname, '../fixtures/rewards/weak-approach-tree.reward.ts');
const SHORT_TASK = path.join(__dirname, '../fixtures/short-approach-tree.yaml');
const out = tempDir('loop-no-llm-');
after(() => rmSync(out, { recursive: true, force: true }));

test('loop --no-llm: iteration 2 trains patch sets of the analyzer findings, keeps one only when shown better, resumes', async () => {
  const saved = { ...process.env };
  delete process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_BASE_URL;
  let text = '';
  const io = { stdout: (t: string) => void (text += t), stderr: (t: string) => void (text += t) };
  const args = [
    '--task',
    SHORT_TASK,
    '--iterations',
    '2',
    '--out',
    out,
    '--steps',
    '2048',
    '--envs',
    '8',
    '--eval-episodes',
    '6',
    '--reward',
    WEAK,
    '--no-llm',
    '--candidates',
    '2',
    '--seed',
    '7',
    '--demos',
    '1',
  ];
  try {
    assert.equal(await loopCommand(args, io), 0, text);
  } finally {
    process.env = saved;
  }
  const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as LoopResult;
  const [first, second] = result.iterations;
  // The default start: the task's foundation policy, built once in the experiment folder and evaluated on held-out worlds.
  const foundation = path.join(out, 'foundation');
  assert.equal(result.start?.kind, 'foundation');
  assert.equal(result.start?.checkpoint, foundation);
  assert.equal(result.start?.demos, 1);
  assert.equal(result.start?.held_out?.n, 6, "the foundation's held-out figure, over the loop's evaluation episodes");
  assert.deepEqual(result.start?.fine_tuning, { kl_coef: 0.125, value_pretrain_updates: 2, return_norm: true });
  assert.match(text, /start: the task's foundation policy \(foundation, 1 demonstrations\), held-out success \d+\.\d % \[[\d.]+–[\d.]+ %\] of 6/);
  // Every candidate of every iteration fine-tuned from it (its run records the initial policy), and the table says so.
  for (const it of result.iterations)
    for (const c of it.candidates) if (c.run) assert.equal(readStoredConfig(path.join(out, c.run))?.init, foundation, `${c.run} starts from the foundation`);
  assert.match(
    text,
    /^Start: the task's foundation policy \(.*foundation, behaviour-cloned from 1 demonstrations, held-out success .* of 6\); fine-tuned with KL 0\.125 to it/m,
  );
  // No critic ran: the table says so instead of "no" (which would read as a critic that failed the reward).
  assert.equal(result.no_llm, true);
  assert.match(text, /^1 +1 +foundation +— \(no critic\) +0 /m);
  assert.match(text, /^2 .* — \(no critic\) +\d+ /m);
  assert.equal(first!.candidates.length, 1, 'iteration 1 trains the given reward');
  assert.equal(first!.success!.n, 6);
  assert.ok(first!.success!.ci95[0] <= first!.success_rate! && first!.success_rate! <= first!.success!.ci95[1]);
  // The analyzer's output stays in the run folder, with coverage.
  const suggestions = JSON.parse(readFileSync(path.join(out, first!.candidates[0]!.run!, 'suggestions.json'), 'utf8'));
  assert.equal(typeof suggestions.explained_episodes, 'number');
  assert.ok(
    suggestions.suggestions.some((s: { diff?: string }) => s.diff),
    'the weak reward gets patches',
  );
  // Iteration 2: two different patch sets, each naming the findings it applies, each lint-clean.
  assert.equal(second!.candidates.length, 2);
  const sets = second!.candidates.map((c) => c.applied!.join('+'));
  assert.notEqual(sets[0], sets[1]);
  for (const c of second!.candidates) {
    assert.ok(c.applied!.length > 0);
    const file = path.join(out, c.reward!);
    const problems = lintText(file, readFileSync(file, 'utf8')).filter((d) => d.severity === 'error' || d.severity === 'warning');
    assert.deepEqual(
      problems.map((d) => d.message),
      [],
      `${c.reward} lints clean`,
    );
    // A candidate whose training failed (a reward time-out on a loaded machine) says why instead of a run.
    if (c.run) assert.ok(existsSync(path.join(out, c.run, 'summary.json')));
    else assert.match(c.failure ?? '', /\S/);
  }
  // Kept only when shown better; otherwise the previous reward stays, and the table says why.
  const decision = second!.decision!;
  assert.equal(decision.kept, !second!.kept_previous);
  if (second!.kept_previous) {
    assert.equal(second!.chosen, 0);
    assert.equal(readFileSync(path.join(out, second!.reward!), 'utf8'), readFileSync(WEAK, 'utf8'));
    assert.match(text, /^2 +\d .*(not better: difference [+−]\d+\.\d pts|not kept: )/m);
  }
  // A close call evaluated both policies again on fresh held-out worlds (the real evaluation of their checkpoints).
  for (let look = 2; look <= decision.looks.length; look++) {
    const dir = path.join(out, 'iteration-2', 'decision', `look-${look}`);
    const seedsOf = (runDir: string) => readEpisodes(runDir).map((e) => e.seed);
    const fresh = seedsOf(path.join(dir, 'current'));
    assert.equal(fresh.length, 6);
    const before = new Set([
      ...seedsOf(path.join(out, first!.candidates[0]!.run!)),
      ...second!.candidates.flatMap((c) => (c.run ? seedsOf(path.join(out, c.run)) : [])),
    ]);
    assert.ok(
      fresh.every((s) => !before.has(s)),
      `look ${look} evaluates worlds no earlier evaluation used`,
    );
    assert.equal(decision.looks[look - 1]!.current.n, 6 * look);
  }
  assert.match(text, /held-out success \[95 % CI\] of n/);
  // The outcomes name the analyzer's findings by their ids, as the candidates' patch sets do.
  assert.ok(result.suggestion_outcomes.some((s) => s.source === 'analyzer'));
  if (!second!.kept_previous) assert.ok(result.suggestion_outcomes.some((s) => s.applied === true));
  // Resuming the finished experiment trains nothing again, and builds no second foundation.
  text = '';
  assert.equal(await loopCommand(args, io), 0, text);
  assert.doesNotMatch(text, /training on/);
  assert.doesNotMatch(text, /building the task's foundation/);
  // Resuming with another start would mix starting policies in one experiment.
  text = '';
  assert.equal(await loopCommand([...args.slice(0, -2), '--from-scratch'], io), 1);
  assert.match(text, /was started with start = foundation, not scratch/);
});
