// The whole improvement loop, 2 iterations on approach-tree with a small training budget, against the scripted
// OpenAI-compatible server playing designer, critic and analyzer through the real openai client. The script
// includes a designer answer with a lint error, a reward that throws at run time, and a malformed critic answer.
// The loops that train run on approach-tree with 120-step episodes (a user task file): they test the loop's
// records, not learning, and a 2,000-step evaluation and its report's playback would cost most of the test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { designCommand } from '../src/llm/design-command';
import { loopCommand } from '../src/llm/loop-command';
import type { LoopResult } from '../src/llm/loop-types';
import type { JobExit } from '../src/sweep/engine';
import { LLM_LOG_FILE, type LlmCallRecord } from '../src/llm/client';
import { parseEvent } from '../src/events';
import { startLlmServer, type LlmTestServer, type RecordedRequest } from './helpers/llm-server';
import { tempDir } from './helpers/tmp';

const SHORT_TASK = path.join(__dirname, 'fixtures', 'short-approach-tree.yaml');
const EXAMPLE = readFileSync(path.join(__dirname, '..', 'rewards', 'approach-tree.dense.reward.ts'), 'utf8');
// Real LLM-style defects: a name that is not a block (lint error), and a Set stored as an array, which lints
// clean (GLOBAL_DATA holds any value) but throws "visited.has is not a function" on the first step with no log in view.
const WITH_MAGMA = EXAMPLE.replace(
  'if (now === null && before !== null) return -1; // lost sight of the log',
  "if (now === null && before !== null) return -1; // lost sight of the log\n    if ('magma' in current_nearest_blocks) return -1; // avoid magma",
);
const THROWS = EXAMPLE.replace('GLOBAL_DATA.visited = new Set();', 'GLOBAL_DATA.visited = [];');
const UPDATED = EXAMPLE.replace('// Design thoughts:', '// Design thoughts:\n// Applied suggestions: S1\n// - Lava in view is now penalised (analyzer S1).');

const fence = (code: string) => 'Here is the reward function.\n\n```ts\n' + code + '```\n';
const roleOf = (r: RecordedRequest) =>
  /reward designer/.test(r.system)
    ? 'designer'
    : /review reward functions/.test(r.system)
      ? 'critic'
      : /analyse the failed episodes/.test(r.system)
        ? 'analyzer'
        : 'unknown';

/** The three roles, scripted. Answers depend on what was asked, so the script is a function of the request. */
function script(requests: RecordedRequest[]) {
  return (req: RecordedRequest): string => {
    const role = roleOf(req);
    const nth = requests.filter((r) => roleOf(r) === role).length; // 1-based, includes this request
    if (role === 'designer') {
      if (/Static checker diagnostics/.test(req.lastUser)) return fence(THROWS);
      if (/Error while running it during training/.test(req.lastUser)) return fence(EXAMPLE);
      if (/Result of training on it/.test(req.lastUser)) return fence(UPDATED);
      return fence(WITH_MAGMA);
    }
    if (role === 'critic') {
      if (nth === 1) return 'The reward looks reasonable to me; success is rewarded and health loss is punished.';
      return JSON.stringify({
        reasoning: 'Names are valid, memory keys are initialised before use, the scale rule holds.',
        success: true,
        critique: null,
        findings: [],
      });
    }
    if (role === 'analyzer') {
      return (
        '```json\n' +
        JSON.stringify({
          analysis: 'Most failures are timeouts with no log ever in view: the agent does not search widely enough.',
          suggestions: [{ message: 'Penalise lava in view and reward entering unvisited cells more strongly.', line: 33 }],
        }) +
        '\n```'
      );
    }
    return 'unexpected request';
  };
}

