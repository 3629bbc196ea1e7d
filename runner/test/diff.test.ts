// The one diff module: what the analyzer writes, the editor previews (whole text) and applies (LSP edits)
// from the same hunk search, so a patch that previews also applies, and neither lands on other text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { applyUnifiedDiff, diffTextEdits, PatchError, unifiedDiff } from '../src/diff';

const reward = readFileSync(path.join(__dirname, '..', '..', 'extension', 'test', 'fixtures', 'lava.reward.ts'), 'utf8');

/** Applies LSP edits the way an editor does (offsets in the original text, last edit first). */
function applyTextEdits(text: string, edits: NonNullable<ReturnType<typeof diffTextEdits>>): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) => starts[p.line]! + p.character;
  for (const e of [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start)))
    text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  return text;
}

const patchedReward = reward.replace(
  '  if (ore !== undefined) dense = 1;\n',
  "  if (ore !== undefined) dense = 1;\n  const lava = current_nearest_blocks['lava'];\n  if (lava !== undefined && lava[0] < 3) dense = -1;\n",
);

test('a written diff applies as text and as editor edits to the same result', () => {
  const diff = unifiedDiff(reward, patchedReward, 'lava.reward.ts').text;
  assert.equal(applyUnifiedDiff(reward, diff), patchedReward);
  assert.equal(applyTextEdits(reward, diffTextEdits(reward, diff)!), patchedReward);
});

test('preview and apply agree when the file differs only in trailing whitespace: both refuse', () => {
  const diff = unifiedDiff(reward, patchedReward, 'lava.reward.ts').text;
  // The user's file has a trailing space on a context line of the hunk; the patch was written for other text.
  const edited = reward.replace('  if (ore !== undefined) dense = 1;', '  if (ore !== undefined) dense = 1; ');
  assert.throws(() => applyUnifiedDiff(edited, diff), PatchError);
  assert.equal(diffTextEdits(edited, diff), undefined);
});

test('hunks are found after the file moved, and line endings are kept', () => {
  const diff = unifiedDiff(reward, patchedReward, 'lava.reward.ts').text;
  const moved = `// two new lines\n// above the code\n${reward}`;
  assert.equal(applyUnifiedDiff(moved, diff), `// two new lines\n// above the code\n${patchedReward}`);
  assert.equal(applyTextEdits(moved, diffTextEdits(moved, diff)!), `// two new lines\n// above the code\n${patchedReward}`);
  const crlf = reward.replace(/\n/g, '\r\n');
  assert.equal(applyUnifiedDiff(crlf, diff), patchedReward.replace(/\n/g, '\r\n'));
});

test('a change on the last line of a file without a final newline', () => {
  const before = 'a\nb\nc';
  const after = 'a\nb\nd';
  const diff = unifiedDiff(before, after, 'x.ts').text;
  assert.equal(applyUnifiedDiff(before, diff), after);
  assert.equal(applyTextEdits(before, diffTextEdits(before, diff)!), after);
});

test('not a diff, or a hunk edited away: a PatchError naming the hunk', () => {
  assert.throws(() => applyUnifiedDiff('x', 'not a diff'), PatchError);
  const diff = unifiedDiff(reward, patchedReward, 'lava.reward.ts').text;
  assert.throws(
    () => applyUnifiedDiff(reward.replace('if (ore !== undefined) dense = 1;', 'if (ore) dense = 1;'), diff),
    /hunk 1 of the patch \(at line \d+\) no longer matches/,
  );
});
