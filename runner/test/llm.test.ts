// The LLM client and the critic against the scripted OpenAI-compatible server, through the real openai client.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chat, LlmError, LlmNotConfiguredError, resolveLlmConfig, LLM_LOG_FILE, type LlmCallRecord } from '../src/llm/client';
import { critiqueReward, parseCritique } from '../src/llm/critic';
import { designCommand } from '../src/llm/design-command';
import { loopCommand } from '../src/llm/loop-command';
import { contextText, loadTemplate, numberedSource, renderTemplate, TEMPLATE_NAMES } from '../src/llm/prompts';
import { BUILTIN_TASKS } from '../src/tasks';
import { SCALE_RULE, loadSchema } from '../src/schema';
import { startLlmServer, type LlmTestServer } from './helpers/llm-server';
import { tempDir } from './helpers/tmp';

const TREE = BUILTIN_TASKS['approach-tree']!;
const fast = (server: LlmTestServer) => ({ baseUrl: server.baseUrl, apiKey: 'test-key', model: 'scripted-model', retryDelayMs: 5, timeoutMs: 2000 });

// The paper's classic critic catch: "magma" for lava, and a GLOBAL_DATA key read before any write.
const BUGGY_REWARD = `// task: approach-tree
export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  let sparse = 0;
  if (health < GLOBAL_DATA["health"]) sparse = -1;
  GLOBAL_DATA["health"] = health;
  let dense = 0;
  if ("magma" in current_nearest_blocks) dense = -1;
  return Math.sign(sparse) * 1 + Math.sign(dense) * 0.1;
}
`;

describe('LLM configuration', () => {
  it('reads env vars, lets overrides win, treats empty settings as unset', () => {
    const env = { OPENAI_BASE_URL: 'http://llm.local/v1', OPENAI_API_KEY: 'k', REWARDSMITH_MODEL: 'm-env' };
    const c = resolveLlmConfig({ model: 'm-setting', baseUrl: '' }, env);
    assert.equal(c.baseUrl, 'http://llm.local/v1');
    assert.equal(c.model, 'm-setting');
    assert.equal(c.apiKey, 'k');
    assert.equal(c.temperature, 0.3);
  });

  it('says clearly that no LLM is configured, before any request', async () => {
    const saved = { ...process.env };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      await assert.rejects(chat([{ role: 'user', content: 'hi' }], { role: 'critic' }), (e: unknown) => {
        assert.ok(e instanceof LlmNotConfiguredError);
        assert.match((e as Error).message, /No LLM configured: set OPENAI_API_KEY/);
        return true;
      });
    } finally {
      Object.assign(process.env, saved);
    }
  });
});

