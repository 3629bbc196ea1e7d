// Files written into folders that may be someone else's (a run folder a colleague sent, a sweep on a shared
// disk): no write goes through a symbolic link placed there. The commands are run as a user runs them, on a
// folder prepared with links that lead out of it; the link targets must be untouched and the command must say
// which link it refused.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs, {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { appendNoFollow, isInsideFolder, makeFolder, makeFolderBelow, readRecordBytes, RunRecordError, writeAtomic } from '../src/files';
import { newNetwork } from '../src/ppo/learner';
import { Rng, savePolicy } from '../src/ppo/policy';
import { RUN_FILES } from '../src/records';
import { JOB_FILES, LocalEngine } from '../src/sweep/engine';
import { cliAll, cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
// `rewardsmith ARGS…` through the real dispatcher, this file's command lines in one process (helpers/cli-all.ts).
const session = cliSession(ROOT, 120_000);
after(() => session.close());
const cli = async (...args: string[]) => {
  const r = await session.run(args);
  return { status: r.code, stdout: r.out, stderr: r.err };
};

/** A folder with a file outside the run to be protected. */
function victim(dir: string): string {
  const file = path.join(dir, 'victim.txt');
  writeFileSync(file, 'precious\n');
  return file;
}

test('analyze refuses to write suggestions.json through a link that leads out of the run folder', async () => {
  const dir = tempDir('rewardsmith-files-');
  const run = path.join(dir, 'run');
  cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), run, { recursive: true });
  const target = victim(dir);
  symlinkSync(target, path.join(run, RUN_FILES.suggestions));
  const r = await cli('analyze', run);
  assert.equal(r.status, 1, r.stdout);
  assert.match(
    r.stderr,
    /^rewardsmith analyze: .*suggestions\.json is a symbolic link \(to .*victim\.txt\); refusing to write through it, nothing was written/m,
  );
  assert.equal(readFileSync(target, 'utf8'), 'precious\n');
});

test("rollout refuses an eval/ folder that is a link out of the run folder, writing nothing into the link's target", async () => {
  const dir = tempDir('rewardsmith-files-');
  const out = path.join(dir, 'run');
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(out);
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, path.join(out, 'eval'));
  const r = await cli('rollout', '--task', 'approach-tree', '--policy', 'random', '--steps', '20', '--envs', '2', '--out', out);
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /eval is a symbolic link \(to .*elsewhere\); refusing to write through it/);
  assert.deepEqual(readdirSync(elsewhere), []);
});

test("writeAtomic, appendNoFollow and makeFolder: links refused, a killed write's leftover replaced, permissions kept", () => {
  const dir = tempDir('rewardsmith-files-');
  const target = victim(dir);
  const link = path.join(dir, 'out.json');
  symlinkSync(target, link);
  assert.throws(() => writeAtomic(dir, link, '{}'), { name: 'UnsafePathError', message: /out\.json is a symbolic link/ });
  assert.throws(() => appendNoFollow(link, 'x'), { name: 'UnsafePathError' });
  assert.throws(() => makeFolder(link), { name: 'UnsafePathError' });
  // A dangling link where the temporary file goes: O_EXCL refuses it rather than creating its target.
  const file = path.join(dir, 'state.json');
  const nowhere = path.join(dir, 'created-through-link');
  symlinkSync(nowhere, `${file}.tmp`);
  assert.throws(() => writeAtomic(dir, file, '{}'), { name: 'UnsafePathError', message: /state\.json\.tmp is a symbolic link/ });
  assert.ok(!existsSync(nowhere));
  assert.equal(readFileSync(target, 'utf8'), 'precious\n');
  // A plain leftover is a write that was killed: replaced.
  const other = path.join(dir, 'results.json');
  writeFileSync(`${other}.tmp`, 'half');
  writeAtomic(dir, other, 'whole');
  assert.equal(readFileSync(other, 'utf8'), 'whole');
  assert.ok(!existsSync(`${other}.tmp`));
  // An existing file keeps its permissions across the replace.
  const script = path.join(dir, 'job.sh');
  writeAtomic(dir, script, '#!/bin/sh\n', { mode: 0o755 });
  writeAtomic(dir, script, '#!/bin/sh\ntrue\n');
  assert.equal(lstatSync(script).mode & 0o777, 0o755);
});

