// `rewardsmith critique FILE` against the scripted OpenAI-compatible server (real openai client), and its
// clear failures: no LLM configured, and an LLM that keeps failing.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { cliSession } from '../../runner/test/helpers/cli-all';
import { startLlmServer } from '../../runner/test/helpers/llm-server';

const root = path.join(__dirname, '..', '..');
const file = path.join(__dirname, 'fixtures', 'buggy', 'paper-explore-diamond-printed.reward.ts');

// `rewardsmith critique ARGS…` through the real dispatcher, this file's command lines in one child process
// (runner/test/helpers/cli-all.ts), asynchronous so that the LLM server in this process answers.
const session = cliSession(root);
after(() => session.close());
async function critique(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await session.run(['critique', ...args], { env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: '', REWARDSMITH_MODEL: '', ...env } });
  return { code: r.code, stdout: r.out, stderr: r.err };
}

test('critique CLI prints the line-anchored review; exit 1 when the critic fails the reward', async () => {
  const llm = await startLlmServer([
    JSON.stringify({
      reasoning: 'magma is not a block name',
      success: false,
      critique: 'Use lava.',
      findings: [{ line: 10, severity: 'error', message: 'magma → lava' }],
    }),
  ]);
  try {
    const r = await critique(['--format', 'json', file], { OPENAI_BASE_URL: llm.baseUrl, REWARDSMITH_MODEL: 'scripted' });
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as { status: string; success: boolean; findings: { range: { start: { line: number } }; message: string }[] };
    assert.equal(out.status, 'ok');
    assert.equal(out.success, false);
    assert.deepEqual(
      out.findings.map((f) => [f.range.start.line, f.message]),
      [[9, 'magma → lava']],
    );
    // The critic was told what the static checker already found, so it does not repeat it.
    assert.match(llm.requests[0]!.lastUser, /line 10 \(error\): 'magma' is not a Minecraft/);
  } finally {
    await llm.close();
  }
});

test('critique CLI says clearly when no LLM is configured or the LLM keeps failing', async () => {
  const none = await critique([file], {});
  assert.equal(none.code, 2);
  assert.match(none.stderr, /No LLM configured: set OPENAI_API_KEY/);

  const llm = await startLlmServer(() => ({ status: 503, message: 'overloaded', retryAfterMs: 5 }));
  try {
    const failing = await critique([file], { OPENAI_BASE_URL: llm.baseUrl });
    // A failing LLM is a failure (1) as in design and loop; only what the user must set up is 2.
    assert.equal(failing.code, 1);
    assert.match(failing.stderr, /critic failed after \d+ attempt\(s\)/);
    assert.ok(llm.requests.length >= 2, 'retried');
  } finally {
    await llm.close();
  }
});

test('critique CLI prints no control sequence from the model: no screen clear, no window title, no colours', async () => {
  const hostile = '\x1b]0;pwned\x07\x1b[2J\x1b[HThe magma\x9b31m check\x1bc fails.\r\x07';
  const llm = await startLlmServer(() =>
    JSON.stringify({
      reasoning: hostile,
      success: false,
      critique: `Use lava.\x1b[8m hidden`,
      findings: [{ line: 10, severity: 'error', message: '\x1b[31mmagma\x1b[0m → lava' }],
    }),
  );
  try {
    const text = await critique([file], { OPENAI_BASE_URL: llm.baseUrl, REWARDSMITH_MODEL: 'scripted' });
    assert.equal(text.code, 1, text.stderr);
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(text.stdout), JSON.stringify(text.stdout));
    assert.match(text.stdout, /The magma check fails\./);
    assert.match(text.stdout, /Critique: Use lava\. hidden/);
    assert.match(text.stdout, /:10: error: magma → lava/);
    const json = await critique(['--format', 'json', file], { OPENAI_BASE_URL: llm.baseUrl, REWARDSMITH_MODEL: 'scripted' });
    assert.ok(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(json.stdout), 'raw C1 characters are escaped in JSON');
    assert.equal((JSON.parse(json.stdout) as { reasoning: string }).reasoning, hostile, 'the JSON value is unchanged');
  } finally {
    await llm.close();
  }
});
