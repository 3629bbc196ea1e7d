import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replayCode } from '../../../test/helpers/replay';
import { reward, testRule } from '../../../test/helpers/rule-tester';
import { lintText } from '../rules';
import { memoryWriteThenCompare } from './memory-write-then-compare';

const STEP_COUNTER = reward(`  GLOBAL_DATA.steps = (GLOBAL_DATA.steps ?? 0) + 1;\n  if (GLOBAL_DATA.steps > 300) return -0.01;\n  return 0;`);
const CLOSEST_STORED_FIRST = reward(
  `  const cow = current_nearest_blocks['cow'];\n  if (cow === undefined) return 0;\n  GLOBAL_DATA.closest = cow[0];\n  return cow[0] < GLOBAL_DATA.closest ? 1 : 0;`,
);
const CLOSEST_COMPARED_FIRST = reward(
  `  const cow = current_nearest_blocks['cow'];\n  if (cow === undefined) return 0;\n  const closer = GLOBAL_DATA.closest !== undefined && cow[0] < GLOBAL_DATA.closest;\n  GLOBAL_DATA.closest = cow[0];\n  return closer ? 1 : 0;`,
);

testRule(memoryWriteThenCompare, {
  valid: [
    {
      name: 'compare first, store after',
      code: reward(
        `  let sparse = 0;\n  if (GLOBAL_DATA['health'] !== undefined && health < GLOBAL_DATA['health']) sparse = -1;\n  GLOBAL_DATA['health'] = health;\n  return sparse;`,
      ),
    },
    {
      name: 'a store in another branch',
      code: reward(
        `  if (health > 5) {\n    GLOBAL_DATA['health'] = health;\n  } else if (GLOBAL_DATA['health'] !== undefined && health < GLOBAL_DATA['health']) return -1;\n  return 0;`,
      ),
    },
    { name: 'a step counter compared with a limit', code: STEP_COUNTER },
    {
      name: 'a stored sum compared with something else',
      code: reward(`  GLOBAL_DATA.seen = (GLOBAL_DATA.seen ?? 0) + ('cow' in current_nearest_blocks ? 1 : 0);\n  return GLOBAL_DATA.seen >= 10 ? 1 : 0;`),
    },
  ],
  invalid: [
    {
      name: 'store then compare the same key',
      code: reward(`  GLOBAL_DATA['health'] = health;\n  let sparse = 0;\n  if (health < GLOBAL_DATA['health']) sparse = -1;\n  return sparse;`),
      errors: [{ line: 4, message: /GLOBAL_DATA\['health'\] was stored on line 2 .*compares the new value with itself \(always false\)/ }],
    },
    {
      name: 'store then compare through a property',
      code: reward(
        `  const cow = current_nearest_blocks['cow'];\n  if (cow === undefined) return 0;\n  GLOBAL_DATA.closest = cow[0];\n  return cow[0] < GLOBAL_DATA.closest ? 1 : 0;`,
      ),
      errors: [{ line: 5, message: /stored on line 4/ }],
    },
  ],
});

// The claim replayed on real episodes in the real sandbox: the flagged comparison is never true (the reward it
// decides never pays, where the same reward comparing first does), and the step counter it leaves alone does change.
describe('memory-write-then-compare against the runtime', () => {
  it('a step counter compared with a limit is not flagged, and its comparison turns true', async () => {
    assert.deepEqual(
      lintText('counter.reward.ts', STEP_COUNTER).filter((d) => d.code === 'memory-write-then-compare'),
      [],
    );
    const r = await replayCode(STEP_COUNTER);
    assert.equal(r.failure, null);
    const values = r.traces.flatMap((t) => Array.from(t.values));
    assert.ok(values.includes(0) && values.includes(-0.01), 'the counter never passed 300');
  });
  it('the flagged comparison is never true on any probe episode; compared first, it is', async () => {
    assert.equal(lintText('stored.reward.ts', CLOSEST_STORED_FIRST).filter((d) => d.code === 'memory-write-then-compare').length, 1);
    const flagged = await replayCode(CLOSEST_STORED_FIRST);
    assert.ok(flagged.traces.every((t) => t.values.every((v) => v === 0)));
    const fixed = await replayCode(CLOSEST_COMPARED_FIRST);
    assert.ok(
      fixed.traces.some((t) => t.values.some((v) => v === 1)),
      'the fixed reward never paid either: the replay proves nothing',
    );
  });
});