test('writeAtomic refuses a folder on the way to the file that is a link out of the root, naming the file and the link; nothing written outside', () => {
  const dir = tempDir('rewardsmith-files-');
  const run = path.join(dir, 'run');
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(run);
  mkdirSync(elsewhere);
  // A shared run folder whose checkpoint/ leads out of it: neither a file in it nor one in a folder made below it is written.
  symlinkSync(elsewhere, path.join(run, 'checkpoint'));
  for (const file of [path.join(run, 'checkpoint', 'state.json'), path.join(run, 'checkpoint', 'new', 'weights.bin')])
    assert.throws(() => writeAtomic(run, file, '{}'), {
      name: 'UnsafePathError',
      message: new RegExp(
        `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*checkpoint is a symbolic link \\(to .*elsewhere\\); refusing to write through it`,
      ),
    });
  // A link deeper down, below folders that are real: refused at its own level.
  mkdirSync(path.join(run, 'eval'));
  symlinkSync(elsewhere, path.join(run, 'eval', 'episodes'));
  assert.throws(() => writeAtomic(run, path.join(run, 'eval', 'episodes', 'e.ndjson'), ''), {
    name: 'UnsafePathError',
    message: /eval\/episodes is a symbolic link/,
  });
  // A file named outside the root at all.
  assert.throws(() => writeAtomic(run, path.join(dir, 'out.json'), '{}'), { name: 'UnsafePathError', message: /out\.json: not inside .*run/ });
  assert.deepEqual(readdirSync(elsewhere), []);
  assert.ok(!existsSync(path.join(dir, 'out.json')));
  // The root itself may be a link the user made (a scratch disk): followed, and missing folders below it made.
  const scratch = path.join(dir, 'scratch');
  symlinkSync(elsewhere, scratch);
  writeAtomic(scratch, path.join(scratch, 'a', 'b.json'), '{}');
  assert.equal(readFileSync(path.join(elsewhere, 'a', 'b.json'), 'utf8'), '{}');
});

test('writeAtomic never writes through a link planted at its temporary name, dangling or not', () => {
  const dir = tempDir('rewardsmith-files-');
  const run = path.join(dir, 'run');
  mkdirSync(path.join(run, 'eval'), { recursive: true });
  const target = victim(dir);
  const nowhere = path.join(dir, 'created-through-link');
  const file = path.join(run, 'eval', 'summary.json');
  for (const [suffix, to] of [
    ['.tmp', target],
    [`.${process.pid}.tmp`, nowhere],
  ] as const) {
    symlinkSync(to, file + suffix);
    assert.throws(() => writeAtomic(run, file, '{"forged":1}', { tmpSuffix: suffix }), {
      name: 'UnsafePathError',
      message: new RegExp(`summary\\.json${suffix.replace(/\./g, '\\.')} is a symbolic link`),
    });
  }
  assert.equal(readFileSync(target, 'utf8'), 'precious\n');
  assert.ok(!existsSync(nowhere));
  assert.ok(!existsSync(file));
});

test("sweep refuses a rewards/ or runs/ folder that links out of the sweep folder, and a reward copy there that links out; the link's target is untouched", async () => {
  const dir = tempDir('rewardsmith-files-');
  const dense = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
  const sweep = (out: string) =>
    cli(
      'sweep',
      '--task',
      'approach-tree',
      '--rewards',
      dense,
      '--seeds',
      '1',
      '--steps',
      '16',
      '--envs',
      '2',
      '--eval-episodes',
      '1',
      '--workers',
      '0',
      '--out',
      out,
    );
  const linkedFolder = path.join(dir, 'sweep-a');
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(linkedFolder);
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, path.join(linkedFolder, 'rewards'));
  const a = await sweep(linkedFolder);
  assert.equal(a.status, 1, a.stdout);
  assert.match(a.stderr, /^rewardsmith sweep: .*sweep-a\/rewards is a symbolic link \(to .*elsewhere\); refusing to write through it, nothing was written/m);
  assert.deepEqual(readdirSync(elsewhere), []);
  // A copy already in place (the same text, so only where it lies is wrong) is the text the runs would train.
  const linkedCopy = path.join(dir, 'sweep-b');
  mkdirSync(path.join(linkedCopy, 'rewards'), { recursive: true });
  const outside = path.join(dir, 'outside.reward.ts');
  cpSync(dense, outside);
  symlinkSync(outside, path.join(linkedCopy, 'rewards', 'approach-tree.dense.reward.ts'));
  const b = await sweep(linkedCopy);
  assert.equal(b.status, 1, b.stdout);
  assert.match(
    b.stderr,
    /^rewardsmith sweep: .*sweep-b\/rewards\/approach-tree\.dense\.reward\.ts: a symbolic link to .*outside\.reward\.ts, outside .*sweep-b; not read$/m,
  );
  assert.ok(!existsSync(path.join(linkedCopy, 'runs')), 'nothing was trained');
  // A runs/ folder that links out would take every run's folder (its checkpoint, its records) with it.
  const linkedRuns = path.join(dir, 'sweep-c');
  const runsElsewhere = path.join(dir, 'runs-elsewhere');
  mkdirSync(linkedRuns);
  mkdirSync(runsElsewhere);
  symlinkSync(runsElsewhere, path.join(linkedRuns, 'runs'));
  const c = await sweep(linkedRuns);
  assert.equal(c.status, 1, c.stdout);
  assert.match(c.stderr, /^rewardsmith sweep: .*sweep-c\/runs is a symbolic link \(to .*runs-elsewhere\); refusing to write through it, nothing was written/m);
  assert.deepEqual(readdirSync(runsElsewhere), []);
});