describe('LLM client retries through the real openai client', () => {
  let server: LlmTestServer;
  after(() => server?.close());

  it('retries 429, 500, an unparsable body and a timeout, then answers; logs every attempt', async () => {
    server = await startLlmServer([
      { status: 429, message: 'slow down', retryAfterMs: 5 },
      { status: 500 },
      { rawBody: '{"choices": [ not json' },
      { delayMs: 8000, reply: 'too late' },
      { text: 'hello', usage: { prompt_tokens: 11, completion_tokens: 2 } },
    ]);
    const dir = tempDir('llm-log-');
    // The limit of one attempt leaves a loaded machine time for the quick answers (at load 18 the first, a 429,
    // took over 2 s and was logged as a time-out); only the scripted 8 s delay runs into it.
    const answer = await chat([{ role: 'user', content: 'say hello' }], {
      role: 'test',
      llm: { ...fast(server), timeoutMs: 5000, maxRetries: 4 },
      log: { dir },
    });
    assert.equal(answer.text, 'hello');
    assert.deepEqual(answer.usage, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    assert.equal(server.requests.length, 5);
    assert.equal(server.requests[0]!.temperature, 0.3);
    assert.equal(server.requests[0]!.headers.authorization, 'Bearer test-key');
    const log = readFileSync(path.join(dir, LLM_LOG_FILE), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LlmCallRecord);
    assert.equal(log.length, 5);
    assert.match(log[0]!.error!, /rate limited \(429\)/);
    assert.match(log[1]!.error!, /server error \(500\)/);
    assert.match(log[2]!.error!, /not valid JSON/);
    assert.match(log[3]!.error!, /no complete answer within 5000 ms \(the limit of one attempt\)/);
    assert.equal(log[4]!.answer, 'hello');
    assert.equal(log[4]!.model, 'scripted-model');
    assert.deepEqual(log[4]!.messages, [{ role: 'user', content: 'say hello' }]);
    assert.ok(log[4]!.latency_ms >= 0);
  });

  it('gives up with a clear error after the last retry, and does not retry a rejected key', async () => {
    await server.close();
    server = await startLlmServer([{ status: 503 }, { status: 503 }, { status: 401, message: 'bad key' }]);
    await assert.rejects(chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), maxRetries: 1 } }), (e: unknown) => {
      assert.ok(e instanceof LlmError);
      assert.equal(e.kind, 'server');
      assert.match(e.message, /failed after 2 attempts: server error \(503\)/);
      return true;
    });
    await assert.rejects(chat([{ role: 'user', content: 'x' }], { role: 'test', llm: fast(server) }), /the API key was rejected \(401\)/);
    assert.equal(server.requests.length, 3);
  });
});

describe('LLM calls are bounded in wall-clock time, body included', () => {
  let server: LlmTestServer;
  after(() => server?.close());
  const dripping = { dripEveryMs: 200, reply: 'a complete answer that would take minutes to arrive at this pace' };

  it('a server that sends headers and then drips the body is cut off at the per-attempt limit, and retried', { timeout: 15_000 }, async () => {
    server = await startLlmServer(() => dripping);
    const started = Date.now();
    await assert.rejects(
      chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), timeoutMs: 300, maxRetries: 1, budgetMs: 10_000 } }),
      (e: unknown) => {
        assert.ok(e instanceof LlmError);
        assert.equal(e.kind, 'timeout');
        assert.match(e.message, /^LLM call failed after 2 attempts: no complete answer within 300 ms \(the limit of one attempt\)$/);
        return true;
      },
    );
    assert.equal(server.requests.length, 2);
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('retries stop at the total budget, and the message names it', { timeout: 15_000 }, async () => {
    await server.close();
    server = await startLlmServer(() => dripping);
    const started = Date.now();
    await assert.rejects(
      chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), timeoutMs: 400, budgetMs: 900, maxRetries: 10 } }),
      (e: unknown) => {
        assert.ok(e instanceof LlmError);
        assert.equal(e.kind, 'timeout');
        assert.match(e.message, /total budget of 900 ms/);
        return true;
      },
    );
    const took = Date.now() - started;
    assert.ok(took >= 800 && took < 2500, `took ${took} ms`);
    assert.ok(server.requests.length <= 3);
  });

  it("caps a server's Retry-After and says so, and gives up when the budget cannot cover the wait", { timeout: 15_000 }, async () => {
    await server.close();
    server = await startLlmServer([{ status: 429, message: 'come back in an hour', retryAfterSeconds: 3600 }, 'finally']);
    const dir = tempDir('llm-log-');
    const started = Date.now();
    const answer = await chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), retryAfterCapMs: 50 }, log: { dir } });
    assert.equal(answer.text, 'finally');
    assert.ok(Date.now() - started < 2000);

    await server.close();
    server = await startLlmServer([
      { status: 429, message: 'come back in an hour', retryAfterSeconds: 3600 },
      { status: 429, retryAfterSeconds: 3600 },
    ]);
    await assert.rejects(
      chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), retryAfterCapMs: 5_000, budgetMs: 1_000 } }),
      (e: unknown) => {
        assert.ok(e instanceof LlmError);
        assert.match(
          e.message,
          /rate limited \(429\).*no time left in the call's total budget of 1000 ms.*the server asked to wait 3600 s \(Retry-After\); waited 5 s, the most this client waits/,
        );
        return true;
      },
    );
    assert.equal(server.requests.length, 1, 'no second request: the wait would outlast the budget');
  });

  it('critique, design and loop end with a located message, not a hang', { timeout: 60_000 }, async () => {
    await server.close();
    server = await startLlmServer(() => dripping);
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'k', REWARDSMITH_LLM_TIMEOUT_MS: '300', REWARDSMITH_LLM_BUDGET_MS: '1000' });
    const out: string[] = [];
    const io = { stdout: (t: string) => void out.push(t), stderr: (t: string) => void out.push(t) };
    try {
      const started = Date.now();
      await assert.rejects(critiqueReward({ file: 'buggy.reward.ts', source: BUGGY_REWARD, task: TREE }), /total budget of 1000 ms/);
      const dir = tempDir('llm-bounded-');
      assert.equal(await designCommand(['--task', 'approach-tree', '--out', path.join(dir, 'cow.reward.ts')], io), 1);
      assert.equal(await loopCommand(['--task', 'approach-tree', '--iterations', '1', '--out', path.join(dir, 'exp')], io), 1);
      assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
      const printed = out.join('');
      assert.match(printed, /rewardsmith design: LLM call failed.*total budget of 1000 ms/);
      assert.match(printed, /rewardsmith loop: .*total budget of 1000 ms/);
    } finally {
      for (const k of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'REWARDSMITH_LLM_TIMEOUT_MS', 'REWARDSMITH_LLM_BUDGET_MS']) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});

