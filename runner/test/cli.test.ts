// The `rewardsmith` command line as a user meets it: one error format (`rewardsmith <command>: <message>`),
// did-you-mean for options and values, exit 2 for usage errors and 1 for failures, --help exiting 0 for every
// command, no stack traces, and unsupported files named as such. Each case is an example that used to go wrong.
// A test's command lines run in one child process through the real dispatcher (helpers/cli-all.ts), in a
// scratch folder, as a user's would: one process start per test instead of one per command line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cliAll, type CliResult } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const dir = tempDir('rewardsmith-cli-');

/** Runs each command line (`rewardsmith ARGS…`) in order, in one process; their results in the same order. */
const cli = (...commands: string[][]): Promise<CliResult[]> =>
  cliAll(
    dir,
    commands.map((args) => ({ args })),
  );

const noStack = (text: string) => assert.doesNotMatch(text, /^\s+at .+[:(].*\d+\)?$/m, `a stack trace reached the user:\n${text}`);

test('an unknown option gets a did-you-mean in the common format, exit 2', async () => {
  const [r] = await cli(['train', '--stepz', '100']);
  assert.equal(r!.code, 2);
  assert.match(r!.err, /^rewardsmith train: unknown option --stepz \(did you mean --steps\?\)\n/);
  noStack(r!.err);
});

test('lsp: a bad --socket value is a usage error, not a stack trace; --help exits 0', async () => {
  const [r, none, help] = await cli(['lsp', '--socket=abc'], ['lsp'], ['lsp', '--help']);
  assert.equal(r!.code, 2);
  assert.match(r!.err, /^rewardsmith lsp: --socket must be an integer, got "abc"/);
  noStack(r!.err);
  assert.equal(none!.code, 2);
  assert.match(none!.err, /^rewardsmith lsp: choose a transport: --stdio/);
  assert.equal(help!.code, 0);
  assert.match(help!.out, /^usage: rewardsmith lsp/);
});

test('lint: a missing file is named once and not counted as linted; a .py file is linted as Python, a .lua file is "not supported yet"', async () => {
  writeFileSync(path.join(dir, 'ok.reward.ts'), 'export function reward_function(): number {\n  return 0;\n}\n');
  writeFileSync(path.join(dir, 'x.py'), 'def reward_function(current_nearest_blocks):\n    return np.sign(1)\n');
  writeFileSync(path.join(dir, 'x.lua'), 'return 0\n');
  const [r, py, crit] = await cli(['lint', 'nope.reward.ts', 'ok.reward.ts'], ['lint', 'x.py'], ['critique', 'x.lua']);
  assert.equal(r!.code, 2);
  assert.equal(r!.err, 'rewardsmith lint: nope.reward.ts: no such file\n');
  assert.match(r!.out, /1 of 2 file\(s\) linted \(1 not linted: nope.reward.ts\)/);
  assert.equal(py!.code, 1);
  assert.match(py!.out, /^x\.py:1:5: error reward-contract: reward_function takes 6 or 8 parameters/m);
  assert.match(py!.out, /^x\.py:2:12: error undefined-name: 'np' is not defined/m);
  noStack(py!.err);
  assert.equal(crit!.code, 2);
  assert.match(crit!.err, /^rewardsmith critique: x.lua: Lua rewards are not supported yet/);
});

test('rollout: a misspelt policy gets a did-you-mean', async () => {
  const [r, env] = await cli(
    ['rollout', '--policy', 'randm', '--task', 'approach-tree', '--out', 'ro'],
    ['rollout', '--env', 'minflayer', '--task', 'approach-tree', '--out', 'ro'],
  );
  assert.equal(r!.code, 2);
  assert.match(r!.err, /^rewardsmith rollout: --policy randm: neither "random" nor a checkpoint folder \(did you mean random\?\)/);
  assert.match(env!.err, /--env must be one of sim, mineflayer, got "minflayer" \(did you mean mineflayer\?\)/);
});

