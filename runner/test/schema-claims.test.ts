// What the schema says of the observations, and the lint rules repeat (units, ranges, entry shapes, which names a
// task can observe, GLOBAL_DATA and the history at an episode's start), checked on what the runtime really passes:
// a reward that tests every claim on every call is replayed on real probe episodes, and returns which failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIRST_CALL_HISTORY, loadSchema, NEAREST_ENTRY, PARAMETERS, POSITION_ENTRY } from '../src/schema';
import { replayCode } from './helpers/replay';

const CLAIMS = [
  'GLOBAL_DATA is an empty object on the first call of an episode',
  `the first call of an episode sees ${FIRST_CALL_HISTORY} positions`,
  'every key of current/previous_nearest_blocks is a Minecraft block or mob name',
  'a nearest entry is an array of 3 numbers',
  ...NEAREST_ENTRY.map((e) => `a nearest entry's ${e.name} is in [${e.range.min}, ${e.range.max}] ${e.range.unit}`),
  'a past_agent_positions entry is an array of 5 numbers',
  ...POSITION_ENTRY.map((e) => `a position's ${e.name} is in [${e.range.min}, ${e.range.max}] ${e.range.unit}`),
  'health is in its range',
  'every key of inventory_change is an item name, with a finite value',
];

function claimsReward(task: string): string {
  const schema = loadSchema();
  const health = PARAMETERS.find((p) => p.name === 'health')!.range!;
  const bits = (name: string) => 2 ** CLAIMS.findIndex((c) => c.startsWith(name));
  return `// task: ${task}
const NEARBY = new Set(${JSON.stringify([...schema.nearby])});
const ITEMS = new Set(${JSON.stringify([...schema.items])});
const NEAREST = ${JSON.stringify(NEAREST_ENTRY.map((e) => [e.range.min, e.range.max]))};
const POSITION = ${JSON.stringify(POSITION_ENTRY.map((e) => [e.range.min, e.range.max]))};
export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  let failed = 0;
  let sawEntry = 0;
  if (!('started' in GLOBAL_DATA)) {
    if (Object.keys(GLOBAL_DATA).length !== 0) failed |= ${bits('GLOBAL_DATA')};
    if (past_agent_positions.length !== ${FIRST_CALL_HISTORY}) failed |= ${bits('the first call')};
    GLOBAL_DATA.started = true;
  }
  for (const dict of [current_nearest_blocks, previous_nearest_blocks])
    for (const name in dict) {
      sawEntry = 1;
      if (!NEARBY.has(name)) failed |= ${bits('every key of current')};
      const e = dict[name];
      if (!Array.isArray(e) || e.length !== 3) failed |= ${bits('a nearest entry is')};
      else for (let i = 0; i < 3; i++) if (!(e[i] >= NEAREST[i][0] && e[i] <= NEAREST[i][1])) failed |= ${bits("a nearest entry's")} << i;
    }
  const p = past_agent_positions[past_agent_positions.length - 1];
  if (!Array.isArray(p) || p.length !== 5) failed |= ${bits('a past_agent_positions entry')};
  else for (let i = 0; i < 5; i++) if (!(p[i] >= POSITION[i][0] && p[i] <= POSITION[i][1])) failed |= ${bits("a position's")} << i;
  if (!(health >= ${health.min} && health <= ${health.max})) failed |= ${bits('health')};
  for (const name in inventory_change) if (!ITEMS.has(name) || !Number.isFinite(inventory_change[name])) failed |= ${bits('every key of inventory')};
  return failed * 2 + sawEntry;
}
`;
}

for (const task of ['approach-cow', 'explore-diamond']) {
  test(`the schema's claims about observations hold on every call of ${task}'s probe bank`, async () => {
    const replay = await replayCode(claimsReward(task), task);
    assert.equal(replay.failure, null, replay.failure?.error.message);
    const values = replay.traces.flatMap((t) => Array.from(t.values));
    assert.ok(values.length > 1000 && values.some((v) => v % 2 === 1), 'the bank shows nearest entries');
    const failed = values.reduce((all, v) => all | Math.floor(v / 2), 0);
    assert.deepEqual(
      CLAIMS.filter((_, i) => failed & (2 ** i)),
      [],
    );
  });
}
