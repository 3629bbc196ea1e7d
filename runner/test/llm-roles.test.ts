// Designer (with the lint → critic review pipeline) and the LLM trajectory analyzer, against the scripted
// OpenAI-compatible server through the real openai client.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { appliedSuggestions, designAndReview, extractRewardCode } from '../src/llm/designer';
import { analyzeWithLlm, pickFailedEpisodes } from '../src/llm/analyzer';
import { BUILTIN_TASKS } from '../src/tasks';
import { rateRecord, type EpisodeRecord, type RunSummary } from '../src/records';
import { startLlmServer, type LlmTestServer } from './helpers/llm-server';
import { tempDir } from './helpers/tmp';

const TREE = BUILTIN_TASKS['approach-tree']!;
const EXAMPLE = readFileSync(path.join(__dirname, '..', 'rewards', 'approach-tree.dense.reward.ts'), 'utf8');
const fence = (code: string) => 'Here is the reward.\n```ts\n' + code + '```\nDone.';
const llm = (server: LlmTestServer) => ({ baseUrl: server.baseUrl, apiKey: 'k', model: 'scripted', retryDelayMs: 5 });

describe('designer answer extraction', () => {
  it('takes the one code block and adds the task header', () => {
    const r = extractRewardCode('```js\nexport function reward_function() { return 0; }\n```', TREE);
    assert.deepEqual(r, { ok: true, value: '// task: approach-tree\nexport function reward_function() { return 0; }\n' });
  });
  it('corrects a header that names another task', () => {
    const r = extractRewardCode('```ts\n// task: approach-cow\nexport function reward_function() { return 0; }\n```', TREE);
    assert.deepEqual(r, { ok: true, value: '// task: approach-tree\nexport function reward_function() { return 0; }\n' });
  });
  it('finds the header where the editor and the trainer do: anywhere in the leading comments', () => {
    const code =
      '// Reward for approach-tree.\n//\n// Dense: distance to the nearest log.\n// Sparse: reaching it.\n// Memory: none.\n//\n// task: approach-cow\nexport function reward_function() { return 0; }';
    const r = extractRewardCode('```ts\n' + code + '\n```', TREE);
    assert.deepEqual(r, { ok: true, value: code.replace('task: approach-cow', 'task: approach-tree') + '\n' });
  });
  it('rejects prose and several blocks, saying why', () => {
    assert.match((extractRewardCode('just words', TREE) as { problem: string }).problem, /no fenced code block/);
    assert.match((extractRewardCode('```ts\na\n```\n```ts\nb\n```', TREE) as { problem: string }).problem, /2 code blocks/);
  });
  it('reads which suggestions the designer applied', () => {
    assert.deepEqual(appliedSuggestions('// x\n// Applied suggestions: S1, S3\n'), ['S1', 'S3']);
    assert.deepEqual(appliedSuggestions('// Applied suggestions: none'), []);
    assert.equal(appliedSuggestions('// nothing said'), null);
  });
});

