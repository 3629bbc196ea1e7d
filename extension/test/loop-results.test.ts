// The dashboard's loop view reads the loop's own table from the experiment folder: a plain, bounded file only.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { readLoopTable } from '../src/loop-results';

const root = path.join(tmpdir(), `loop-view-${process.pid}`);
after(() => rmSync(root, { recursive: true, force: true }));

test("the loop view shows the loop's results.txt, and nothing for a link, a folder or an oversized file", () => {
  const loop = path.join(root, 'loop');
  mkdirSync(loop, { recursive: true });
  assert.equal(readLoopTable(loop), undefined, 'a loop that has not finished has no table');
  const table = 'iteration  candidate  …  decision\n2          1          …  not better: difference +15.0 pts [−0.2, +29.4] (90 % CI)\n';
  writeFileSync(path.join(loop, 'results.txt'), table);
  assert.equal(readLoopTable(loop), table);

  const linked = path.join(root, 'linked');
  mkdirSync(linked);
  writeFileSync(path.join(root, 'secret.txt'), 'not a loop table');
  symlinkSync(path.join(root, 'secret.txt'), path.join(linked, 'results.txt'));
  assert.equal(readLoopTable(linked), undefined, 'a results.txt that links elsewhere is not read');

  const folder = path.join(root, 'folder');
  mkdirSync(path.join(folder, 'results.txt'), { recursive: true });
  assert.equal(readLoopTable(folder), undefined);

  const huge = path.join(root, 'huge');
  mkdirSync(huge);
  writeFileSync(path.join(huge, 'results.txt'), 'x'.repeat((1 << 20) + 1));
  assert.equal(readLoopTable(huge), undefined);
});