test('every command: --help exits 0 with its usage; an unknown command gets a did-you-mean', async () => {
  const commands = ['train', 'eval', 'rollout', 'lint', 'lsp', 'critique', 'design', 'analyze', 'apply', 'report', 'loop'];
  const results = await cli(...commands.map((command) => [command, '--help']), ['trian']);
  commands.forEach((command, i) => {
    const r = results[i]!;
    assert.equal(r.code, 0, `${command} --help: ${r.err}`);
    assert.match(r.out, new RegExp(`^usage: rewardsmith ${command}\\b`), command);
  });
  const r = results[commands.length]!;
  assert.equal(r.code, 2);
  assert.match(r.err, /^rewardsmith: unknown command "trian" \(did you mean train\?\)/);
});

test('usage errors of the other commands share the format and exit 2', async () => {
  const cases: [string[], RegExp][] = [
    [['analyze'], /^rewardsmith analyze: missing RUN_DIR\n/],
    [['analyze', 'run', '--events', 'json'], /^rewardsmith analyze: --events must be one of ndjson, got "json"/],
    [['eval', 'ckpt'], /^rewardsmith eval: --out DIR is required/],
    [['design', '--tsk', 'x'], /^rewardsmith design: unknown option --tsk \(did you mean --task\?\)/],
    [['loop', '--task', 'approach-tree', '--out', 'o', '--iterations', '0'], /^rewardsmith loop: --iterations must be ≥ 1, got 0/],
    [['lint', '--format', 'jsn', 'a.reward.ts'], /^rewardsmith lint: --format must be one of text, json, got "jsn" \(did you mean json\?\)/],
    [['train', 'r.reward.ts', '--out', 'o'], /^rewardsmith train: --task is required/],
  ];
  const results = await cli(...cases.map(([args]) => args));
  cases.forEach(([args, expected], i) => {
    const r = results[i]!;
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, expected);
    noStack(r.err);
  });
});

