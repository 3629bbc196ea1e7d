// The schema lint on Python rewards: the paper's four printed rewards (Algorithms I–IV, in Python) each get
// the flaw they are known for flagged at its line (the line marked `# flaw:`), and well-formed Python rewards,
// the bundled twin among them, lint clean. Each runtime claim a rule makes here is replayed in
// python-sandbox.test.ts (KeyError, NameError, None) or is about names the game does not have.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lintText, loadPythonParser } from '../src/lint/rules';

const PAPER = path.join(__dirname, 'fixtures', 'rewards', 'python', 'paper');
const read = (file: string) => readFileSync(file, 'utf8');

before(() => loadPythonParser());

test("the paper's four printed rewards get their known flaw flagged at its line", () => {
  const expected: [string, string[]][] = [
    ['algorithm-1-explore-diamond.reward.py', ['unknown-name']], // "magma" for lava
    ['algorithm-2-approach-tree.reward.py', ['global-data-uninitialised']], // GLOBAL_DATA["health"] before any write
    ['algorithm-3-approach-cow.reward.py', ['scale-swapped']], // sign(dense) * 1 + sign(sparse) * 0.1
    ['algorithm-4-attack-cow.reward.py', ['unknown-name', 'key-error']], // "wood", kill_entity["cow"]
  ];
  for (const [name, codes] of expected) {
    const text = read(path.join(PAPER, name));
    const flawLines = text
      .split('\n')
      .map((l, i) => (l.includes('# flaw:') ? i : -1))
      .filter((i) => i >= 0);
    const found = lintText(name, text).filter((d) => d.severity === 'error');
    assert.deepEqual(
      found.map((d) => [d.code, d.range.start.line]),
      codes.map((c, i) => [c, flawLines[i]]),
      `${name}:\n${found.map((d) => `${d.range.start.line + 1}: ${d.code} ${d.message}`).join('\n')}`,
    );
  }
});

test('well-formed Python rewards lint clean: the bundled twin and the runtime fixtures', () => {
  const clean = [
    path.join(__dirname, '..', 'rewards', 'approach-cow.dense.reward.py'),
    path.join(__dirname, 'fixtures', 'rewards', 'python', 'approach-tree.reward.py'),
    path.join(__dirname, 'fixtures', 'rewards', 'python', 'dense-sparse.reward.py'),
  ];
  for (const file of clean) assert.deepEqual(lintText(file, read(file)), [], file);
});

test('a Python reward names its task with a "# task:" header, as TypeScript does with "// task:"', async () => {
  const { taskFromHeader, withTaskHeader } = await import('../src/tasks');
  const text = read(path.join(__dirname, '..', 'rewards', 'approach-cow.dense.reward.py'));
  assert.equal(taskFromHeader(text), 'approach-cow');
  assert.equal(taskFromHeader(withTaskHeader(text, 'approach-pig')), 'approach-pig');
  assert.match(withTaskHeader(text, 'approach-pig'), /^# task: approach-pig\n/);
});
