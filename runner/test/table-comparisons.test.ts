// `rewardsmith table`'s comparisons on synthetic cells with known counts: dense − sparse, dense − foundation and
// sparse − foundation with their intervals by the decision rule, over all seeds and per seed, and a fine-tuned
// result below its own foundation named as such (the approach-cow case: 22 of 100 → 11 of 100). And `--readme`:
// the table's plot is copied beside the README only as read by the checked reader.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { rateOverSeeds, wilson } from '../src/stats';
import { METHODS, tableComparisons, tableMarkdown, updateReadme, type CellResult, type TableResult } from '../src/table/table';
import { tempDir } from './helpers/tmp';

const cell = (task: string, seed: number, method: CellResult['method'], successes: number, episodes = 100): CellResult => ({
  task,
  seed,
  method,
  successes,
  episodes,
  rate: wilson(successes, episodes),
  wallSeconds: 1,
  reused: false,
});

function table(cells: CellResult[]): TableResult {
  const tasks = [...new Set(cells.map((c) => c.task))];
  const rows = tasks.flatMap((task) =>
    METHODS.map((method) => {
      const mine = cells.filter((c) => c.task === task && c.method === method);
      return { task, method, estimate: rateOverSeeds(mine.map((c) => ({ count: c.successes, n: c.episodes }))), paper: null, cells: mine };
    }),
  );
  return {
    rows,
    cells,
    comparisons: tableComparisons(cells),
    config: { steps: 1000, demos: 4, evalEpisodes: 100, envs: 8, tasks, seeds: [...new Set(cells.map((c) => c.seed))] },
    machine: 'test',
    wallSeconds: 1,
    cellSeconds: 1,
    files: { markdown: '', csv: '', svg: '', json: '' },
  };
}

test('table: each comparison with its difference and interval; a fine-tuning below its foundation is named', () => {
  const cells = [
    cell('approach-cow', 7, 'foundation', 22),
    cell('approach-cow', 7, 'sparse', 20),
    cell('approach-cow', 7, 'dense', 11),
    cell('approach-tree', 7, 'foundation', 30),
    cell('approach-tree', 7, 'sparse', 40),
    cell('approach-tree', 7, 'dense', 62),
    cell('approach-tree', 8, 'foundation', 31),
    cell('approach-tree', 8, 'sparse', 64),
    cell('approach-tree', 8, 'dense', 66),
  ];
  const r = table(cells);
  const get = (task: string, seed: number | 'all', a: string, b: string) =>
    r.comparisons.find((c) => c.task === task && c.seed === seed && c.a === a && c.b === b)!;
  assert.equal(get('approach-cow', 7, 'dense', 'foundation').comparison.verdict, 'worse');
  assert.equal(get('approach-cow', 7, 'sparse', 'foundation').comparison.verdict, 'no difference');
  assert.equal(get('approach-tree', 7, 'dense', 'sparse').comparison.verdict, 'better');
  assert.equal(get('approach-tree', 8, 'dense', 'sparse').comparison.verdict, 'no difference', 'seed 8: sparse alone is as good');
  assert.equal(get('approach-tree', 'all', 'dense', 'foundation').comparison.verdict, 'better');
  const md = tableMarkdown(r);
  assert.match(md, /^\| task \| seed \| dense − sparse \| dense − foundation \| sparse − foundation \|$/m);
  assert.ok(!r.comparisons.some((c) => c.task === 'approach-cow' && c.seed === 'all'), 'one seed: its own row only');
  assert.match(
    md,
    /^\| approach-cow \| 7 \| −9\.0 pts \[−17\.4, −0\.5\]: worse \| −11\.0 pts \[−19\.6, −2\.3\]: below the foundation \| −2\.0 pts .*: no difference shown \|$/m,
  );
  assert.match(md, /^\| approach-tree \| 7 \| \+22\.0 pts \[\+[\d.]+, \+[\d.]+\]: better \|/m);
  assert.match(
    md,
    /^\| approach-tree \| all \| \+12\.0 pts \[[−+][\d.]+, \+[\d.]+\]: (better|no difference shown) \| \+33\.5 pts \[\+[\d.]+, \+[\d.]+\]: better \|/m,
  );
  assert.match(md, /90 % interval: "better" \(or "worse", "below the foundation"\) is a one-sided test at 5 %/);
  assert.match(md, /approach-cow foundation \+ dense seed 7: 11\/100 \(below its foundation's 22\/100\)/);
  assert.doesNotMatch(md, /foundation \+ sparse seed 7: 20\/100 \(below/);
  assert.doesNotMatch(md, /training episodes end/, 'no fine-tuning here trained on shortened episodes');
  const diamond = table([
    cell('explore-diamond', 7, 'foundation', 8),
    { ...cell('explore-diamond', 7, 'sparse', 9), trainEpisodeSteps: 2000 },
    { ...cell('explore-diamond', 7, 'dense', 9), trainEpisodeSteps: 2000 },
  ]);
  assert.match(tableMarkdown(diamond), /training episodes end at 2,000 steps on explore-diamond \(held-out episodes run to its 60,000\)/);
  // One seed's figure in the main table is its Wilson interval.
  assert.match(md, /\| approach-cow \| 22\.0 \[15\.0, 31\.1\] \| 20\.0 \[[\d.]+, [\d.]+\] \| 11\.0 \[6\.3, 18\.6\] \|/);
});

test('table --readme: the plot is copied beside the README; one that links out of the table folder, a FIFO or an oversized one is refused by name', () => {
  const root = tempDir('rs-table-readme-');
  const out = path.join(root, 'table');
  mkdirSync(out);
  const readme = path.join(root, 'README.md');
  const block = 'intro\n<!-- rewardsmith table: start -->\n<!-- rewardsmith table: end -->\n';
  writeFileSync(readme, block);
  const r = table([cell('approach-tree', 7, 'foundation', 30), cell('approach-tree', 7, 'sparse', 40), cell('approach-tree', 7, 'dense', 62)]);
  r.files.svg = path.join(out, 'table.svg');
  const copy = path.join(root, 'docs', 'table.svg');

  writeFileSync(r.files.svg, '<svg xmlns="http://www.w3.org/2000/svg"/>');
  updateReadme(readme, r, 'rewardsmith table');
  assert.equal(readFileSync(copy, 'utf8'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  assert.match(readFileSync(readme, 'utf8'), /Generated by `rewardsmith table`/);

  const refused = (why: RegExp) => {
    writeFileSync(readme, block);
    writeFileSync(copy, 'before');
    assert.throws(
      () => updateReadme(readme, r, 'rewardsmith table'),
      (err: Error) => err.name === 'RunRecordError' && err.message.startsWith(`${r.files.svg}: `) && why.test(err.message),
    );
    assert.equal(readFileSync(copy, 'utf8'), 'before', 'the copy is left as it was');
    assert.equal(readFileSync(readme, 'utf8'), block, 'the README is left as it was');
  };
  const secret = path.join(root, 'secret.txt');
  writeFileSync(secret, 'not for the README');
  writeFileSync(r.files.svg, '');
  const svg = r.files.svg;
  r.files.svg = path.join(out, 'linked.svg');
  symlinkSync(secret, r.files.svg);
  refused(/a symbolic link to .*secret\.txt, outside/);
  r.files.svg = path.join(out, 'fifo.svg');
  assert.equal(spawnSync('mkfifo', [r.files.svg]).status, 0);
  refused(/not a plain file \(a FIFO\)/);
  r.files.svg = svg;
  truncateSync(svg, 64 * 1024 * 1024);
  refused(/more than the 4 MiB this file may hold/);
  assert.ok(existsSync(svg));
});