describe('LLM reply bodies are capped in size', () => {
  let server: LlmTestServer;
  after(() => server?.close());
  const MiB = 2 ** 20;

  it('has a default of a few MiB, set by REWARDSMITH_LLM_MAX_BODY_BYTES or the maxBodyBytes option', () => {
    assert.equal(resolveLlmConfig({}, {}).maxBodyBytes, 4 * MiB);
    assert.equal(resolveLlmConfig({}, { REWARDSMITH_LLM_MAX_BODY_BYTES: '65536' }).maxBodyBytes, 65536);
    assert.equal(resolveLlmConfig({ maxBodyBytes: 1000 }, { REWARDSMITH_LLM_MAX_BODY_BYTES: '65536' }).maxBodyBytes, 1000);
  });

  it('a server that streams a JSON body forever is cut off at the limit, with an error naming it; the client read about the limit, not the stream', {
    timeout: 60_000,
  }, async () => {
    // Without a cap the client reads the whole 64 MiB ceiling (then times out); with it, it hangs up near 1 MiB.
    server = await startLlmServer(() => ({ endlessBody: { ceilingBytes: 64 * MiB } }));
    const dir = tempDir('llm-log-');
    await assert.rejects(
      chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), timeoutMs: 10_000, maxRetries: 2, maxBodyBytes: MiB }, log: { dir } }),
      (e: unknown) => {
        assert.ok(e instanceof LlmError);
        assert.equal(e.kind, 'malformed');
        assert.equal(
          e.message,
          `LLM call failed: the response from ${server.baseUrl} is longer than 1 MiB, the limit of a reply body (REWARDSMITH_LLM_MAX_BODY_BYTES); is it an OpenAI-compatible chat completions endpoint?`,
        );
        return true;
      },
    );
    assert.equal(server.requests.length, 1, 'a body over the limit is not asked for again');
    await until(() => server.bodyBytesSent.length === 1);
    // What the server got to write: the limit, plus what the two sockets' buffers hold on loopback.
    const sent = server.bodyBytesSent[0]!;
    assert.ok(sent >= MiB && sent < MiB + 16 * MiB, `the server wrote ${(sent / MiB).toFixed(1)} MiB before the client hung up`);
    const log = readFileSync(path.join(dir, LLM_LOG_FILE), 'utf8').trim().split('\n');
    assert.equal(log.length, 1);
    assert.match((JSON.parse(log[0]!) as LlmCallRecord).error ?? '', /longer than 1 MiB/);
  });

  it('a declared Content-Length over the limit fails before the body is read', { timeout: 30_000 }, async () => {
    await server.close();
    server = await startLlmServer(() => ({ endlessBody: { ceilingBytes: 64 * MiB, declaredLength: 50 * MiB } }));
    await assert.rejects(
      chat([{ role: 'user', content: 'x' }], { role: 'test', llm: { ...fast(server), timeoutMs: 10_000, maxBodyBytes: 2 * MiB } }),
      /the response from .* is longer than 2 MiB \(it declares 50 MiB\), the limit of a reply body/,
    );
    await until(() => server.bodyBytesSent.length === 1);
    assert.ok(server.bodyBytesSent[0]! < 16 * MiB, `the server wrote ${(server.bodyBytesSent[0]! / MiB).toFixed(1)} MiB`);
  });
});