describe('rewardsmith loop (2 iterations, approach-tree, scripted LLM)', () => {
  let server: LlmTestServer;
  let out: string;
  const saved = { ...process.env };
  let stdout = '';

  before(async () => {
    const requests: RecordedRequest[] = [];
    server = await startLlmServer((req) => {
      requests.push(req);
      return script(requests)(req);
    });
    process.env.OPENAI_BASE_URL = server.baseUrl;
    process.env.OPENAI_API_KEY = 'test-key';
    process.env.REWARDSMITH_MODEL = 'scripted-gpt';
    out = tempDir('loop-');
  });
  after(async () => {
    process.env = saved;
    await server.close();
    rmSync(out, { recursive: true, force: true });
  });

  const runLoop = async () => {
    stdout = '';
    const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stdout += t) };
    return loopCommand(
      ['--task', SHORT_TASK, '--iterations', '2', '--out', out, '--steps', '1024', '--envs', '8', '--eval-episodes', '4', '--from-scratch'],
      io,
    );
  };

  it('designs, lints, critiques, trains, fixes a throwing reward, analyzes, and prints the table', async () => {
    assert.equal(await runLoop(), 0, stdout);
    const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as LoopResult;
    assert.equal(result.iterations.length, 2);
    const [first, second] = result.iterations;

    // iteration 1: magma draft → lint error → fixed draft throws on the probes, not trained → fix-error → trained
    const cand = first!.candidates[0]!;
    assert.equal(cand.executionFixes, 1);
    assert.equal(cand.reward, 'iteration-1/candidate-1/attempt-2/short-approach-tree.reward.ts');
    const review1 = JSON.parse(readFileSync(path.join(out, 'iteration-1/candidate-1/attempt-1/review.json'), 'utf8'));
    assert.deepEqual(
      review1.steps.map((s: { request: string; errors: unknown[] }) => [s.request, s.errors.length > 0]),
      [
        ['initial', true],
        ['fix-lint', false],
      ],
    );
    const screen1 = JSON.parse(readFileSync(path.join(out, 'iteration-1/candidate-1/attempt-1/probe-screen.json'), 'utf8'));
    assert.match(screen1.refused, /error probe-throws: .*has is not a function at step \d+ of/);
    assert.equal(existsSync(path.join(out, 'iteration-1/candidate-1/attempt-1/train.json')), false, 'a reward the probes refused was trained');
    assert.equal(result.runs_saved_by_probes, 1);
    assert.ok(existsSync(path.join(out, 'iteration-1/candidate-1/attempt-2/run/summary.json')));
    assert.ok(first!.success_rate !== null && first!.death_rate !== null);
    assert.equal(first!.analysis!.llm!.suggestions[0]!.id, 'S1');

    // iteration 2 started from iteration 1's reward and analysis
    assert.equal(second!.candidates[0]!.executionFixes, 0);
    assert.match(readFileSync(path.join(out, second!.reward!), 'utf8'), /Applied suggestions: S1/);
    const s1 = result.suggestion_outcomes.find((s) => s.id === 'S1')!;
    assert.equal(s1.applied, true);
    assert.deepEqual(
      s1.applied_in.map((a) => [a.iteration, a.candidate, a.kept]),
      [[2, 1, true]],
    );
    assert.equal(s1.helped, s1.applied_in[0]!.versus_current?.verdict === 'better');
    assert.equal(result.suggestion_outcomes.find((s) => s.source === 'analyzer')?.applied ?? false, false);

    // what each role was told
    const asked = server.requests;
    const fixLint = asked.find((r) => /Static checker diagnostics/.test(r.lastUser))!;
    assert.match(fixLint.lastUser, /'magma' is not a Minecraft 1\.16\.5 name/);
    const fixError = asked.find((r) => /Error while running it during training/.test(r.lastUser))!;
    assert.match(fixError.lastUser, /approach-tree\.reward\.ts:\d+:\d+: error probe-throws: .*has is not a function/);
    assert.ok(
      asked.filter((r) => roleOf(r) === 'critic').every((r) => !r.lastUser.includes("'magma'")),
      'a file with lint errors never reaches the critic',
    );
    const update = asked.find((r) => /Result of training on it/.test(r.lastUser))!;
    assert.match(update.lastUser, /S1: Penalise lava in view/);
    assert.match(update.lastUser, /success rate \d+(\.\d)?% \(95 % CI [\d.]+%–[\d.]+%\), death rate/);
    const analyzerAsk = asked.find((r) => roleOf(r) === 'analyzer')!;
    assert.match(analyzerAsk.lastUser, /## Failed episodes \(\d+ shown, last 32 steps each\)|No episode failed\./);

    // every call logged with model, tokens and latency
    const log = readFileSync(path.join(out, LLM_LOG_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LlmCallRecord);
    // A call the client could not deliver (a kept-alive socket the server had closed, under load) is logged too, and retried.
    const delivered = log.filter((l) => !/^cannot reach /.test(l.error ?? ''));
    assert.equal(delivered.length, asked.length, JSON.stringify(log.map((l) => [l.role, l.error])));
    assert.deepEqual(new Set(log.map((l) => l.role)), new Set(['designer', 'critic', 'analyzer']));
    assert.ok(delivered.every((l) => l.model === 'scripted-gpt' && l.usage !== null && l.latency_ms >= 0 && l.temperature === 0.3));

    // the final table
    assert.match(
      stdout,
      /iteration +candidate +start +critic passed +runtime fixes +held-out success \[95 % CI\] of n +deaths \[95 % CI\] +difference to the reward in force +decision +reward file/,
    );
    assert.match(stdout, /Start: every candidate trains from scratch/);
    assert.match(stdout, /^1 +1 +scratch +yes +1 +\d+\.\d % \[[\d.]+–[\d.]+ %\] of \d+ .* — +kept +iteration-1\//m);
    // Iteration 2's candidate with its difference to iteration 1's reward, by the decision rule.
    assert.match(stdout, /^2 +1 +scratch +yes +0 +\d+\.\d % \[[\d.]+–[\d.]+ %\] of \d+ .* [+−]\d+\.\d pts \[[+−][\d.]+, [+−][\d.]+\] \(90 % CI\) +kept /m);
    assert.match(stdout, /^ {2}S1 \(iteration 1's analysis\): applied in iteration 2 candidate 1: .*, kept — Penalise lava/m);
    assert.match(stdout, /^Best reward measured: iteration [12], candidate 1: .* held-out \(kept\)\. File: /m);
  });

  it('resumes without redoing finished steps', async () => {
    const before = server.requests.length;
    const trained = readFileSync(path.join(out, 'iteration-2/candidate-1/attempt-1/run/summary.json'), 'utf8');
    // Interrupted right after iteration 2's run finished: its training record, analysis and iteration record are missing.
    rmSync(path.join(out, 'iteration-2/iteration.json'));
    rmSync(path.join(out, 'iteration-2/llm-analysis.json'));
    rmSync(path.join(out, 'iteration-2/candidate-1/attempt-1/train.json'));
    assert.equal(await runLoop(), 0, stdout);
    const again = server.requests.slice(before);
    assert.deepEqual(again.map(roleOf), ['analyzer'], 'only the missing analysis is asked for again');
    assert.equal(readFileSync(path.join(out, 'iteration-2/candidate-1/attempt-1/run/summary.json'), 'utf8'), trained, 'training was not redone');
    assert.match(stdout, /resuming the experiment/);
  });
});

describe('rewardsmith loop --candidates', () => {
  // Without --engine the candidates train as jobs one at a time; --engine local runs them on the same job runner
  // at once (the other iteration tests cover the one-at-a-time path).
  it('trains every candidate as train jobs at once (--engine local) and keeps the best by evaluation success', async () => {
    const SPARSE = readFileSync(path.join(__dirname, '..', 'rewards', 'approach-tree.sparse.reward.ts'), 'utf8');
    let designs = 0;
    const server = await startLlmServer((req) => {
      if (roleOf(req) === 'designer') return fence(++designs === 1 ? SPARSE : EXAMPLE);
      if (roleOf(req) === 'critic') return JSON.stringify({ reasoning: 'ok', success: true, critique: null, findings: [] });
      return JSON.stringify({ analysis: 'The agent never finds a tree.', suggestions: ['Reward exploring unvisited cells.'] });
    });
    const saved = { ...process.env };
    const out = tempDir('loop-k-');
    try {
      process.env.OPENAI_BASE_URL = server.baseUrl;
      process.env.OPENAI_API_KEY = 'k';
      let text = '';
      let events = '';
      const io = { stdout: (t: string) => void (events += t), stderr: (t: string) => void (text += t) };
      assert.equal(
        await loopCommand(
          [
            '--task',
            SHORT_TASK,
            '--iterations',
            '1',
            '--candidates',
            '2',
            '--out',
            out,
            '--steps',
            '512',
            '--envs',
            '8',
            '--eval-episodes',
            '4',
            '--engine',
            'local',
            '--from-scratch',
            '--events',
            'ndjson',
          ],
          io,
        ),
        0,
        text,
      );
      // stdout carries only versioned events, for the extension: one loop started … finished, the runs' progress inside
      const parsed = events
        .trim()
        .split('\n')
        .map((l) => parseEvent(l));
      assert.ok(
        parsed.every((e) => e !== undefined),
        'every stdout line is an event',
      );
      const types = parsed.map((e) => e!.type);
      assert.equal(types[0], 'started');
      assert.equal(types[types.length - 1], 'finished');
      assert.equal(types.filter((t) => t === 'started' || t === 'finished').length, 2, "the runs' own started/finished stay inside the loop");
      assert.equal(types.filter((t) => t === 'eval').length, 2);
      assert.ok(types.includes('progress'));
      assert.ok(parsed.some((e) => e!.type === 'suggestion' && e!.id === 'iteration-1/S1' && e!.message === 'Reward exploring unvisited cells.'));
      // The loop's progress lines are log events on stdout and the same lines on stderr.
      const logged = parsed.flatMap((e) => (e!.type === 'log' && /^ {2}candidate \d: /.test(e!.message) ? [e!.message] : []));
      assert.ok(logged.length >= 4, logged.join('\n'));
      for (const line of logged) assert.ok(text.split('\n').includes(line), `${line} is not on stderr`);
      const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as LoopResult;
      const it1 = result.iterations[0]!;
      const [a, b] = it1.candidates.map((c) => c.summary!);
      assert.ok(a && b, 'both candidates were trained and evaluated');
      assert.ok(it1.candidates.every((c) => c.summary!.eval.episodes === 4));
      // Both ran as train jobs that exited cleanly, and were running at the same moment.
      const exits = it1.candidates.map((c) => JSON.parse(readFileSync(path.join(out, c.run!, 'job-exit.json'), 'utf8')) as JobExit);
      for (const e of exits) assert.equal(e.exit_code, 0);
      assert.ok(Math.max(exits[0]!.started, exits[1]!.started) < Math.min(exits[0]!.ended, exits[1]!.ended), JSON.stringify(exits));
      const expected =
        a.eval.success_rate !== b.eval.success_rate
          ? a.eval.success_rate > b.eval.success_rate
            ? 1
            : 2
          : a.eval.death_rate !== b.eval.death_rate
            ? a.eval.death_rate < b.eval.death_rate
              ? 1
              : 2
            : b.train.mean_return > a.train.mean_return
              ? 2
              : 1; // a full tie keeps the earlier candidate
      assert.equal(it1.chosen, expected);
      assert.equal(readFileSync(path.join(out, it1.reward!), 'utf8'), readFileSync(path.join(out, it1.candidates[expected - 1]!.reward!), 'utf8'));
      assert.match(text, new RegExp(`^1 +${expected} +scratch +yes .* kept: the best of 2 candidates`, 'm'));
    } finally {
      process.env = saved;
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('rewardsmith loop failures', () => {
  it('stops with a clear message when the LLM refuses, and keeps the experiment folder for a resume', async () => {
    const server = await startLlmServer(() => ({ status: 400, message: 'model overloaded with nonsense' }));
    const saved = { ...process.env };
    const out = tempDir('loop-fail-');
    try {
      process.env.OPENAI_BASE_URL = server.baseUrl;
      process.env.OPENAI_API_KEY = 'k';
      let text = '';
      let stdout = '';
      const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (text += t) };
      assert.equal(await loopCommand(['--task', 'approach-tree', '--iterations', '1', '--out', out, '--steps', '1024'], io), 1);
      // Progress and the error go to stderr; stdout is kept for the result (the iteration table), which a failed loop has none of.
      assert.match(text, /^iteration 1: designing a reward$/m);
      assert.equal(stdout, '');
      assert.match(text, /rewardsmith loop: LLM call failed: request refused \(400\): .*model overloaded with nonsense/);
      assert.doesNotMatch(text, /\n\s+at /, 'no stack trace for an LLM failure');
      assert.ok(existsSync(path.join(out, 'experiment.json')));
      text = '';
      assert.equal(await loopCommand(['--task', 'approach-tree', '--iterations', '1', '--out', out, '--steps', '999'], io), 1);
      assert.match(text, /was started with steps = 1024, not 999/);
      assert.equal(await loopCommand(['--task', 'approach-tree', '--out', out], io), 2);
    } finally {
      process.env = saved;
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('rewardsmith loop with a designer that never passes the checks', () => {
  it('trains nothing, says why, and retries the design on the next run', async () => {
    const server = await startLlmServer(() => fence('export function reward(x) {\n  return 1;\n}\n'));
    const saved = { ...process.env };
    const out = tempDir('loop-lint-');
    try {
      process.env.OPENAI_BASE_URL = server.baseUrl;
      process.env.OPENAI_API_KEY = 'k';
      let text = '';
      const io = { stdout: (t: string) => void (text += t), stderr: (t: string) => void (text += t) };
      const args = ['--task', 'approach-tree', '--iterations', '1', '--out', out, '--steps', '1024'];
      assert.equal(await loopCommand(args, io), 1);
      assert.match(
        text,
        /iteration 1: no candidate could be trained \(draft 4 still has static errors after 3 fixes, so it is not trained:\n- line \d+, column \d+ \(error, reward-contract\)/,
      );
      assert.match(text, /draft 4 has 1 static error\(s\); giving up on this candidate/);
      assert.doesNotMatch(text, /\n\s+at /);
      assert.equal(server.requests.length, 4);
      assert.ok(!existsSync(path.join(out, 'iteration-1/candidate-1/attempt-1/run')), 'never trained');
      assert.equal(await loopCommand(args, io), 1);
      assert.equal(server.requests.length, 8, 'the failed design is not cached');
    } finally {
      process.env = saved;
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('rewardsmith design', () => {
  const saved = { ...process.env };
  const stderr: string[] = [];
  const capture = (fn: (io: { stdout: (t: string) => void; stderr: (t: string) => void }) => Promise<number>) => {
    stderr.length = 0;
    return fn({ stdout: (t) => void stderr.push(t), stderr: (t) => void stderr.push(t) });
  };
  after(() => {
    process.env = saved;
  });

  it('writes a reviewed reward file, after sending a lint error back', async () => {
    const requests: RecordedRequest[] = [];
    const server = await startLlmServer((req) => {
      requests.push(req);
      if (roleOf(req) === 'designer') return fence(/Static checker diagnostics/.test(req.lastUser) ? EXAMPLE : WITH_MAGMA);
      return JSON.stringify({ reasoning: 'ok', success: true, critique: null, findings: [] });
    });
    try {
      process.env.OPENAI_BASE_URL = server.baseUrl;
      process.env.OPENAI_API_KEY = 'k';
      const dir = tempDir('design-cmd-');
      const file = path.join(dir, 'tree.reward.ts');
      assert.equal(await capture((io) => designCommand(['--task', 'approach-tree', '--out', file], io)), 0, stderr.join(''));
      assert.equal(readFileSync(file, 'utf8'), EXAMPLE);
      assert.deepEqual(requests.map(roleOf), ['designer', 'designer', 'critic']);
      assert.match(stderr.join(''), /draft 1: 1 static error\(s\), sent back to the designer/);
      assert.ok(existsSync(path.join(dir, '.rewardsmith-design', 'tree', LLM_LOG_FILE)));
    } finally {
      await server.close();
    }
  });

  it("refuses a .rewardsmith-design beside --out that is a link out of the folder: nothing in the link's target is removed or written", async () => {
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1';
    process.env.OPENAI_API_KEY = 'k';
    const dir = tempDir('design-linked-');
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(path.join(elsewhere, 'tree'), { recursive: true });
    writeFileSync(path.join(elsewhere, 'tree', 'notes.txt'), 'precious\n');
    const project = path.join(dir, 'project');
    mkdirSync(project);
    symlinkSync(elsewhere, path.join(project, '.rewardsmith-design'));
    assert.equal(await capture((io) => designCommand(['--task', 'approach-tree', '--out', path.join(project, 'tree.reward.ts')], io)), 1);
    assert.match(stderr.join(''), /^rewardsmith design: \S+\.rewardsmith-design is a symbolic link \(to \S+elsewhere\); refusing to write through it/m);
    assert.deepEqual(readdirSync(path.join(elsewhere, 'tree')), ['notes.txt']);
  });

  it('--events ndjson: stdout carries only events, each progress line a log event; people read the same lines on stderr', async () => {
    const server = await startLlmServer((req) =>
      roleOf(req) === 'designer'
        ? fence(/Static checker diagnostics/.test(req.lastUser) ? EXAMPLE : WITH_MAGMA)
        : JSON.stringify({ reasoning: 'ok', success: true, critique: null, findings: [] }),
    );
    try {
      process.env.OPENAI_BASE_URL = server.baseUrl;
      process.env.OPENAI_API_KEY = 'k';
      const file = path.join(tempDir('design-events-'), 'tree.reward.ts');
      let stdout = '';
      let stderr = '';
      const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t) };
      assert.equal(await designCommand(['--task', 'approach-tree', '--out', file, '--events', 'ndjson'], io), 0, stderr);
      const events = stdout
        .trim()
        .split('\n')
        .map((l) => parseEvent(l));
      assert.ok(
        events.every((e) => e !== undefined),
        `every stdout line is an event:\n${stdout}`,
      );
      const logged = events.flatMap((e) => (e!.type === 'log' ? [e!.message] : []));
      assert.ok(logged.includes('draft 1: 1 static error(s), sent back to the designer'), logged.join('\n'));
      assert.deepEqual(stderr.trimEnd().split('\n'), logged, 'the same progress lines on stderr, for a person');
      assert.equal(events[events.length - 1]!.type, 'finished');
    } finally {
      await server.close();
    }
  });

  it('says no LLM is configured, with exit code 2 (as critique) and no file', async () => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    const file = path.join(tempDir('design-cmd-'), 'x.reward.ts');
    assert.equal(await capture((io) => designCommand(['--task', 'approach-tree', '--out', file], io)), 2);
    assert.match(stderr.join(''), /rewardsmith design: No LLM configured: set OPENAI_API_KEY/);
    assert.ok(!existsSync(file));
    assert.equal(await capture((io) => designCommand(['--task', 'no-such-task', '--out', file], io)), 2);
    assert.match(stderr.join(''), /unknown task "no-such-task"/);
  });
});
