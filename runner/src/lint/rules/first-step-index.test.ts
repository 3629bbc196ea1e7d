import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIRST_CALL_HISTORY } from '../../schema';
import { firstCalls, replayCode } from '../../../test/helpers/replay';
import { reward, testRule } from '../../../test/helpers/rule-tester';
import { lintText } from '../rules';
import { firstStepIndex } from './first-step-index';

testRule(firstStepIndex, {
  valid: [
    {
      name: 'an early return on a short history',
      code: reward(
        `  if (past_agent_positions.length < 2) return 0;\n  const prev = past_agent_positions[past_agent_positions.length - 2];\n  return prev[1] > 70 ? 1 : 0;`,
      ),
    },
    {
      name: 'a guard in the condition',
      code: reward(`  return past_agent_positions.length >= 2 && past_agent_positions[past_agent_positions.length - 2][1] > 70 ? 1 : 0;`),
    },
    {
      name: 'the entry checked before use',
      code: reward(`  const prev = past_agent_positions.at(-2);\n  if (prev === undefined) return 0;\n  return prev[1] > 70 ? 1 : 0;`),
    },
    { name: 'optional chaining', code: reward(`  return (past_agent_positions[past_agent_positions.length - 2]?.[1] ?? 0) > 70 ? 1 : 0;`) },
    { name: 'the current position', code: reward(`  const now = past_agent_positions[past_agent_positions.length - 1];\n  return now[1] < 20 ? 1 : 0;`) },
    {
      name: 'the start position (always there: the first call sees two entries)',
      code: reward(
        `  const prev = past_agent_positions[past_agent_positions.length - 2];\n  const now = past_agent_positions[past_agent_positions.length - 1];\n  return now[1] < prev[1] ? -1 : 0;`,
      ),
    },
    { name: 'index 1 read directly', code: reward(`  return past_agent_positions[1][1] > 70 ? 1 : 0;`) },
    {
      name: 'an alias of the length, guarded',
      code: reward(`  const n = past_agent_positions.length;\n  if (n < 3) return 0;\n  return past_agent_positions[n - 3][1] > 70 ? 1 : 0;`),
    },
  ],
  invalid: [
    {
      name: 'the position before the start read on the first step',
      code: reward(
        `  const before = past_agent_positions[past_agent_positions.length - 3];\n  const now = past_agent_positions[past_agent_positions.length - 1];\n  return now[1] < before[1] ? -1 : 0;`,
      ),
      errors: [{ line: 2, message: /undefined on the first step.*holds 2 entries.*length >= 3/ }],
    },
    {
      name: 'destructuring the entry three back',
      code: reward(`  const [x, y, z] = past_agent_positions.at(-3);\n  return y > 70 ? 1 : 0;`),
      errors: [{ line: 2, message: /length >= 3/ }],
    },
    {
      name: 'index 2 read directly',
      code: reward(`  return past_agent_positions[2][1] > 70 ? 1 : 0;`),
      errors: [{ line: 2, message: /undefined on the first step/ }],
    },
    {
      name: 'through an alias of the length',
      code: reward(`  const n = past_agent_positions.length;\n  return past_agent_positions[n - 3][1] > 70 ? 1 : 0;`),
      errors: [{ line: 3, message: /past_agent_positions\[n - 3\] is undefined on the first step.*length >= 3/ }],
    },
  ],
});

// The rule's claim replayed on real episodes in the real sandbox: what it flags throws on the first step, at
// the flagged line; what it leaves alone (the start position, `length - 2`) runs on every step of every episode.
describe('first-step-index against the runtime', () => {
  it('the first call of an episode sees FIRST_CALL_HISTORY entries', async () => {
    const r = await replayCode(reward(`  return past_agent_positions.length;`));
    assert.equal(r.failure, null);
    assert.deepEqual(new Set(firstCalls(r)), new Set([FIRST_CALL_HISTORY]));
  });
  it('`length - 2` (the start position) is there on the first step: not flagged, and it runs', async () => {
    const code = reward(`  const prev = past_agent_positions[past_agent_positions.length - 2];\n  return prev[0] === 0 ? 0 : 1;`);
    assert.deepEqual(
      lintText('start.reward.ts', code).filter((d) => d.code === 'first-step-index'),
      [],
    );
    const r = await replayCode(code);
    assert.equal(r.failure, null, r.failure?.error.message);
  });
  // The line the rule flags, and the line the sandbox's TypeError is at (where the undefined entry is read from).
  for (const [name, body, line, throwsAt] of [
    ['`length - 3`', `  const before = past_agent_positions[past_agent_positions.length - 3];\n  return before[1] > 70 ? 1 : 0;`, 2, 3],
    ['`n - 3` through an alias', `  const n = past_agent_positions.length;\n  return past_agent_positions[n - 3][1] > 70 ? 1 : 0;`, 3, 3],
  ] as const) {
    it(`${name} is flagged, and throws on the first step at that line`, async () => {
      const code = reward(body);
      const flagged = lintText('deep.reward.ts', code).filter((d) => d.code === 'first-step-index');
      assert.deepEqual(
        flagged.map((d) => d.range.start.line + 1),
        [line],
      );
      const r = await replayCode(code);
      assert.ok(r.failure, 'the replay ran without an error');
      assert.equal(r.failure.step, 1);
      assert.equal(r.failure.error.kind, 'throw');
      assert.equal(r.failure.error.line, throwsAt);
    });
  }
});