test('train --resume: a damaged config.json is a located run-folder error (exit 1), not a usage error, and nothing is written', async () => {
  const cases: [string, RegExp][] = [
    ['{"evalEpisodes": 7', /config\.json: not valid JSON \(.+\); the run's files are untouched\n$/],
    ['[1, 2]', /config\.json: not a run configuration \(not a JSON object\); the run's files are untouched\n$/],
    [
      '{"evalEpisodes": "7"}',
      /config\.json: not a run configuration: lacks or mistypes evalEpisodes \(a number\), hyperparameters \(an object\); the run's files/,
    ],
  ];
  const runs = cases.map(([text]) => {
    const run = mkdtempSync(path.join(dir, 'damaged-run-'));
    writeFileSync(path.join(run, 'config.json'), text);
    return run;
  });
  const results = await cli(...runs.map((run) => ['train', '--resume', run]));
  cases.forEach(([text, expected], i) => {
    const [r, run] = [results[i]!, runs[i]!];
    assert.equal(r.code, 1, `${text}: ${r.err}`);
    assert.ok(r.err.startsWith(`rewardsmith train: ${path.join(run, 'config.json')}: `), r.err);
    assert.match(r.err, expected);
    assert.doesNotMatch(r.err, /--help/, 'not reported as a mistake in the command line');
    noStack(r.err);
    assert.deepEqual(readdirSync(run), ['config.json']);
    assert.equal(readFileSync(path.join(run, 'config.json'), 'utf8'), text);
  });
});

test("a loop's, table's or run's own record that is a folder, not JSON, a link out of its folder or not the record named is one line naming the file; nothing is changed", async () => {
  const reward = path.join(__dirname, '..', 'rewards', 'approach-tree.dense.reward.ts');
  const loop = (out: string) => ['loop', '--task', 'approach-tree', '--no-llm', '--iterations', '1', '--out', out, '--reward', reward];
  const outside = path.join(dir, 'outside.json');
  writeFileSync(outside, '{"task": "approach-tree"}\n');
  mkdirSync(path.join(dir, 'records', 'loop-folder', 'experiment.json'), { recursive: true });
  mkdirSync(path.join(dir, 'records', 'loop-link'), { recursive: true });
  symlinkSync(outside, path.join(dir, 'records', 'loop-link', 'experiment.json'));
  mkdirSync(path.join(dir, 'records', 'loop-iteration', 'iteration-1'), { recursive: true });
  writeFileSync(path.join(dir, 'records', 'loop-iteration', 'iteration-1', 'iteration.json'), '{}\n');
  cpSync(path.join(__dirname, 'fixtures', 'runs', 'spin-in-place'), path.join(dir, 'records', 'run'), { recursive: true });
  rmSync(path.join(dir, 'records', 'run', 'summary.json'));
  mkdirSync(path.join(dir, 'records', 'run', 'summary.json'));
  mkdirSync(path.join(dir, 'records', 'loop-null'), { recursive: true });
  writeFileSync(path.join(dir, 'records', 'loop-null', 'experiment.json'), 'null\n');
  mkdirSync(path.join(dir, 'records', 'sweep'), { recursive: true });
  writeFileSync(path.join(dir, 'records', 'sweep', 'sweep.json'), '{}\n');
  mkdirSync(path.join(dir, 'records', 'table'), { recursive: true });
  writeFileSync(path.join(dir, 'records', 'table', 'table-config.json'), '{"steps": 12');
  const before = listTree(path.join(dir, 'records'));
  const results = await cli(
    loop('records/loop-folder'),
    loop('records/loop-link'),
    loop('records/loop-iteration'),
    ['analyze', 'records/run'],
    ['table', '--tasks', 'approach-tree', '--out', 'records/table'],
    loop('records/loop-null'),
    ['sweep', '--rewards', reward, '--task', 'approach-tree', '--seeds', '1', '--out', 'records/sweep'],
  );
  const expected = [
    /^rewardsmith loop: records\/loop-folder\/experiment\.json: a folder, not a file\n$/,
    /^rewardsmith loop: records\/loop-link\/experiment\.json: a symbolic link to outside\.json, outside records\/loop-link; not read\n$/,
    /^rewardsmith loop: records\/loop-iteration\/iteration-1\/iteration\.json: not an iteration's record \(it has no candidates list\); move it away to run iteration 1 again\n$/,
    /^rewardsmith analyze: records\/run\/summary\.json: a folder, not a file\n$/,
    /^rewardsmith table: records\/table\/table-config\.json: not valid JSON \(.+\)\n$/,
    /^rewardsmith loop: records\/loop-null\/experiment\.json: not a loop's settings \(a JSON object\), got null\n$/,
    /^rewardsmith sweep: records\/sweep\/sweep\.json: a sweep's state lists its rewards and runs, this one does not\n$/,
  ];
  results.forEach((r, i) => {
    assert.equal(r.code, 1, r.err);
    // Paths as the scratch folder's (the loop names them absolute).
    assert.match(r.err.replace(/^resuming the experiment in .*\n/, '').replaceAll(dir + path.sep, ''), expected[i]!);
    noStack(r.err);
  });
  // The loop with only a bad iteration.json (re)writes its experiment.json, its settings, before it reads the iteration.
  const after = listTree(path.join(dir, 'records'));
  delete after[path.join('loop-iteration', 'experiment.json')];
  assert.deepEqual(after, before, 'no record was changed, added or removed');
  assert.equal(readFileSync(outside, 'utf8'), '{"task": "approach-tree"}\n');
});

/** Every path under `root` with a plain file's content, to compare before and after. */
function listTree(root: string): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    tree[path.relative(root, file)] = entry.isFile() ? readFileSync(file, 'utf8') : entry.isSymbolicLink() ? 'link' : 'folder';
  }
  return tree;
}