/** Waits (without a time limit of its own: the test's timeout ends it) until `done()`. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('model and server text reaches the terminal without control sequences', () => {
  it("design prints a server's error text without its escape sequences", { timeout: 30_000 }, async () => {
    const server = await startLlmServer([{ status: 401, message: '\x1b]0;owned\x07\x1b[2Jbad key' }]);
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'k' });
    const out: string[] = [];
    try {
      const dir = tempDir('llm-terminal-');
      const code = await designCommand(['--task', 'approach-tree', '--out', path.join(dir, 'a.reward.ts')], {
        stdout: (t) => void out.push(t),
        stderr: (t) => void out.push(t),
      });
      assert.equal(code, 1);
      const printed = out.join('');
      assert.match(printed, /the API key was rejected \(401\): 401 bad key/);
      assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(printed), JSON.stringify(printed));
    } finally {
      delete process.env.OPENAI_BASE_URL;
      Object.assign(process.env, saved);
      await server.close();
    }
  });
});

describe('prompts', () => {
  it('inject the schema, game facts, task and contract from the modules', () => {
    const text = contextText(TREE);
    assert.match(text, /Objective: Approach a tree\./);
    assert.match(text, /Episode limit: 2000 steps/);
    assert.ok(text.includes(SCALE_RULE.expression));
    assert.ok(
      text.includes(
        'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA)',
      ),
    );
    assert.match(text, /`health` \(0\.\.10 hearts\)/);
    assert.match(text, /yaw -35°\.\.35°/);
    assert.match(text, /`magma` → `lava` or `magma_block`/);
    assert.ok(!text.includes('damage_dealt'), 'approach tasks get no attack parameters');
    assert.ok(contextText(BUILTIN_TASKS['attack-cow']).includes('kill_entity'));
    // every mob named is a real one
    const mobs = /- Mobs: (.*)\./.exec(text)![1]!.split(', ');
    assert.ok(mobs.length > 20 && mobs.every((m) => loadSchema().mobs.has(m)));
    // the "not names" list never calls a real name (diamond, beef) wrong
    const wrong = [.../- Not names \(use the real ones\): (.*)\./.exec(text)![1]!.matchAll(/`(\w+)` →/g)].map((m) => m[1]!);
    assert.ok(wrong.includes('magma') && wrong.every((w) => loadSchema().kindsOf(w).length === 0));
    assert.match(text, /sandbox limited to 50 ms per call and 256 MB/);
  });

  it('templates state no schema fact themselves (they are injected), and every placeholder is filled', () => {
    for (const name of TEMPLATE_NAMES) {
      const text = loadTemplate(name);
      for (const fact of [SCALE_RULE.expression, '35°', '0..10', 'past_agent_positions, GLOBAL_DATA', '1.16.5']) {
        assert.ok(!text.includes(fact), `prompts/${name}.md hand-copies "${fact}"`);
      }
    }
    assert.throws(() => renderTemplate('designer-initial', {}), /uses \{\{context\}\} but no value was given/);
    assert.throws(() => renderTemplate('designer-initial', { context: 'c', extra: 'x' }), /has no placeholder for \{\{extra\}\}/);
  });

  it('number source lines from 1', () => {
    assert.equal(numberedSource('a\nb'), '1| a\n2| b');
  });
});

describe('critic', () => {
  let server: LlmTestServer;
  after(() => server?.close());
  before(async () => {
    server = await startLlmServer([
      // malformed: prose with no JSON, then JSON with a non-boolean verdict
      'The reward looks mostly fine but magma is wrong.',
      '{"reasoning": "x", "success": "maybe", "critique": null}',
      // repairable: fenced, trailing comma, string verdict, "warn" severity, line past the end
      '```json\n{"reasoning": "magma is not a block; GLOBAL_DATA health is read before it is written.", "success": "false", "critique": null,\n' +
        ' "findings": [{"line": 7, "severity": "error", "message": "`magma` is not a block name; use `lava`."},\n' +
        '  {"line": "4", "end_line": 5, "severity": "warn", "message": "GLOBAL_DATA[\\"health\\"] is read before it is written."},\n' +
        '  {"line": 99, "severity": "information", "message": "past the end"},\n  {"message": "no line"},]}\n```',
    ]);
  });

  it('re-asks on a malformed answer, repairs a near-miss and returns line-anchored findings', async () => {
    const dir = tempDir('critic-');
    const result = await critiqueReward({ file: 'buggy.reward.ts', source: BUGGY_REWARD, task: TREE, llm: fast(server), log: { dir } });
    assert.equal(result.success, false);
    assert.equal(result.model, 'scripted-model');
    assert.deepEqual(result.findings, [
      { line: 7, severity: 'error', message: '`magma` is not a block name; use `lava`.' },
      { line: 4, endLine: 5, severity: 'warning', message: 'GLOBAL_DATA["health"] is read before it is written.' },
      { line: 10, severity: 'information', message: 'past the end' },
    ]);
    assert.match(result.critique!, /line 7: `magma` is not a block name/);
    assert.equal(server.requests.length, 3);
    // the critic saw numbered code and the task; the retries told it what was wrong
    const first = server.requests[0]!;
    assert.match(first.system, /Answer with one JSON object/);
    assert.match(first.lastUser, / 7\| {3}if \("magma" in current_nearest_blocks\) dense = -1;/);
    assert.match(first.lastUser, /Objective: Approach a tree/);
    assert.match(server.requests[1]!.lastUser, /could not be used: no JSON object found/);
    assert.match(server.requests[2]!.lastUser, /"success" must be true or false/);
    assert.equal(readFileSync(path.join(dir, LLM_LOG_FILE), 'utf8').trim().split('\n').length, 3);
  });

  it('fails with a clear message when every answer is malformed', async () => {
    await server.close();
    server = await startLlmServer(['nope', 'still nope']);
    await assert.rejects(critiqueReward({ file: 'f.reward.ts', source: BUGGY_REWARD, llm: { ...fast(server), maxRetries: 1 } }), (e: unknown) => {
      assert.ok(e instanceof LlmError);
      assert.equal(e.kind, 'malformed');
      assert.match(e.message, /the critic's answer was malformed 2 times; last problem: no JSON object found/);
      return true;
    });
  });

  it('accepts a passing verdict and drops the critique', () => {
    const r = parseCritique('{"reasoning": "fine", "success": true, "critique": "nothing", "findings": []}', 5);
    assert.deepEqual(r, { ok: true, value: { reasoning: 'fine', success: true, critique: null, findings: [] } });
  });
});
