import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reward } from '../../../test/helpers/rule-tester';
import { lintText } from '../rules';

const codes = (text: string) => lintText('typescript-case.reward.ts', text).map((d) => `${d.range.start.line + 1} ${d.code}`);

describe('lint rule typescript', () => {
  it('quiet on a well-typed file', () => {
    assert.deepEqual(codes(reward(`  const x: number = health;\n  return x;`)), []);
  });
  it("reports TypeScript's own errors as ts<code>", () => {
    assert.deepEqual(codes(reward(`  const x: number = 'a';\n  return x;`)), ['2 ts2322']);
  });
  it("says a missing Node global in the sandbox's terms", () => {
    const [d] = lintText('node-global.reward.ts', reward(`  process.exit(1);\n  return 0;`));
    assert.match(d!.message, /runs in a sandbox without Node\.js globals/);
  });
  it('drops its message where a rule already explains the spot (a Python-ism line)', () => {
    assert.deepEqual(codes(reward(`  return len(past_agent_positions);`)), ['2 python-ism']);
  });
});
