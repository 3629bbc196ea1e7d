// Validated inputs: the training configuration (flags and --config FILE, one set of declarations) and
// task files. Each wrong value is refused naming the field, where it is and why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_SETTINGS_FILE_BYTES, reportCommandError, type CommandIo } from '../src/args';
import { parseTrainArgs, writeStoredConfig } from '../src/runs/config';
import { loadTaskFile, TaskFileError } from '../src/tasks';
import { cliAll } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
const dir = tempDir('rewardsmith-config-');
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

/** What the user sees on stderr for a train invocation, and the exit code. */
function trainError(argv: string[]): { code: number; err: string } {
  let err = '';
  const io: CommandIo = { stdout: () => {}, stderr: (t) => void (err += t) };
  try {
    parseTrainArgs(argv);
  } catch (e) {
    return { code: reportCommandError('train', e, io), err };
  }
  return { code: 0, err };
}

test('--envs has an upper bound and --steps below one PPO update is an error, not silently one update', () => {
  const huge = trainError(['r.reward.ts', '--task', 'approach-tree', '--out', 'runs/a', '--envs', '1e8']);
  assert.equal(huge.code, 2);
  assert.match(huge.err, /^rewardsmith train: --envs must be ≤ 512, got 1e8/);
  assert.match(trainError(['r.reward.ts', '--task', 'approach-tree', '--out', 'runs/a', '--envs', '50000']).err, /--envs must be ≤ 512/);
  const small = trainError(['r.reward.ts', '--task', 'approach-tree', '--out', 'runs/a', '--steps', '100']);
  assert.equal(small.code, 2);
  assert.match(small.err, /--steps 100 is less than one PPO update \(32 envs × 64 rollout steps = 2048 frames\)/);
  assert.match(trainError(['r.reward.ts', '--task', 'approach-tree', '--out', 'runs/a', '--gamma', '1.5']).err, /--gamma must be ≤ 1, got 1.5/);
  assert.match(trainError(['r.reward.ts', '--task', 'approach-tree', '--out', 'runs/a', '--epochs', '2.5']).err, /--epochs must be an integer/);
});

test('a configuration file sets PPO hyperparameters, envs, eval episodes and seed; flags override it', () => {
  const cfg = file('train.yaml', 'task: approach-tree\nsteps: 4096\nenvs: 8\neval-episodes: 20\nseed: 3\nlearning-rate: 0.0003\nepochs: 3\n');
  const inv = parseTrainArgs(['r.reward.ts', '--config', cfg, '--out', 'runs/a', '--seed', '5']);
  assert.equal(inv.config.task, 'approach-tree');
  assert.equal(inv.config.envs, 8);
  assert.equal(inv.config.evalEpisodes, 20);
  assert.equal(inv.config.seed, 5, 'the flag overrides the file');
  assert.equal(inv.config.hyperparameters.learningRate, 0.0003);
  assert.equal(inv.config.hyperparameters.epochs, 3);
  assert.equal(inv.config.hyperparameters.gamma, 0.99, 'unset hyperparameters keep their defaults');
  assert.equal(inv.config.configFile, cfg);
});

