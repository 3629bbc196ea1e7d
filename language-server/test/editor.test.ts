// Hover and completion in-process, on the kinds of spots an editor asks about.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RewardProject } from '../../runner/src/lint/analysis';
import { completionsAt, hoverAt, taskHeaderCompletions } from '../src/editor';
import { BUILTIN_TASKS } from '../../runner/src/task-list';

const source = `export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  const cow = current_nearest_blocks['cow'];
  if (cow === undefined) return 0;
  const [distance, yaw] = cow;
  const height = past_agent_positions[past_agent_positions.length - 1][1];
  const gained = inventory_change.
  return Math.sign(distance < 2 ? 1 : 0) * 1 + Math.sign(cow[1] + yaw + height) * 0.1;
}
`;

const project = new RewardProject('/virtual/editor.reward.ts', source);
const snap = project.snapshot();
const at = (needle: string, nth = 0, delta = 1) => {
  let i = -1;
  for (let k = 0; k <= nth; k++) i = source.indexOf(needle, i + 1);
  return i + delta;
};
const hover = (offset: number) => (hoverAt(snap, offset)?.contents as { value: string } | undefined)?.value ?? '';

test('hover: entry elements by destructuring and by index, positions, parameters', () => {
  assert.match(hover(at('distance, yaw')), /\*\*distance\*\* `number` — 0\.\.64 m[\s\S]*metres/);
  assert.match(hover(at('yaw]')), /\*\*yaw\*\* `number` — -3\.14\.\.3\.14 rad[\s\S]*radians/);
  assert.match(hover(at('1] + yaw', 0, 0)), /\[1\] yaw[\s\S]*-3\.14\.\.3\.14 rad/);
  assert.match(hover(at('][1]', 0, 2)), /\[1\] y[\s\S]*0\.\.256 m[\s\S]*ground level/);
  assert.match(hover(at('GLOBAL_DATA')), /\*\*GLOBAL_DATA\*\* `GlobalData`[\s\S]*empty object at episode start/);
  assert.match(hover(at("'cow'")), /\*\*cow\*\* — Cow \(mob\)/);
});

test('completion: item names after inventory_change., block and mob names in nearest-blocks keys', () => {
  const items = completionsAt(snap, at('inventory_change.\n', 0, 'inventory_change.'.length)).map((c) => c.label);
  assert.ok(items.includes('oak_log') && items.includes('diamond') && items.includes('beef'));
  assert.ok(!items.includes('water') && !items.includes('cow'), 'water and cow are not items');
  const keys = completionsAt(snap, at("'cow'", 0, 2)).map((c) => c.label);
  assert.ok(keys.includes('cow') && keys.includes('lava') && keys.includes('diamond_ore'));
  assert.ok(!keys.includes('diamond'), 'diamond (the item) is never a nearest-blocks key');
});

test('completion: the built-in tasks in a `// task:` or `# task:` header among the leading comments, and nowhere else', () => {
  const ts = '// Design thoughts\n// task: appr\nexport function reward_function() {}\n';
  const items = taskHeaderCompletions(ts, { line: 1, character: '// task: appr'.length })!;
  assert.deepEqual(
    items.map((c) => c.label),
    Object.keys(BUILTIN_TASKS),
  );
  const tree = items.find((c) => c.label === 'approach-tree')!;
  assert.equal(tree.detail, 'Approach a tree.');
  // The typed word is replaced; right after the colon the id comes with its space.
  assert.deepEqual(tree.textEdit, { range: { start: { line: 1, character: 9 }, end: { line: 1, character: 13 } }, newText: 'approach-tree' });
  const afterColon = taskHeaderCompletions('# task:', { line: 0, character: 7 })!;
  assert.equal((afterColon[0]!.textEdit as { newText: string }).newText, ' explore-diamond');
  assert.equal(taskHeaderCompletions('const x = 1;\n// task: a', { line: 1, character: 10 }), undefined, 'below the first line of code');
  assert.equal(taskHeaderCompletions('const x = { task: a };', { line: 0, character: 19 }), undefined, 'not a comment');
});

test("completion: a ':' typed outside the task header asks for nothing (TypeScript's answers come on other triggers)", () => {
  assert.deepEqual(taskHeaderCompletions('const x = { a: 1 };', { line: 0, character: 13 }, ':'), []);
  assert.equal(taskHeaderCompletions('const x = { a: 1 };', { line: 0, character: 13 }), undefined);
});
