// The dashboard's loop view reads the loop's own table from the experiment folder: a plain, bounded file only.
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { readLoopTable } from '../src/loop-results';

const root = path.join(tmpdir(), `loop-view-${process.pid}`);
after(() => rmSync(root, { recursive: true, force: true }));

test("the loop view shows the loop's results.txt; a link out of the folder, a folder or an oversized file is refused, naming it", () => {
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
  assert.throws(() => readLoopTable(linked), {
    name: 'RunRecordError',
    message: `${path.join(linked, 'results.txt')}: a symbolic link to ${path.join(realpathSync(root), 'secret.txt')}, outside ${linked}; not read`,
  });

  const folder = path.join(root, 'folder');
  mkdirSync(path.join(folder, 'results.txt'), { recursive: true });
  assert.throws(() => readLoopTable(folder), { name: 'RunRecordError', message: `${path.join(folder, 'results.txt')}: a folder, not a file` });

  const huge = path.join(root, 'huge');
  mkdirSync(huge);
  writeFileSync(path.join(huge, 'results.txt'), 'x'.repeat((1 << 20) + 1));
  assert.throws(() => readLoopTable(huge), {
    name: 'RunRecordError',
    message: `${path.join(huge, 'results.txt')}: 1,048,577 bytes, more than the 1 MiB this file may hold; not read`,
  });
});