test("REWARDSMITH_DEBUG=1: an unexpected error of the installed command prints its stack in runner/src/ files (the bundle's source map); without it, one line", () => {
  // An unexpected error a user can meet (not one the product words itself): --out under a plain file, which
  // the loop's mkdir meets as ENOTDIR. If it ever becomes a worded error, any other unexpected error serves.
  writeFileSync(path.join(dir, 'debug-file'), '');
  const out = path.join(dir, 'debug-file', 'loop');
  const root = path.join(__dirname, '..', '..');
  const args = ['loop', '--task', 'approach-tree', '--no-llm', '--iterations', '1', '--out', out];
  const run = (debug: string) =>
    spawnSync(
      process.execPath,
      [path.join(root, 'runner/bin/rewardsmith.js'), ...args, '--reward', path.join(root, 'runner/rewards/approach-tree.dense.reward.ts')],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REWARDSMITH_DEBUG: debug },
        timeout: 120_000,
      },
    );
  const plain = run('');
  assert.equal(plain.status, 1, plain.stderr);
  assert.match(plain.stderr, /^rewardsmith loop: [^\n]+\n$/);
  noStack(plain.stderr);
  const debug = run('1');
  assert.equal(debug.status, 1, debug.stderr);
  assert.ok(debug.stderr.startsWith(plain.stderr), `the same message first:\n${debug.stderr}`);
  assert.match(debug.stderr, /^ +at Loop\.run \(.*runner[/\\]src[/\\]llm[/\\]loop\.ts:\d+:\d+\)$/m);
  assert.doesNotMatch(debug.stderr, /dist[/\\]cli\.js/, 'no frame left in the bundle');
});

test('REWARDSMITH_DEBUG=1 where the source map is not installed (as npm pack ships the CLI): the command says its stack is unmapped', () => {
  // An installation as the package lays it out: the bundle and runner/bin/ without dist/cli.js.map. The bundle is
  // a copy (Node would find the map beside a link's target); everything else beside it is linked.
  const root = path.join(__dirname, '..', '..');
  const install = mkdtempSync(path.join(dir, 'installed-'));
  mkdirSync(path.join(install, 'dist'));
  for (const f of readdirSync(path.join(root, 'dist')))
    if (f === 'cli.js') copyFileSync(path.join(root, 'dist', f), path.join(install, 'dist', f));
    else if (f !== 'cli.js.map' && !f.endsWith('.v8cache')) symlinkSync(path.join(root, 'dist', f), path.join(install, 'dist', f));
  cpSync(path.join(root, 'runner', 'bin'), path.join(install, 'runner', 'bin'), { recursive: true });
  symlinkSync(path.join(root, 'node_modules'), path.join(install, 'node_modules'));
  assert.ok(!existsSync(path.join(install, 'dist', 'cli.js.map')));
  writeFileSync(path.join(dir, 'debug-file'), '');
  const run = spawnSync(
    process.execPath,
    [
      path.join(install, 'runner/bin/rewardsmith.js'),
      ...['loop', '--task', 'approach-tree', '--no-llm', '--iterations', '1', '--out', path.join(dir, 'debug-file', 'loop')],
      ...['--reward', path.join(root, 'runner/rewards/approach-tree.dense.reward.ts')],
    ],
    { cwd: dir, encoding: 'utf8', env: { ...process.env, REWARDSMITH_DEBUG: '1' }, timeout: 120_000 },
  );
  assert.equal(run.status, 1, run.stderr);
  const [notice, message] = run.stderr.split('\n');
  assert.equal(
    notice,
    `rewardsmith: REWARDSMITH_DEBUG=1: this installation has no cli.js.map (packages leave the source map out), so stacks name positions in ${path.join(install, 'dist', 'cli.js')}, not runner/src/ lines; a checkout's \`npm run build\` has the map`,
  );
  assert.match(message!, /^rewardsmith loop: /);
  assert.match(run.stderr, /^ +at Loop\.run \(.*dist[/\\]cli\.js:\d+:\d+\)$/m, 'the stack names the bundle, as the notice says');
});
