// A run folder's records checked against its checkpoint before a resume trusts them, each problem naming the
// file that is wrong; and a run whose training never wrote a checkpoint starts again without --overwrite.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { RunnerEvent } from '../src/events';
import { readSummary, readSweepResults, RUN_FILES, sha256Hex, SWEEP_FILES } from '../src/records';
import { loadPolicy, train, type TrainOptions } from '../src/runs/train';
import { cliAll, cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const REWARD = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
// Two envs × 8 steps per update, four updates, a checkpoint after each: a run of a few seconds.
const TINY: Omit<TrainOptions, 'out'> = {
  rewardFile: REWARD,
  task: 'approach-tree',
  envs: 2,
  rolloutSteps: 8,
  steps: 64,
  checkpointEvery: 1,
  evalEpisodes: 0,
  workers: 0,
  backend: 'cpu',
};

const tmp = tempDir('rewardsmith-records-');
let trained: string | null = null;
/** One finished tiny run, copied for each test so that each damages its own copy. */
async function runCopy(name: string): Promise<string> {
  if (!trained) {
    trained = path.join(tmp, 'trained');
    await train({ ...TINY, out: trained });
  }
  const dir = path.join(tmp, name);
  cpSync(trained, dir, { recursive: true });
  return dir;
}

test('resume refuses a metrics.ndjson shorter than the checkpoint expects, naming it', { timeout: 120_000 }, async () => {
  const dir = await runCopy('short-metrics');
  const file = path.join(dir, RUN_FILES.metrics);
  writeFileSync(file, readFileSync(file, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
  await assert.rejects(train({ out: dir, resume: true, backend: 'cpu' }), (err: Error) => {
    assert.match(err.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: 2 line\\(s\\), but the checkpoint has counted 4 update\\(s\\)`));
    return true;
  });
});

test('resume refuses a truncated state.json, an empty optimizer.bin and an optimizer.json that is no layout, naming each file', {
  timeout: 120_000,
}, async () => {
  const a = await runCopy('truncated-state');
  const state = path.join(a, RUN_FILES.checkpoint, 'state.json');
  writeFileSync(state, readFileSync(state, 'utf8').slice(0, 40));
  await assert.rejects(train({ out: a, resume: true, backend: 'cpu' }), new RegExp(`${state.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: truncated or not JSON`));
  const b = await runCopy('empty-optimizer');
  const bin = path.join(b, RUN_FILES.checkpoint, 'optimizer.bin');
  writeFileSync(bin, '');
  await assert.rejects(
    train({ out: b, resume: true, backend: 'cpu' }),
    new RegExp(`${bin.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: 0 bytes, but optimizer.json describes \\d+`),
  );
  const c = await runCopy('optimizer-layout');
  const layout = path.join(c, RUN_FILES.checkpoint, 'optimizer.json');
  writeFileSync(layout, '{"shape": [2, 3]}\n');
  await assert.rejects(train({ out: c, resume: true, backend: 'cpu' }), {
    message: `${layout}: not a list of optimizer variables, each with its shape; the checkpoint is damaged — start the run again with --overwrite (or copy a good checkpoint over it)`,
  });
});

test('a run folder whose training never wrote a checkpoint starts again without --overwrite; --resume says why it cannot', { timeout: 120_000 }, async () => {
  const dir = path.join(tmp, 'no-checkpoint');
  mkdirSync(dir, { recursive: true });
  // What a run that failed before its first checkpoint leaves: its reward copy and a (here empty) metrics file.
  writeFileSync(path.join(dir, RUN_FILES.metrics), '');
  cpSync(REWARD, path.join(dir, RUN_FILES.rewardCopy));
  await assert.rejects(
    train({ out: dir, resume: true, backend: 'cpu' }),
    /has no checkpoint to resume from \(its training stopped before writing one\): start it again with the same command without --resume/,
  );
  const events: RunnerEvent[] = [];
  const summary = await train({ ...TINY, out: dir, emit: (e) => events.push(e) });
  assert.equal(summary.env_steps, 64);
  assert.ok(
    events.some((e) => e.type === 'log' && /stopped before its first checkpoint, so there is nothing to resume or lose; starting it again/.test(e.message)),
  );
  // The effective configuration is stored with the run, and metrics.csv sits beside metrics.ndjson.
  const config = JSON.parse(readFileSync(path.join(dir, RUN_FILES.config), 'utf8'));
  assert.equal(config.evalEpisodes, 0);
  assert.equal(config.envs, 2);
  assert.equal(config.rolloutSteps, 8);
  assert.equal(readFileSync(path.join(dir, RUN_FILES.metricsCsv), 'utf8').trim().split('\n').length, 1 + 4);
  // A run with a checkpoint is still protected.
  await assert.rejects(train({ ...TINY, out: dir }), /already holds a run; pass --resume to continue it, --overwrite to replace it/);
  rmSync(dir, { recursive: true, force: true });
  assert.ok(!existsSync(dir));
});

test("a sweep's results.json is read through the checked reader: absent before the first run, a damaged entry named", () => {
  const sweep = tempDir('rewardsmith-sweep-records-');
  assert.equal(readSweepResults(sweep), undefined, 'no results yet');
  const file = path.join(sweep, SWEEP_FILES.results);
  const reward = { reward: 'dense', reward_file: 'd.reward.ts', seeds: 1, episodes: 4, mean_success: 0.25, ci95: [0, 0.7], mean_deaths: 0, rank: 1 };
  const results = { version: 1, task: 'approach-tree', steps: 64, seeds: [0], engine: 'local', wall_seconds: 3, runs: [], rewards: [reward] };
  writeFileSync(file, JSON.stringify(results));
  assert.equal(readSweepResults(sweep)?.rewards[0]?.mean_success, 0.25);
  writeFileSync(file, JSON.stringify({ ...results, rewards: [{ ...reward, mean_success: '25 %' }] }));
  assert.throws(() => readSweepResults(sweep), { name: 'RunRecordError', message: `${file}: rewards[0] (dense): mean_success must be a number or null` });
});

test('weights that are not finite numbers are refused, naming the file: resume, --init and a loaded policy', { timeout: 120_000 }, async () => {
  const dir = await runCopy('nan-weights');
  const weights = path.join(dir, RUN_FILES.checkpoint, 'weights.bin');
  // The right size, every byte 0xFF: each float32 is a NaN.
  writeFileSync(weights, Buffer.alloc(statSync(weights).size, 0xff));
  const refused = new RegExp(`${weights.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: value 0 of \\d+ is NaN, not a finite number`);
  await assert.rejects(train({ out: dir, resume: true, backend: 'cpu' }), refused);
  await assert.rejects(train({ ...TINY, out: path.join(tmp, 'from-nan'), init: dir }), refused);
  await assert.rejects(loadPolicy(dir, { backend: 'cpu' }), refused);
});

/** `dir`, its checkpoint given frames left to train: resume gets as far as the policy, the optimizer and the reward (a finished run has nothing to resume). */
function withFramesLeft(dir: string): string {
  const state = path.join(dir, RUN_FILES.checkpoint, 'state.json');
  writeFileSync(state, JSON.stringify({ ...JSON.parse(readFileSync(state, 'utf8')), totalFrames: 128 }));
  return dir;
}

test('a checkpoint file that links out of its folder, or is larger than a record may be, is one located line from train --resume, eval and train --init, and is not read', {
  timeout: 240_000,
}, async () => {
  /** A copy of the tiny run whose `file` (in its checkpoint) now lives outside the run, linked back in. */
  const linkedOut = async (name: string, file: string) => {
    const dir = withFramesLeft(await runCopy(name));
    const inside = file === RUN_FILES.metrics || file === RUN_FILES.config ? path.join(dir, file) : path.join(dir, RUN_FILES.checkpoint, file);
    const outside = path.join(tmp, `outside-${name}-${file}`);
    renameSync(inside, outside);
    symlinkSync(outside, inside);
    return path.relative(tmp, inside);
  };
  // Each file is held to the run folder named on the command line (not only to its own folder).
  const refused = (linked: string) =>
    `${linked}: a symbolic link to outside-${linked.split(path.sep)[0]}-${path.basename(linked)}, outside ${linked.split(path.sep)[0]}; not read`;
  const resumed: string[] = [];
  for (const file of ['state.json', 'optimizer.json', 'optimizer.bin', 'weights.bin', 'policy.json', RUN_FILES.metrics, RUN_FILES.config])
    resumed.push(await linkedOut(`resume-${resumed.length}`, file));
  const evaluated = [await linkedOut('eval-0', 'weights.bin'), await linkedOut('eval-1', 'policy.json')];
  const initial = await linkedOut('init', 'weights.bin');
  // The right kind of file, but 300 MiB (sparse, so the test writes nothing): refused by its size, unread.
  const huge = path.join(await runCopy('huge-weights'), RUN_FILES.checkpoint, 'weights.bin');
  truncateSync(huge, 300 * 1024 * 1024);
  const train = [
    '--task',
    'approach-tree',
    '--steps',
    '16',
    '--envs',
    '2',
    '--rollout-steps',
    '8',
    '--eval-episodes',
    '0',
    '--workers',
    '0',
    '--backend',
    'cpu',
  ];
  const commands = [
    ...resumed.map((linked) => ['train', '--resume', linked.split(path.sep)[0]!, '--backend', 'cpu']),
    ...evaluated.map((linked) => ['eval', linked.split(path.sep)[0]!, '--out', 'eval-out', '--episodes', '1', '--backend', 'cpu']),
    ['train', REWARD, ...train, '--init', initial.split(path.sep)[0]!, '--out', 'init-out'],
    ['eval', 'huge-weights', '--out', 'huge-out', '--episodes', '1', '--backend', 'cpu'],
  ];
  const results = await cliAll(
    tmp,
    commands.map((args) => ({ args })),
  );
  const expected = [
    ...[...resumed, ...evaluated].map(refused),
    refused(initial),
    `huge-weights/checkpoint/weights.bin: 314,572,800 bytes, more than the 256 MiB a record may hold; not read`,
  ];
  const shown = results.map((r, i) => {
    // --init's checkpoint is named absolute (the run records where it started from); the scratch folder may be a link.
    const err = r.err.replaceAll(realpathSync(tmp) + path.sep, '').replaceAll(tmp + path.sep, '');
    assert.doesNotMatch(err, /^\s+at /m, 'no stack trace');
    // Training says what it starts before it loads the checkpoint; the error is the last line, and the only one.
    const errors = err.split('\n').filter((line) => line.startsWith('rewardsmith '));
    return `exit ${r.code}: ${errors.join(' | ')}`;
  });
  assert.deepEqual(
    shown,
    expected.map((e, i) => `exit 1: rewardsmith ${commands[i]![0]}: ${e}`),
  );
  for (const linked of [...resumed, ...evaluated, initial]) assert.ok(lstatSync(path.join(tmp, linked)).isSymbolicLink(), `${linked} left as it was`);
  assert.ok(!existsSync(path.join(tmp, 'eval-out', RUN_FILES.summary)) && !existsSync(path.join(tmp, 'init-out', RUN_FILES.summary)), 'no run was made');
});

/** `text` with the scratch folder's path (as given, and with its links resolved) left out, as a user reads it from there. */
const fromTmp = (text: string) => text.replaceAll(realpathSync(tmp) + path.sep, '').replaceAll(tmp + path.sep, '');

test("a run's reward copy that links out of the run folder is one located line from eval, train --resume, analyze and apply, and is not read", {
  timeout: 240_000,
}, async () => {
  /** `run`'s reward.ts moved out of it (the same text, so only where it lies is wrong), linked back in. */
  const linkCopyOut = (run: string) => {
    const copy = path.join(tmp, run, RUN_FILES.rewardCopy);
    const outside = path.join(tmp, `outside-${run}.reward.ts`);
    renameSync(copy, outside);
    symlinkSync(outside, copy);
    return `${path.join(run, RUN_FILES.rewardCopy)}: a symbolic link to outside-${run}.reward.ts, outside ${run}; not read`;
  };
  await runCopy('copy-eval');
  withFramesLeft(await runCopy('copy-resume'));
  // analyze and apply need held-out episodes: a recorded run with its own copy, analysed while the copy was in place.
  for (const run of ['copy-analyze', 'copy-apply']) cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), path.join(tmp, run), { recursive: true });
  const user = path.join(tmp, 'mine.reward.ts');
  cpSync(path.join(tmp, 'copy-apply', RUN_FILES.rewardCopy), user);
  const session = cliSession(tmp);
  try {
    const analysed = await session.run(['analyze', 'copy-apply']);
    assert.equal(analysed.code, 0, analysed.err);
    const runs = ['copy-eval', 'copy-resume', 'copy-analyze', 'copy-apply'];
    const expected = runs.map(linkCopyOut);
    const commands = [
      ['eval', 'copy-eval', '--out', 'copy-eval-out', '--episodes', '1', '--backend', 'cpu'],
      ['train', '--resume', 'copy-resume', '--backend', 'cpu'],
      ['analyze', 'copy-analyze'],
      ['apply', 'copy-apply', '--suggestion', 'death-lava', '--to', user],
    ];
    const shown: string[] = [];
    for (const args of commands) {
      const r = await session.run(args);
      const err = fromTmp(r.err);
      assert.doesNotMatch(err, /^\s+at /m, 'no stack trace');
      shown.push(
        `exit ${r.code}: ${err
          .split('\n')
          .filter((line) => line.startsWith('rewardsmith '))
          .join(' | ')}`,
      );
    }
    assert.deepEqual(
      shown,
      expected.map((e, i) => `exit 1: rewardsmith ${commands[i]![0]}: ${e}`),
    );
  } finally {
    session.close();
  }
  for (const run of ['copy-eval', 'copy-resume', 'copy-analyze', 'copy-apply'])
    assert.ok(lstatSync(path.join(tmp, run, RUN_FILES.rewardCopy)).isSymbolicLink(), `${run}'s link left as it was`);
  assert.ok(!existsSync(path.join(tmp, 'copy-eval-out', RUN_FILES.summary)), 'no evaluation was made');
  assert.equal(readFileSync(user, 'utf8'), readFileSync(path.join(tmp, 'outside-copy-apply.reward.ts'), 'utf8'), 'nothing was patched');
});

test('a checkpoint folder that is a link out of the run folder is refused by eval and train --resume; eval of a checkpoint folder named itself holds its files to that folder', {
  timeout: 240_000,
}, async () => {
  // A run whose checkpoint/ lives elsewhere, linked back in: every file in it is a plain file.
  const linked = withFramesLeft(await runCopy('linked-checkpoint'));
  const elsewhere = path.join(tmp, 'elsewhere-checkpoint');
  renameSync(path.join(linked, RUN_FILES.checkpoint), elsewhere);
  symlinkSync(elsewhere, path.join(linked, RUN_FILES.checkpoint));
  // A checkpoint folder named directly, whose weights.bin links to a file of its run, outside the folder named.
  const direct = await runCopy('direct');
  const weights = path.join(direct, RUN_FILES.checkpoint, 'weights.bin');
  renameSync(weights, path.join(direct, 'weights.bin'));
  symlinkSync(path.join(direct, 'weights.bin'), weights);
  const folder = path.join('linked-checkpoint', RUN_FILES.checkpoint);
  const through = `in ${folder}, a symbolic link to elsewhere-checkpoint, outside linked-checkpoint; not read`;
  const results = await cliAll(tmp, [
    { args: ['eval', 'linked-checkpoint', '--out', 'linked-eval', '--episodes', '1', '--backend', 'cpu'] },
    { args: ['train', '--resume', 'linked-checkpoint', '--backend', 'cpu'] },
    { args: ['eval', path.join('direct', RUN_FILES.checkpoint), '--out', 'direct-eval', '--episodes', '1', '--backend', 'cpu'] },
    // The user names the linked folder itself: that folder is the one its files must stay in, and they do.
    { args: ['eval', folder, '--out', 'named-eval', '--episodes', '1', '--backend', 'cpu'] },
  ]);
  const shown = results.map(
    (r) =>
      `exit ${r.code}: ${fromTmp(r.err)
        .split('\n')
        .filter((line) => line.startsWith('rewardsmith '))
        .join(' | ')}`,
  );
  assert.deepEqual(shown, [
    `exit 1: rewardsmith eval: ${path.join(folder, 'policy.json')}: ${through}`,
    `exit 1: rewardsmith train: ${path.join(folder, 'state.json')}: ${through}`,
    `exit 1: rewardsmith eval: ${path.join('direct', RUN_FILES.checkpoint, 'weights.bin')}: a symbolic link to ${path.join('direct', 'weights.bin')}, outside ${path.join('direct', RUN_FILES.checkpoint)}; not read`,
    'exit 0: ',
  ]);
  assert.ok(existsSync(path.join(tmp, 'named-eval', RUN_FILES.summary)), 'the checkpoint folder named was evaluated');
  assert.ok(!existsSync(path.join(tmp, 'linked-eval', RUN_FILES.summary)) && !existsSync(path.join(tmp, 'direct-eval', RUN_FILES.summary)));
});

test('a record whose name starts with two dots (..summary.json) lies inside its run folder: analyze reads it through a link beside it', async () => {
  const run = path.join(tmp, 'dots');
  cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), run, { recursive: true });
  renameSync(path.join(run, RUN_FILES.summary), path.join(run, `..${RUN_FILES.summary}`));
  symlinkSync(`..${RUN_FILES.summary}`, path.join(run, RUN_FILES.summary));
  const [r] = await cliAll(tmp, [{ args: ['analyze', 'dots'] }]);
  assert.equal(r!.code, 0, r!.err);
  assert.equal(readSummary(run)?.task, 'explore-diamond');
});

test('a path a record names is not opened on its word: eval and analyze without a reward copy ask for --reward, train --resume asks for --init again, and an edited copy is not resumed', {
  timeout: 300_000,
}, async () => {
  // A reward outside every run folder that a record names: run, it would throw and name itself.
  const planted = path.join(tmp, 'planted.reward.ts');
  writeFileSync(planted, `// task: approach-tree\nexport function reward(): number {\n  throw new Error('planted reward ran');\n}\n`);
  const user = path.join(tmp, 'mine.reward.ts');
  cpSync(REWARD, user);
  // eval: a checkpoint whose run has no copy, and whose state.json names the planted reward.
  const evalRun = await runCopy('no-copy-eval');
  rmSync(path.join(evalRun, RUN_FILES.rewardCopy));
  const state = path.join(evalRun, RUN_FILES.checkpoint, 'state.json');
  writeFileSync(state, JSON.stringify({ ...JSON.parse(readFileSync(state, 'utf8')), rewardFile: planted }));
  // analyze: recorded episodes without a copy, whose summary names the planted reward.
  const analyzeRun = path.join(tmp, 'no-copy-analyze');
  cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), analyzeRun, { recursive: true });
  rmSync(path.join(analyzeRun, RUN_FILES.rewardCopy));
  const summaryFile = path.join(analyzeRun, RUN_FILES.summary);
  writeFileSync(summaryFile, JSON.stringify({ ...JSON.parse(readFileSync(summaryFile, 'utf8')), reward_file: planted }));
  // train --resume: runs started from --init outside their folder; one with its init's weights changed since.
  const init = path.join(await runCopy('init-source'), RUN_FILES.checkpoint);
  for (const name of ['init-resume', 'init-changed']) {
    await train({ ...TINY, out: path.join(tmp, name), init });
    withFramesLeft(path.join(tmp, name));
  }
  // train --resume: a run whose reward copy was edited after it started.
  const edited = withFramesLeft(await runCopy('edited-copy'));
  writeFileSync(path.join(edited, RUN_FILES.rewardCopy), readFileSync(path.join(edited, RUN_FILES.rewardCopy), 'utf8') + '\n// edited\n');
  const session = cliSession(tmp);
  const shown: string[] = [];
  try {
    const commands = [
      ['eval', 'no-copy-eval', '--out', 'no-copy-eval-out', '--episodes', '1', '--backend', 'cpu'],
      ['analyze', 'no-copy-analyze'],
      ['train', '--resume', 'init-resume', '--backend', 'cpu'],
      ['train', '--resume', 'edited-copy', '--backend', 'cpu'],
      // The user names what the records would have: each is used.
      ['eval', 'no-copy-eval', '--reward', user, '--out', 'no-copy-eval-out', '--episodes', '1', '--backend', 'cpu'],
      // eval's folder holds the reward it recorded with, so it is analysed without --reward.
      ['analyze', 'no-copy-eval-out'],
      ['analyze', 'no-copy-analyze', '--reward', user],
      ['train', '--resume', 'init-resume', '--init', init, '--backend', 'cpu'],
    ];
    for (const args of commands) {
      if (args[2] === 'init-resume' && args[3] === '--init') {
        // The init checkpoint changed after init-changed started: named again, it is refused by its weights' hash.
        const weights = path.join(init, 'weights.bin');
        const before = readFileSync(weights);
        const changed = new Float32Array(new Uint8Array(before).buffer);
        changed[0] = changed[0]! + 1;
        writeFileSync(weights, Buffer.from(changed.buffer));
        const r = await session.run(['train', '--resume', 'init-changed', '--init', init, '--backend', 'cpu']);
        shown.push(
          `exit ${r.code}: ${fromTmp(r.err)
            .split('\n')
            .filter((line) => line.startsWith('rewardsmith '))
            .join(' | ')}`,
        );
        writeFileSync(weights, before);
      }
      const r = await session.run(args);
      const err = fromTmp(r.err);
      assert.doesNotMatch(err, /^\s+at /m, 'no stack trace');
      assert.doesNotMatch(r.out + err, /planted/, 'the planted reward was neither run nor read');
      shown.push(
        `exit ${r.code}: ${err
          .split('\n')
          .filter((line) => line.startsWith('rewardsmith '))
          .join(' | ')}`,
      );
    }
  } finally {
    session.close();
  }
  const initShown = fromTmp(init);
  assert.deepEqual(shown, [
    `exit 2: rewardsmith eval: no-copy-eval has no reward copy (reward.ts or reward.py) beside its checkpoint; pass --reward FILE, the reward to record per-step rewards with`,
    `exit 1: rewardsmith analyze: ${path.join('no-copy-analyze', RUN_FILES.summary)}: the run has no reward copy (reward.ts or reward.py); name the reward it trained on: --reward FILE`,
    `exit 2: rewardsmith train: init-resume started from --init ${initShown}, outside the run folder, and a run folder's records do not choose a checkpoint to load; name it again: rewardsmith train --resume init-resume --init ${initShown}`,
    `exit 1: rewardsmith train: ${path.join('edited-copy', RUN_FILES.rewardCopy)}: edited since the run started (its sha256 is not the one ${path.join('edited-copy', RUN_FILES.checkpoint, 'state.json')} records), so resuming would train a reward its first 64 frames did not; start a new run with it instead: rewardsmith train ${path.join('edited-copy', RUN_FILES.rewardCopy)} --task approach-tree --out NEW_DIR`,
    'exit 0: ',
    'exit 0: ',
    'exit 0: ',
    `exit 1: rewardsmith train: --init ${initShown}: its weights changed since the run started (their sha256 is not the one ${path.join('init-changed', RUN_FILES.checkpoint, 'state.json')} records), and a resumed run keeps the policy its KL term is measured against; start a new run from it instead`,
    'exit 0: ',
  ]);
  assert.equal(
    readFileSync(path.join(tmp, 'no-copy-eval-out', RUN_FILES.rewardCopy), 'utf8'),
    readFileSync(user, 'utf8'),
    'eval keeps the reward it recorded with',
  );
  assert.equal(readSummary(path.join(tmp, 'init-resume'))?.train.frames, 128, 'the run named with its --init resumed to the end');
});

test("a reward error in a resumed run points at the run's own copy, not at the reward file its records name, which is not opened; a file named again (train FILE --resume DIR) is pointed at", {
  timeout: 240_000,
}, async () => {
  // A run whose copy throws (its state.json's hash made to match, as a colleague's edited records would), and
  // whose state.json names, as the file the user edits, a FIFO outside the run: opened, it would never answer.
  const throwing = [
    '// task: approach-tree',
    'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {',
    "  throw new Error('copy ran');",
    '}',
    '',
  ].join('\n');
  const forged = (name: string) => {
    const dir = path.join(tmp, name);
    writeFileSync(path.join(dir, RUN_FILES.rewardCopy), throwing);
    const state = path.join(dir, RUN_FILES.checkpoint, 'state.json');
    const recorded = path.join(tmp, `${name}-named.reward.ts`);
    writeFileSync(state, JSON.stringify({ ...JSON.parse(readFileSync(state, 'utf8')), rewardFile: recorded, rewardSha256: sha256Hex(throwing) }));
    return recorded;
  };
  withFramesLeft(await runCopy('forged-resume'));
  assert.equal(spawnSync('mkfifo', [forged('forged-resume')]).status, 0);
  // The same run resumed with the user's file named again (the same text): the error points at that file.
  withFramesLeft(await runCopy('named-resume'));
  writeFileSync(forged('named-resume'), throwing);
  const results = await cliAll(
    tmp,
    [
      { args: ['train', '--resume', 'forged-resume', '--backend', 'cpu'] },
      { args: ['train', 'named-resume-named.reward.ts', '--resume', 'named-resume', '--backend', 'cpu'] },
    ],
    120_000,
  );
  const shown = results.map((r) => {
    assert.doesNotMatch(r.err, /^\s+at /m, 'no stack trace');
    return `exit ${r.code}: ${fromTmp(r.err)
      .split('\n')
      .filter((line) => line.startsWith('rewardsmith '))
      .join(' | ')}`;
  });
  assert.match(
    shown[0]!,
    new RegExp(`^exit 1: rewardsmith train: reward error \\(\\w+\\) at ${path.join('forged-resume', RUN_FILES.rewardCopy)}:3:\\d+: .*copy ran`),
  );
  assert.match(shown[1]!, /^exit 1: rewardsmith train: reward error \(\w+\) at named-resume-named\.reward\.ts:3:\d+: .*copy ran/);
});
