import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandArgs, runCommand, terminalText, type CommandIo } from '../src/args';

const spec = {
  command: 'train',
  summary: 'train a PPO agent on a reward file',
  positionals: 'REWARD_FILE',
  minPositionals: 0,
  maxPositionals: 1,
  options: {
    steps: { type: 'int', min: 1, max: 1e9, default: 256000, description: 'training frames' },
    backend: { type: 'string', choices: ['auto', 'gpu', 'node', 'wasm', 'cpu'], default: 'auto', description: 'TF.js backend' },
    out: { type: 'string', valueName: 'DIR', description: 'run folder' },
    overwrite: { type: 'boolean', description: 'replace the run' },
    rewards: { type: 'list', description: 'reward files' },
  },
} as const;

function capture(): CommandIo & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

async function run(argv: string[]) {
  const io = capture();
  const code = await runCommand(
    'train',
    async () => {
      parseCommandArgs(spec, argv);
      return 0;
    },
    io,
  );
  return { code, ...io };
}

test('typed values, defaults, = and space forms, lists', () => {
  const { values, positionals, given } = parseCommandArgs(spec, ['r.reward.ts', '--steps=1000', '--out', 'runs/a', '--rewards', 'a.ts', 'b.ts', '--overwrite']);
  assert.equal(values.steps, 1000);
  assert.equal(values.backend, 'auto');
  assert.equal(values.out, 'runs/a');
  assert.equal(values.overwrite, true);
  assert.deepEqual(values.rewards, ['a.ts', 'b.ts']);
  assert.deepEqual(positionals, ['r.reward.ts']);
  assert.ok(given.has('steps') && !given.has('backend'));
});

test('an unknown option gets one message in the common format with a did-you-mean, exit 2, no stack', async () => {
  const r = await run(['--stepz', '100']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^rewardsmith train: unknown option --stepz \(did you mean --steps\?\)\n/);
  assert.doesNotMatch(r.err, /at .*\.ts:\d+/);
});

test('an enum value gets a did-you-mean; numbers are checked for type and bounds', async () => {
  assert.match((await run(['--backend', 'wsam'])).err, /--backend must be one of auto, gpu, node, wasm, cpu, got "wsam" \(did you mean wasm\?\)/);
  assert.match((await run(['--steps', '1e300'])).err, /--steps must be ≤ 1000000000/);
  assert.match((await run(['--steps', '2.5'])).err, /--steps must be an integer, got "2.5"/);
  assert.match((await run(['--out'])).err, /--out needs a value \(DIR\)/);
  assert.match((await run(['a', 'b'])).err, /too many arguments: "b"/);
});

test('--help prints the generated help and exits 0', async () => {
  const r = await run(['--help']);
  assert.equal(r.code, 0);
  assert.match(r.out, /^usage: rewardsmith train REWARD_FILE \[options\]/);
  assert.match(r.out, /--backend auto\|gpu\|node\|wasm\|cpu/);
  assert.match(r.out, /\(default 256000\)/);
});

test('terminalText removes escape sequences and control characters from outside text, keeping newlines and tabs', () => {
  assert.equal(terminalText('\x1b]0;title\x07a\x1b[2J\x1b[1;31mb\x1b[0m\tc\n\x1bPdcs\x1b\\d\x9b2Je\x9d8;;http://x\x9cf\r\x00\x7f'), 'ab\tc\ndef');
  assert.equal(terminalText('plain – ünïcode ✓'), 'plain – ünïcode ✓');
  // An unterminated OSC loses its introducer only: nothing left can start a sequence, the text stays.
  assert.equal(terminalText('x\x1b]0;still text'), 'x0;still text');
});