describe('design → lint → critic pipeline', () => {
  let server: LlmTestServer;
  after(() => server?.close());

  it('sends lint errors back, never lets the critic see a broken file, and iterates on the critique', async () => {
    const magma = EXAMPLE.replace(
      'if (now === null && before !== null) return -1; // lost sight of the log',
      "if (now === null && before !== null) return -1; // lost sight of the log\n    if ('magma' in current_nearest_blocks) return -1;",
    );
    server = await startLlmServer((req) => {
      if (/reward designer/.test(req.system)) {
        if (/Static checker diagnostics/.test(req.lastUser)) return fence(EXAMPLE.replace('// task: approach-tree\n', ''));
        if (/reviewer's critique/.test(req.lastUser)) return fence(EXAMPLE + '// reviewed\n');
        return fence(magma);
      }
      // critic: first answer malformed, then a failing verdict, then a pass
      const criticCalls = server.requests.filter((r) => /review reward functions/.test(r.system)).length;
      if (criticCalls === 1) return 'I think it is fine.';
      if (criticCalls === 2)
        return JSON.stringify({
          reasoning: 'r',
          success: false,
          critique: 'Penalise lost health more clearly.',
          findings: [{ line: 40, severity: 'warning', message: 'x' }],
        });
      return JSON.stringify({ reasoning: 'good', success: true, critique: null, findings: [] });
    });
    const dir = tempDir('design-');
    const reviewed = await designAndReview({ task: TREE, request: { kind: 'initial' }, dir, llm: llm(server), log: { dir } });
    assert.equal(reviewed.criticPassed, true);
    assert.equal(reviewed.source, EXAMPLE + '// reviewed\n');
    assert.deepEqual(
      reviewed.steps.map((s) => [s.request, s.errors.length > 0, s.critique?.success ?? null]),
      [
        ['initial', true, null],
        ['fix-lint', false, false],
        ['fix-critique', false, true],
      ],
    );
    assert.ok(reviewed.steps[0]!.errors.some((e) => /'magma' is not a Minecraft/.test(e.message)));
    // the fix-lint prompt quoted the diagnostic with its line
    const fixLint = server.requests.find((r) => /Static checker diagnostics/.test(r.lastUser))!;
    assert.match(fixLint.lastUser, /- line \d+, column \d+ \(error, unknown-name\): 'magma' is not a Minecraft/);
    // no critic request ever contained the magma draft
    for (const r of server.requests.filter((r) => /review reward functions/.test(r.system))) assert.ok(!r.lastUser.includes("'magma'"));
    const fixCritique = server.requests.find((r) => /reviewer's critique/.test(r.lastUser))!;
    assert.match(fixCritique.lastUser, /Penalise lost health more clearly\.\n\n- line 40 \(warning\): x/);
    // What the probes measured (the example pays a failure mode more than success) reaches the critic and, with
    // its critique, the designer.
    const measured = /Replayed on real episodes of the task[^\n]*\n- line 33 \(warning\): [^\n]* is paid on \d+ % of its steps/;
    assert.match(server.requests.filter((r) => /review reward functions/.test(r.system))[0]!.lastUser, measured);
    assert.match(fixCritique.lastUser, measured);
    for (const n of [1, 2, 3]) assert.ok(existsSync(path.join(dir, `draft-${n}.reward.ts`)));
  });

  it('--language py: the designer is asked for Python, its "magma" draft goes back with the Python lint, the clean one is reviewed', async () => {
    const PY = readFileSync(path.join(__dirname, '..', 'rewards', 'approach-cow.dense.reward.py'), 'utf8').replace(
      '# task: approach-cow',
      '# task: approach-tree',
    );
    const pyFence = (code: string) => 'Here is the reward.\n```python\n' + code + '```\nDone.';
    await server.close();
    server = await startLlmServer((req) => {
      if (/reward designer/.test(req.system)) {
        if (/Static checker diagnostics/.test(req.lastUser)) return pyFence(PY);
        return pyFence(PY.replace('now = current_nearest_blocks.get("cow")', 'now = current_nearest_blocks.get("magma")'));
      }
      return JSON.stringify({ reasoning: 'good', success: true, critique: null, findings: [] });
    });
    const dir = tempDir('design-py-');
    const reviewed = await designAndReview({ task: TREE, request: { kind: 'initial' }, dir, llm: llm(server), language: 'python' });
    assert.equal(reviewed.source, PY);
    assert.deepEqual(
      reviewed.steps.map((s) => [s.file, s.errors.map((e) => e.code)]),
      [
        ['draft-1.reward.py', ['unknown-name']],
        ['draft-2.reward.py', []],
      ],
    );
    const designer = server.requests.find((r) => /reward designer/.test(r.system))!;
    assert.match(designer.system, /```python \.\.\. ```\) containing the whole reward file, in Python 3/);
    assert.match(designer.lastUser, /The file is Python 3 \(the paper's format\) and defines one function[\s\S]*def reward_function\(current_nearest_blocks/);
    const critic = server.requests.find((r) => /review reward functions/.test(r.system))!;
    assert.match(critic.lastUser, /The file is Python 3/);
  });

  it("reviews the user's own file first, and has the designer fix only what the checks reject", async () => {
    await server.close();
    server = await startLlmServer((req) =>
      /reward designer/.test(req.system) ? fence(EXAMPLE) : JSON.stringify({ reasoning: 'ok', success: true, critique: null, findings: [] }),
    );
    const dir = tempDir('design-');
    const broken = EXAMPLE.replace(
      'const entry = nearest_blocks[name];',
      "const entry = nearest_blocks[name];\n      if (current_nearest_blocks['wood'] !== undefined) return null;",
    );
    const reviewed = await designAndReview({ task: TREE, request: { kind: 'initial' }, firstDraft: broken, dir, llm: llm(server) });
    assert.deepEqual(
      reviewed.steps.map((s) => s.request),
      ['given', 'fix-lint'],
    );
    assert.match(server.requests[0]!.lastUser, /Static checker diagnostics[\s\S]*'wood' is not a Minecraft/);
    assert.equal(reviewed.source, EXAMPLE);
    // a clean file goes straight to the critic, unchanged
    const clean = await designAndReview({
      task: TREE,
      request: { kind: 'initial' },
      firstDraft: EXAMPLE,
      dir: tempDir('design-'),
      llm: llm(server),
    });
    assert.deepEqual(
      clean.steps.map((s) => s.request),
      ['given'],
    );
    assert.equal(clean.source, EXAMPLE);
  });

  it('falls back to the last clean draft as it was written, not as its file reads now (the folder may be shared)', async () => {
    await server?.close();
    const dir = tempDir('design-');
    const secret = path.join(tempDir('design-outside-'), 'secret.reward.ts');
    writeFileSync(secret, "// not the designer's\n");
    server = await startLlmServer((req) => {
      if (/reward designer/.test(req.system)) {
        // Someone with access to the folder puts a link in the clean draft's place meanwhile.
        rmSync(path.join(dir, 'draft-1.reward.ts'));
        symlinkSync(secret, path.join(dir, 'draft-1.reward.ts'));
        return fence('export function reward(x) { return 1; }\n');
      }
      return JSON.stringify({ reasoning: 'r', success: false, critique: 'Penalise lost health.', findings: [] });
    });
    const reviewed = await designAndReview({ task: TREE, request: { kind: 'initial' }, firstDraft: EXAMPLE, dir, llm: llm(server), limits: { lintFixes: 0 } });
    assert.deepEqual(
      reviewed.steps.map((s) => s.request),
      ['given', 'fix-critique'],
    );
    assert.equal(reviewed.source, EXAMPLE);
  });

  it('gives up on a file that never passes the static checks, and never trains it', async () => {
    await server.close();
    server = await startLlmServer((req) => (/reward designer/.test(req.system) ? fence('export function reward(x) { return 1; }\n') : 'unused'));
    const dir = tempDir('design-');
    const reviewed = await designAndReview({ task: TREE, request: { kind: 'initial' }, dir, llm: llm(server), limits: { lintFixes: 1 } });
    assert.equal(reviewed.source, null);
    assert.match(reviewed.failure!, /still has static errors after 1 fixes, so it is not trained:\n- line \d+, column \d+ \(error, reward-contract\)/);
    assert.equal(server.requests.length, 2);
  });
});

const summary: RunSummary = {
  task: 'approach-tree',
  reward_file: 'r.reward.ts',
  reward_sha256: null,
  seed: 1,
  env: 'sim',
  env_steps: 1000,
  wall_seconds: 10,
  backend: 'cpu',
  train: {
    updates: 4,
    frames: 1000,
    mean_return: 0.5,
    success_rate: 0.1,
    success: { ...rateRecord(1, 10), started_from_frame: 0, started_to_frame: 500, mean_return: 0.5 },
    entropy: 2.5,
    fps: 100,
  },
  eval: {
    episodes: 12,
    success_rate: 0.25,
    death_rate: 0.5,
    success: rateRecord(3, 12),
    death: rateRecord(6, 12),
    death_causes: { lava: 6 },
    avg_steps: 300,
    avg_distance_moved: 8,
  },
  generalisation_gap: null,
};

function episode(i: number, kind: 'success' | 'lava' | 'timeout'): EpisodeRecord {
  const lastSteps = Array.from({ length: 40 }, (_, s) => ({
    step: 260 + s,
    action: s % 2 ? 'forward' : 'turn_left',
    reward: 0.1,
    position: [10 + s * 0.2, 63, 5, 15, 0] as [number, number, number, number, number],
    inventory_change: {},
    nearest: { lava: [3 - s * 0.05, 0, 0.3] as [number, number, number] },
    health: kind === 'lava' ? Math.max(0, 10 - s) : 10,
  }));
  return {
    episode: i,
    seed: 100 + i,
    success: kind === 'success',
    steps: 300,
    died: kind === 'lava',
    deathCause: kind === 'lava' ? 'lava' : null,
    truncated: kind === 'timeout',
    return: 4.2,
    distanceMoved: 9,
    lastSteps,
    final: {
      health: kind === 'lava' ? 0 : 10,
      inventory: {},
      nearest: { lava: [0.5, 0.1, 0.6], grass_block: [1, 0, 1], oak_log: [20, 0.3, 0] },
      blockUnderFoot: kind === 'lava' ? 'lava' : 'grass_block',
      died: kind === 'lava',
    },
    path: [[0, 63, 0]],
  };
}

describe('LLM trajectory analyzer', () => {
  let server: LlmTestServer;
  after(() => server?.close());

  it('sees statistics, findings and K=10 failed episodes of 32 steps, and returns validated suggestions', async () => {
    const episodes = [
      ...Array.from({ length: 3 }, (_, i) => episode(i, 'success')),
      ...Array.from({ length: 12 }, (_, i) => episode(3 + i, i < 10 ? 'lava' : 'timeout')),
    ];
    const picked = pickFailedEpisodes(episodes);
    assert.equal(picked.length, 10);
    assert.ok(
      picked.some((e) => e.truncated),
      'a rarer failure mode is not crowded out',
    );
    server = await startLlmServer([
      '{"analysis": "", "suggestions": []}',
      JSON.stringify({
        analysis: 'The agent walks into lava.',
        suggestions: [{ message: 'Penalise lava in view.', line: 25 }, 'Reward approaching logs.', { line: 3 }],
      }),
    ]);
    const result = await analyzeWithLlm({
      task: TREE,
      rewardSource: EXAMPLE,
      summary,
      episodes,
      findings: [{ message: 'Most deaths are in lava (6 of 12).', evidence: { episodes: [3, 4] } }],
      llm: llm(server),
    });
    assert.deepEqual(result.suggestions, [
      { id: 'S1', message: 'Penalise lava in view.', line: 25 },
      { id: 'S2', message: 'Reward approaching logs.' },
    ]);
    const prompt = server.requests[0]!.lastUser;
    assert.match(prompt, /success rate 25% \(95 % CI 8.9%–53.2%\), death rate 50% \(causes: lava 6\)/);
    assert.match(prompt, /Most deaths are in lava \(6 of 12\)\.\n {2}evidence: \{"episodes":\[3,4\]\}/);
    assert.match(prompt, /## Failed episodes \(10 shown, last 32 steps each\)/);
    assert.match(prompt, /Episode 3 \(seed 103\): died \(lava\) after 300 steps/);
    assert.match(prompt, /final: health 0, inventory \{\}, block under foot lava, died yes\n {2}final nearest: lava 0.5 m/);
    assert.equal((prompt.match(/^ {2}\d+ \| /gm) ?? []).length, 10 * 32);
    assert.match(server.requests[1]!.lastUser, /"analysis" must be a non-empty string/);
  });
});