test('a configuration file error names the file, line, field and reason', () => {
  const bad = file('bad.yaml', 'task: approach-tree\nenvs: 50000\n');
  const r = trainError(['r.reward.ts', '--config', bad, '--out', 'runs/a']);
  assert.equal(r.code, 2);
  assert.match(r.err, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:2:7: envs must be ≤ 512, got 50000`));
  const typo = file('typo.yaml', 'task: approach-tree\nlerning-rate: 0.001\n');
  assert.match(
    trainError(['r.reward.ts', '--config', typo, '--out', 'runs/a']).err,
    /typo.yaml:2:1: unknown key "lerning-rate" \(did you mean learning-rate\?\)/,
  );
  const typed = file('typed.json', '{"task": "approach-tree", "seed": "3"}');
  assert.match(trainError(['r.reward.ts', '--config', typed, '--out', 'runs/a']).err, /typed.json:1:35: seed must be an integer, got "3"/);
  const out = file('out.yaml', 'out: runs/x\n');
  assert.match(trainError(['r.reward.ts', '--config', out, '--task', 'approach-tree', '--out', 'runs/a']).err, /unknown key "out"/);
  assert.match(
    trainError(['r.reward.ts', '--config', path.join(dir, 'missing.yaml'), '--out', 'runs/a']).err,
    /missing.yaml: cannot read the configuration file \(ENOENT\)/,
  );
});

test('--resume restores the stored configuration (eval episodes and envs included) and refuses a conflicting one', () => {
  const run = mkdtempSync(path.join(dir, 'run-'));
  const first = parseTrainArgs([
    'r.reward.ts',
    '--task',
    'approach-tree',
    '--out',
    run,
    '--eval-episodes',
    '7',
    '--eval-envs',
    '7',
    '--envs',
    '4',
    '--steps',
    '512',
  ]);
  writeStoredConfig(run, first.config);
  const resumed = parseTrainArgs(['--resume', run]);
  assert.equal(resumed.config.evalEpisodes, 7);
  // The table's cells evaluate every episode at once (--eval-envs 100); a resumed cell must too.
  assert.equal(resumed.config.evalEnvs, 7);
  assert.equal(parseTrainArgs(['--resume', run, '--eval-envs', '2']).config.evalEnvs, 2);
  assert.equal(resumed.config.envs, 4);
  assert.equal(resumed.config.steps, 512);
  assert.equal(parseTrainArgs(['--resume', run, '--eval-episodes', '3']).config.evalEpisodes, 3);
  assert.match(trainError(['--resume', run, '--envs', '8']).err, /--envs 8 differs from the run's 4 \(stored in its config.json\)/);
  writeFileSync(path.join(run, 'config.json'), '{"evalEpisodes": 7');
  assert.match(trainError(['--resume', run]).err, /config.json: not valid JSON/);
});

test("a run's own config.json fed back as --config trains the same configuration; flags still override it", () => {
  const run = mkdtempSync(path.join(dir, 'run-'));
  const init = mkdtempSync(path.join(dir, 'foundation-'));
  const argv = ['r.reward.ts', '--task', 'approach-tree', '--out', run, '--steps', '4096', '--envs', '8', '--seed', '3', '--eval-episodes', '0'];
  const first = parseTrainArgs([...argv, '--init', init, '--workers', '2', '--return-norm', 'off', '--learning-rate', '0.0003', '--epochs', '3']);
  writeStoredConfig(run, first.config);
  const again = parseTrainArgs(['r.reward.ts', '--config', path.join(run, 'config.json'), '--out', path.join(dir, 'again')]);
  assert.deepEqual({ ...again.config, configFile: null }, { ...first.config, configFile: null });
  // The defaults' nulls (no --init, no --workers) read back as unset, not as "init must be a string, got null".
  const plain = parseTrainArgs(argv);
  writeStoredConfig(run, plain.config);
  const plainAgain = parseTrainArgs(['r.reward.ts', '--config', path.join(run, 'config.json'), '--out', path.join(dir, 'again'), '--seed', '4']);
  assert.deepEqual({ ...plainAgain.config, configFile: null }, { ...plain.config, seed: 4, configFile: null });
  writeFileSync(path.join(run, 'config.json'), JSON.stringify({ ...plain.config, envs: 50000 }));
  assert.match(trainError(['r.reward.ts', '--config', path.join(run, 'config.json'), '--out', 'x']).err, /config\.json: envs must be ≤ 512, got 50000/);
});

test('--train-episode-steps is stored with the run: --resume keeps it and refuses another, --config FILE sets it', () => {
  const run = mkdtempSync(path.join(dir, 'run-'));
  const first = parseTrainArgs(['r.reward.ts', '--task', 'explore-diamond', '--out', run, '--train-episode-steps', '3000']);
  assert.equal(first.config.trainEpisodeSteps, 3000);
  assert.equal(parseTrainArgs(['r.reward.ts', '--task', 'explore-diamond', '--out', run]).config.trainEpisodeSteps, null, 'unset: the task decides');
  writeStoredConfig(run, first.config);
  assert.equal(parseTrainArgs(['--resume', run]).config.trainEpisodeSteps, 3000);
  assert.equal(parseTrainArgs(['--resume', run, '--train-episode-steps', '3000']).config.trainEpisodeSteps, 3000);
  assert.match(
    trainError(['--resume', run, '--train-episode-steps', '500']).err,
    /--train-episode-steps 500 differs from the run's 3000 \(stored in its config.json\)/,
  );
  assert.match(
    trainError(['r.reward.ts', '--task', 'explore-diamond', '--out', run, '--train-episode-steps', '0']).err,
    /--train-episode-steps must be ≥ 1, got 0/,
  );
  const again = parseTrainArgs(['r.reward.ts', '--config', path.join(run, 'config.json'), '--out', path.join(dir, 'again')]);
  assert.equal(again.config.trainEpisodeSteps, 3000);
  assert.equal(
    parseTrainArgs(['r.reward.ts', '--config', file('t.yaml', 'task: explore-diamond\ntrain-episode-steps: 4000\n'), '--out', 'x']).config.trainEpisodeSteps,
    4000,
  );
});

function taskError(text: string): string {
  try {
    loadTaskFile(file(`t${Math.random().toString(36).slice(2)}.yaml`, text));
  } catch (e) {
    assert.ok(e instanceof TaskFileError, String(e));
    return e.message;
  }
  return 'accepted';
}

test("task files: strings are not booleans, heights and counts are integers within the game's bounds", () => {
  const base = 'id: t\nextends: approach-cow\n';
  assert.match(taskError(base + 'attack: "false"\n'), /:3:9: attack: must be true or false, got "false"/);
  assert.match(taskError(base + 'world: underground\nstartY: 11.5\n'), /:4:9: startY: must be an integer, got 11.5/);
  assert.match(taskError(base + 'maxSteps: 1e300\n'), /:3:11: maxSteps: must be ≤ 1000000, got 1e\+300/);
  assert.match(taskError(base + 'inventory:\n  iron_pickaxe: 1000000000000\n'), /:4:17: inventory.iron_pickaxe: must be ≤ 2304, got 1000000000000/);
  assert.match(taskError(base + 'success: {kind: kill, mob: cow, count: 0}\n'), /success.count: must be ≥ 1/);
  assert.equal(loadTaskFile(file('ok.yaml', base + 'attack: false\nmaxSteps: 150\n')).attack, false);
});

// Big inputs run in a child process with a deadline: a hang guard only (a quadratic check of these inputs took
// minutes), the assertions are on what the user reads.
const HANG_GUARD_MS = 90_000;
function loadTaskInChild(file: string): { status: number | null; out: string } {
  const script = "try { require('./runner/src/tasks').loadTaskFile(process.argv[1]); console.log('accepted'); } catch (e) { console.log(e.message); }";
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script, file], { cwd: ROOT, encoding: 'utf8', timeout: HANG_GUARD_MS });
  return { status: r.status, out: r.stdout.trim() };
}
/** A JSON object of `n` keys k0…, after `head` (the text of the first entries). */
const manyKeys = (n: number, head = '') => `{${head}${Array.from({ length: n }, (_, i) => `"k${i}": ${i}`).join(', ')}}`;
const TASK_HEAD = '"id": "big", "extends": "approach-tree", ';

test('a task file over the size limit is refused before it is parsed, with the file, its size and the limit', () => {
  const big = file('big-task.json', manyKeys(120_000, TASK_HEAD));
  assert.ok(readFileSync(big).length > MAX_SETTINGS_FILE_BYTES);
  const r = loadTaskInChild(big);
  assert.equal(r.status, 0, 'finished within the hang guard');
  assert.equal(r.out, `${big}: ${readFileSync(big).length.toLocaleString('en-US')} bytes, more than the 1 MiB a task file may hold`);
});

test("a FIFO in a task file's place (a path a run's summary.json names: analyze, playback) is refused, not waited on", () => {
  const fifo = path.join(dir, 'fifo-task.yaml');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const r = loadTaskInChild(fifo);
  assert.equal(r.status, 0, 'finished within the hang guard');
  assert.equal(r.out, `${fifo}: not a plain file (a FIFO or a device); a task file is read only from a plain file`);
});

test('a large task file within the limit is checked in one pass: a duplicate key at its end is located', () => {
  const text = manyKeys(50_000, TASK_HEAD).replace(/}$/, ', "id": "again"}');
  const big = file('many-keys-task.json', text);
  assert.ok(text.length < MAX_SETTINGS_FILE_BYTES);
  const r = loadTaskInChild(big);
  assert.equal(r.status, 0, 'finished within the hang guard');
  assert.equal(r.out, `${big}:1:${text.lastIndexOf('"id"') + 1}: duplicate key "id" (first at 1:2)`);
});

test('a configuration file: over the size limit refused, many keys checked in one pass, a duplicate key located', async () => {
  const big = file('big-config.json', manyKeys(120_000));
  const many = file('many-keys-config.json', manyKeys(50_000, '"task": "approach-tree", '));
  // Both command lines in one child process through the real dispatcher (helpers/cli-all.ts), within twice the hang guard.
  const [over, unknown] = await cliAll(
    ROOT,
    [big, many].map((config) => ({ args: ['train', 'r.reward.ts', '--config', config, '--out', path.join(dir, 'never')] })),
    2 * HANG_GUARD_MS,
  );
  assert.equal(over!.code, 2, over!.err);
  assert.match(
    over!.err,
    new RegExp(`^rewardsmith train: ${big.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: [\\d,]+ bytes, more than the 1 MiB a configuration file may hold\n`),
  );
  assert.equal(unknown!.code, 2, unknown!.err);
  assert.match(unknown!.err, /many-keys-config\.json:1:27: unknown key "k0"/);
  const twice = file('twice.yaml', 'task: approach-tree\nseed: 1\nseed: 2\n');
  assert.match(trainError(['r.reward.ts', '--config', twice, '--out', 'runs/a']).err, /twice\.yaml:3:1: duplicate key "seed" \(first at 2:1\)/);
});