test("a policy is not saved into a checkpoint folder that is a link (pretrain's out/checkpoint): refused, the link's target untouched", () => {
  const dir = tempDir('rewardsmith-files-');
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(elsewhere);
  const checkpoint = path.join(dir, 'foundation', RUN_FILES.checkpoint);
  mkdirSync(path.dirname(checkpoint));
  symlinkSync(elsewhere, checkpoint);
  const net = newNetwork('js', { featureSize: 4, numActions: 3, hidden: [4] }, new Rng(1));
  assert.throws(() => savePolicy(net, checkpoint, 'approach-tree'), { name: 'UnsafePathError', message: /checkpoint is a symbolic link/ });
  assert.deepEqual(readdirSync(elsewhere), []);
});

test('isInsideFolder: a name that starts with two dots is inside the folder; its parent, a sibling that shares its prefix and its own parent are not', () => {
  const run = path.resolve('/data/run');
  assert.ok(isInsideFolder(run, path.join(run, '..x')));
  assert.ok(isInsideFolder(run, path.join(run, 'checkpoint', '..notes.json')));
  assert.ok(isInsideFolder(run, run));
  assert.ok(!isInsideFolder(run, path.join(run, '..', 'x')));
  assert.ok(!isInsideFolder(run, path.resolve('/data/run2/summary.json')));
  assert.ok(!isInsideFolder(run, path.dirname(run)));
});

test("makeFolderBelow (a table's cells, a sweep's runs): a link at any level below the folder named is refused; the named folder may itself be a link", () => {
  const dir = tempDir('rewardsmith-files-');
  const elsewhere = path.join(dir, 'elsewhere');
  mkdirSync(elsewhere);
  const table = path.join(dir, 'table');
  mkdirSync(path.join(table, 'approach-tree'), { recursive: true });
  symlinkSync(elsewhere, path.join(table, 'approach-tree', 'seed-0'));
  assert.throws(() => makeFolderBelow(table, path.join(table, 'approach-tree', 'seed-0', 'dense')), {
    name: 'UnsafePathError',
    message: /approach-tree\/seed-0 is a symbolic link/,
  });
  assert.deepEqual(readdirSync(elsewhere), []);
  assert.throws(() => makeFolderBelow(table, path.join(dir, 'other')), { name: 'UnsafePathError', message: /is not inside/ });
  makeFolderBelow(table, path.join(table, 'approach-tree', 'seed-1', 'dense'));
  assert.ok(lstatSync(path.join(table, 'approach-tree', 'seed-1', 'dense')).isDirectory());
  // The user's own choice of folder is followed.
  const named = path.join(dir, 'named');
  symlinkSync(elsewhere, named);
  makeFolderBelow(named, path.join(named, 'runs'));
  assert.deepEqual(readdirSync(elsewhere), ['runs']);
});

/**
 * Runs `read` while another process (played here by `swap`) changes the folder once, right after the first call
 * of fs's `name` returns: the moment between a check and an open where a swapped link does harm.
 */
