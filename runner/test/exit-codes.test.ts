// Exit codes over every command, against README's one table ("Errors and exit codes"): usage errors (an
// unknown option or task, a missing argument, a named file or folder that does not exist, no LLM configured)
// exit 2 in every command, failures 1, --help 0. Run in-process through the real dispatcher (`runCli`, what
// the `rewardsmith` program runs), so that every command's cases cost one process, not one each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startLlmServer } from './helpers/llm-server';
import { cliAll } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const dir = tempDir('rewardsmith-exit-');

/** The command names `rewardsmith --help` lists. */
function commandNames(): string[] {
  const r = spawnSync(process.execPath, ['--import', TSX, path.join(ROOT, 'runner/src/cli.ts'), '--help'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return [...r.stdout.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]!);
}

/** README's exit-code table: code → meaning. */
function readmeExitCodes(): Map<number, string> {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Errors and exit codes'));
  const table = section.slice(0, section.indexOf('\n###'));
  return new Map([...table.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2]!]));
}

const NO_LLM = { OPENAI_API_KEY: null, OPENAI_BASE_URL: null };

copyFileSync(path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts'), path.join(dir, 'ok.reward.ts'));
writeFileSync(
  path.join(dir, 'bad.reward.ts'),
  "export function reward_function(current_nearest_blocks): number {\n  return current_nearest_blocks['magma'] ? 1 : 0;\n}\n",
);
mkdirSync(path.join(dir, 'empty'));

// Every command's cases: [arguments, expected exit code, what the message must say]. Each command has at
// least --help (0) and a usage error (2); the unknown-task case wherever the command takes --task.
const DID_YOU_MEAN_TASK = /unknown task "aproach-tree" \(did you mean approach-tree\?\)/;
const CASES: Record<string, [string[], number, RegExp][]> = {
  train: [
    [['ok.reward.ts', '--task', 'aproach-tree', '--out', 'o'], 2, DID_YOU_MEAN_TASK],
    [['ok.reward.ts', '--task', 'no-such.yaml', '--out', 'o'], 2, /no-such\.yaml: no such task file/],
  ],
  eval: [
    [['nope', '--out', 'o'], 2, /nope: no such checkpoint or run folder/],
    [['empty', '--out', 'o'], 1, /no checkpoint here/],
  ],
  pretrain: [[['--task', 'aproach-tree', '--out', 'p'], 2, DID_YOU_MEAN_TASK]],
  table: [[['--tasks', 'aproach-tree', '--out', 't'], 2, DID_YOU_MEAN_TASK]],
  rollout: [[['--task', 'aproach-tree', '--out', 'r'], 2, DID_YOU_MEAN_TASK]],
  lint: [
    [['nope.reward.ts'], 2, /nope\.reward\.ts: no such file/],
    [['bad.reward.ts'], 1, /magma/],
    [['ok.reward.ts'], 0, /^/],
  ],
  lsp: [[[], 2, /choose a transport/]],
  critique: [
    [['x.lua'], 2, /Lua rewards are not supported yet/],
    [['nope.reward.ts'], 2, /nope\.reward\.ts: no such file/],
    [['ok.reward.ts', '--task', 'aproach-tree'], 2, /No LLM configured/],
  ],
  design: [
    [['--task', 'aproach-tree', '--out', 'd.reward.ts'], 2, DID_YOU_MEAN_TASK],
    [['--task', 'approach-tree', '--out', 'd.reward.ts'], 2, /No LLM configured/],
  ],
  analyze: [
    [['nope'], 2, /nope: no such run folder/],
    [['empty'], 1, /no evaluation episodes/],
  ],
  apply: [
    [['nope', '--suggestion', 'x'], 2, /nope: no such run folder/],
    [['empty', '--suggestion', 'x'], 1, /no analysis yet/],
  ],
  report: [
    [['nope'], 2, /nope: no such run folder/],
    [['empty'], 1, /not a run folder/],
  ],
  playback: [
    [['nope'], 2, /nope: no such run folder/],
    [['empty', '--out', 'x.png'], 2, /--out x\.png: playback writes an animated GIF/],
    [['empty'], 1, /no evaluation episodes/],
    [['nope.reward.ts', '--probe', '1'], 2, /nope\.reward\.ts: no such reward file/],
    [['ok.reward.ts', '--probe', '1', '--task', 'aproach-tree'], 2, DID_YOU_MEAN_TASK],
    [['empty', '--task', 'approach-tree'], 2, /--task goes with --probe/],
  ],
  sweep: [[['--task', 'aproach-tree', '--rewards', 'ok.reward.ts', '--out', 's'], 2, DID_YOU_MEAN_TASK]],
  loop: [
    [['--task', 'aproach-tree', '--iterations', '1', '--out', 'l'], 2, DID_YOU_MEAN_TASK],
    [['--task', 'approach-tree', '--iterations', '1', '--out', 'l'], 2, /No LLM configured/],
    [
      ['--task', 'approach-tree', '--iterations', '1', '--out', 'l', '--reward', 'ok.reward.ts', '--language', 'py', '--no-llm'],
      2,
      /ok\.reward\.ts is not in --language py/,
    ],
  ],
};

test('every command has exit-code cases: --help 0, an unknown option 2, its usage errors 2, its failures 1', async () => {
  const commands = commandNames();
  assert.ok(commands.length >= 14, `rewardsmith --help lists ${commands.join(', ')}`);
  assert.deepEqual(Object.keys(CASES).sort(), [...commands].sort(), 'a command without exit-code cases here');
  const cases = commands.flatMap((command) => [
    { what: `${command} --help`, args: [command, '--help'], code: 0, message: new RegExp(`^usage: rewardsmith ${command}`) },
    { what: `${command} --frobnicate`, args: [command, '--frobnicate'], code: 2, message: new RegExp(`^rewardsmith ${command}: unknown option --frobnicate`) },
    ...CASES[command]!.map(([args, code, message]) => ({ what: `${command} ${args.join(' ')}`, args: [command, ...args], code, message })),
  ]);
  cases.push({ what: 'trian', args: ['trian'], code: 2, message: /unknown command "trian" \(did you mean train\?\)/ });
  const results = await cliAll(
    dir,
    cases.map((c) => ({ args: c.args, env: NO_LLM })),
  );
  const seen = new Set<number>();
  cases.forEach((c, i) => {
    const r = results[i]!;
    assert.equal(r.code, c.code, `rewardsmith ${c.what} exited ${r.code}, not ${c.code}:\n${r.out}${r.err}`);
    assert.match(r.out + r.err, c.message, `rewardsmith ${c.what}`);
    assert.doesNotMatch(r.err, /^\s+at .+\d+\)?$/m, `rewardsmith ${c.what}: a stack trace reached the user`);
    seen.add(c.code);
  });
  const table = readmeExitCodes();
  for (const code of seen) assert.ok(table.has(code), `README's exit-code table has no row for ${code}`);
  for (const code of [0, 1, 2]) assert.ok(seen.has(code), `no case exercises exit code ${code} of the table`);
});

test('an LLM that fails is a failure (1) in critique and design alike; no LLM configured is 2 in both (README says so)', async (t) => {
  const server = await startLlmServer(() => ({ status: 401, message: 'bad key' }));
  t.after(() => server.close());
  const env = { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test' };
  const [critique, design] = await cliAll(dir, [
    { args: ['critique', 'ok.reward.ts', '--task', 'approach-tree'], env },
    { args: ['design', '--task', 'approach-tree', '--out', 'd.reward.ts'], env },
  ]);
  assert.equal(critique!.code, 1, critique!.err);
  assert.equal(design!.code, 1, design!.err);
  assert.match(readmeExitCodes().get(1)!, /LLM that gave no usable answer/);
  assert.match(readmeExitCodes().get(2)!, /no LLM configured/);
});
