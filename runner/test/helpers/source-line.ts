// Where a test expects a located error: the line of a fixture that holds a marker, so that editing the fixture
// does not silently shift what the test checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** 1-based line of the first line of `file` containing `marker`. */
export function lineOf(file: string, marker: string): number {
  const i = readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(marker));
  assert.ok(i >= 0, `${marker} not in ${file}`);
  return i + 1;
}