function swappedAfter<T>(name: 'openSync' | 'realpathSync', swap: () => void, read: () => T): T {
  const original = fs[name] as (...args: unknown[]) => unknown;
  let swapped = false;
  (fs as Record<string, unknown>)[name] = (...args: unknown[]) => {
    const result = original(...args);
    if (!swapped) {
      swapped = true;
      swap();
    }
    return result;
  };
  try {
    return read();
  } finally {
    (fs as Record<string, unknown>)[name] = original;
  }
}

test('readRecordBytes reads the file it opened: a folder swapped for a link out after its path was looked at is not followed, and a link out swapped back in after the open is refused', () => {
  const dir = tempDir('rewardsmith-files-');
  const run = path.join(dir, 'run');
  const outside = path.join(dir, 'outside');
  mkdirSync(path.join(run, RUN_FILES.checkpoint), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(run, RUN_FILES.checkpoint, 'state.json'), '{"inside":true}');
  writeFileSync(path.join(outside, 'state.json'), '{"secret":true}');
  const file = path.join(run, RUN_FILES.checkpoint, 'state.json');
  // checkpoint/ moved aside (still in the run) and a link to the outside folder put in its place.
  const linkCheckpointOut = () => {
    renameSync(path.join(run, RUN_FILES.checkpoint), path.join(run, 'checkpoint-moved'));
    symlinkSync(outside, path.join(run, RUN_FILES.checkpoint));
  };
  let read: string | Error;
  try {
    read = swappedAfter('realpathSync', linkCheckpointOut, () => readRecordBytes(file, run)).toString('utf8');
  } catch (err) {
    read = err as Error;
  }
  assert.ok(read === '{"inside":true}' || (read instanceof RunRecordError && /outside/.test(read.message)), `read ${String(read)}`);

  // The other way round: the link leads out when the file is opened, and back in when it is looked at after.
  const linked = path.join(dir, 'linked');
  mkdirSync(linked);
  writeFileSync(path.join(linked, 'own.json'), '{"inside":true}');
  const summary = path.join(linked, RUN_FILES.summary);
  symlinkSync(path.join(outside, 'state.json'), summary);
  const linkBackIn = () => {
    unlinkSync(summary);
    symlinkSync('own.json', summary);
  };
  assert.throws(() => swappedAfter('openSync', linkBackIn, () => readRecordBytes(summary)), {
    name: 'RunRecordError',
    message: `${summary}: a symbolic link to ${realpathSync(path.join(outside, 'state.json'))}, outside ${linked}; not read`,
  });
});

test('a record that is a FIFO is refused at once, naming it, rather than waited on; one larger than its bound is refused unread', async () => {
  const dir = tempDir('rewardsmith-files-');
  const run = path.join(dir, 'run');
  cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), run, { recursive: true });
  rmSync(path.join(run, RUN_FILES.episodes));
  assert.equal(spawnSync('mkfifo', [path.join(run, RUN_FILES.episodes)]).status, 0);
  // Opened as a record is read, a FIFO waits for a writer that never comes: the bound ends that wait.
  const [r] = await cliAll(dir, [{ args: ['analyze', 'run'] }], 60_000);
  assert.deepEqual(r, { code: 1, out: '', err: `rewardsmith analyze: ${path.join('run', RUN_FILES.episodes)}: not a plain file (a FIFO); not read\n` });
  const big = path.join(run, 'results.txt');
  writeFileSync(big, 'x'.repeat(2048));
  assert.throws(() => readRecordBytes(big, run, 1024), {
    name: 'RunRecordError',
    message: `${big}: 2,048 bytes, more than the 1 KiB this file may hold; not read`,
  });
});

test("a job's folder (a sweep's or table's run): a job-exit.json.tmp placed there as a link out is not written through; the exit is recorded in the folder", async () => {
  const dir = tempDir('rewardsmith-files-');
  const runDir = path.join(dir, 'run');
  mkdirSync(runDir);
  const target = victim(dir);
  symlinkSync(target, path.join(runDir, `${JOB_FILES.exit}.tmp`));
  const result = await new LocalEngine({ parallel: 1, pollMs: 50 }).run({ name: 'help', runDir, start: ['lint', '--help'] });
  assert.equal(readFileSync(target, 'utf8'), 'precious\n');
  assert.ok(lstatSync(path.join(runDir, JOB_FILES.exit)).isFile());
  assert.equal(result.exit?.exit_code, 0);
});
