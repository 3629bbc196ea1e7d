// The analyzer's patches on Python rewards (every kind): each request is placed in the paper's layout (a nested `def dense`
// that reads reward_function's parameters as a closure), in the top-level dense/sparse layout (whose
// parameter list is extended) and before the return of a dense variable; every patched file parses, keeps
// the contract and lints clean; composed patches run in the real sandbox and pay what they say; `analyze` writes
// them for a Python reward and `apply` writes them to it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { analyzeRun } from '../src/analyze/analyze';
import { applySuggestions } from '../src/analyze/apply';
import { patchReward, PatchUnavailable, type PatchRequest } from '../src/analyze/patches';
import { applyUnifiedDiff } from '../src/diff';
import { RUN_FILES } from '../src/records';
import { lintText } from '../src/lint/rules';
import { loadPythonParser, RewardSandbox } from '../src/reward';
import type { StepObservation } from '../src/schema';

const FIXTURES = path.join(__dirname, 'fixtures', 'rewards', 'python');
const TREE = path.join(FIXTURES, 'approach-tree.reward.py');
let dir: string;

before(async () => {
  await loadPythonParser();
  dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-pypatch-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const REQUESTS: PatchRequest[] = [
  { kind: 'hazard-penalty', names: ['lava'], distance: 3, why: 'the agents died in lava.' },
  { kind: 'hazard-penalty', names: ['zombie', 'skeleton'], distance: 5, why: 'mobs killed them.', label: 'mob' },
  { kind: 'pitch-limit', degrees: 60, why: 'they stared at the floor.' },
  { kind: 'stuck-penalty', window: 4, radius: 0.5, why: 'they stood still.' },
  { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log', 'birch_log'], why: 'they never found a tree.' },
  { kind: 'approach-record', targets: ['oak_log', 'birch_log'], step: 0.1, why: 'creeping back and forth paid.' },
  { kind: 'target-names', known: ['oak_log'], targets: ['oak_log', 'birch_log'], why: 'birch logs count too.' },
  { kind: 'unseen-pay', targets: ['oak_log', 'birch_log'], cellSize: 4, why: 'walking about with no tree in view paid.' },
];

/** Lint errors and warnings of a patched file (what the user would see). */
function problems(file: string, text: string): string[] {
  return lintText(file, text)
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => `${d.range.start.line + 1}: ${d.code} ${d.message}`);
}

function patched(name: string, text: string, req: PatchRequest): string {
  const p = patchReward(name, text, req);
  const file = path.join(dir, path.basename(name));
  writeFileSync(file, p.patched);
  assert.deepEqual(problems(file, p.patched), [], `${req.kind} on ${name}:\n${p.patched}`);
  assert.match(p.diff, new RegExp(`^\\+ *# Analyzer: ${req.why.replace(/[.]/g, '\\.')}$`, 'm'), p.diff);
  return p.patched;
}

test('every patch goes into the nested dense of the paper layout, parses, keeps the contract and lints clean', () => {
  const text = readFileSync(TREE, 'utf8');
  for (const req of REQUESTS) patched(TREE, text, req);
  // The nested dense() takes no parameters: it reads reward_function's, so none are added.
  const pitch = patchReward(TREE, text, REQUESTS[2]!);
  assert.match(pitch.diff, /^\+ {8}if abs\(past_agent_positions\[-1\]\[4\]\) > PITCH_LIMIT_DEGREES:\n\+ {12}return -1$/m);
  assert.match(pitch.diff, /^\+PITCH_LIMIT_DEGREES = 60 {2}# looking further up or down/m);
  const widened = patchReward(TREE, text, REQUESTS[6]!);
  assert.match(widened.diff, /^\+ {8}now = nearest_target\(current_nearest_blocks\)$/m);
  assert.match(widened.diff, /^\+ {8}log = nearest_target\(current_nearest_blocks\)$/m);
});

test('the top-level dense of the dense/sparse layout gains the parameters a patch needs, in contract order', () => {
  const file = path.join(FIXTURES, 'dense-sparse.reward.py');
  const text = readFileSync(file, 'utf8');
  const p = patchReward(file, text, { kind: 'stuck-penalty', window: 4, radius: 0.5, why: 'they stood still.' });
  assert.match(p.diff, /^-def dense\(current_nearest_blocks, previous_nearest_blocks\):$/m);
  assert.match(p.diff, /^\+def dense\(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions\):$/m);
  patched(file, text, { kind: 'approach-record', targets: ['oak_log'], step: 0.1, why: 'creeping paid.' });
});

test('a dense variable gets the patch assigned just before the return; a file that does not parse gets none, located', () => {
  const file = path.join(dir, 'variable.reward.py');
  const text = [
    '# task: approach-tree',
    'import numpy as np',
    '',
    '',
    'def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):',
    '    dense_reward = 0',
    '    log = current_nearest_blocks.get("oak_log")',
    '    if log is not None:',
    '        dense_reward = 1',
    '    sparse_reward = 1 if log is not None and log[0] < 1 else 0',
    '    return np.sign(sparse_reward) * 1 + np.sign(dense_reward) * 0.1',
    '',
  ].join('\n');
  const out = patched(file, text, { kind: 'hazard-penalty', names: ['lava'], distance: 3, why: 'lava.' });
  assert.match(out, /    if lava_in_view is not None and lava_in_view\[0\] < LAVA_PENALTY_DISTANCE:\n        dense_reward = -1\n    return np\.sign/);
  const broken = text.replace('dense_reward = 1', 'dense_reward = (1');
  assert.throws(
    () => patchReward(file, broken, { kind: 'pitch-limit', degrees: 45, why: 'pitch.' }),
    (err: Error) => err instanceof PatchUnavailable && /does not parse \(line \d+, column \d+/.test(err.message),
  );
});

function obs(nearest: Record<string, [number, number, number]>, x: number, pitch = 0): StepObservation {
  return { nearest, inventory_change: {}, health: 20, position: [x, 64, 0, 0, pitch], damage_dealt: 0, kill_entity: {} };
}

test('composed patches run in the sandbox and pay what they say: lava, pitch, a birch log approached', async () => {
  let text = readFileSync(TREE, 'utf8');
  for (const req of [REQUESTS[0]!, REQUESTS[2]!, REQUESTS[6]!, REQUESTS[5]!]) text = patched(TREE, text, req);
  const file = path.join(dir, 'composed.reward.py');
  writeFileSync(file, text);
  const sandbox = await RewardSandbox.open(file, 3);
  try {
    await sandbox.beginEpisodes([0, 1, 2], [obs({}, 0), obs({}, 0), obs({ birch_log: [6, 0, 0] }, 0)]);
    // env 0: lava at 2 m (dense -1); env 1: looking 80° down (dense -1); env 2: a birch log, closer than ever (dense +1).
    const first = await sandbox.step([obs({ lava: [2, 0, 0] }, 1), obs({}, 1, 80), obs({ birch_log: [5, 0, 0] }, 1)]);
    assert.deepEqual(Array.from(first), [-0.1, -0.1, 0.1]);
    // env 2 again at the same distance: no new record, nothing paid (the unpatched reward paid nothing for birch at all).
    const again = await sandbox.step([obs({}, 2), obs({}, 2), obs({ birch_log: [5, 0, 0] }, 2)]);
    assert.deepEqual(Array.from(again), [0, 0, 0]);
  } finally {
    await sandbox.close();
  }
});

test('a turning bonus gets its mirrored penalty; a movement bonus becomes a first-visit cell bonus that pays in the sandbox', async () => {
  const spin = path.join(FIXTURES, 'spin-bonus.reward.py');
  const mirrored = patchReward(spin, readFileSync(spin, 'utf8'), { kind: 'symmetric-turning', why: 'they spun on the spot.' });
  assert.match(
    mirrored.diff,
    /^ {5}if abs\(now\[1\]\) < abs\(before\[1\]\) - 0\.01:\n {9}return 1 {2}# turned towards it\n\+ {4}# Analyzer: they spun on the spot\.\n\+ {4}if abs\(now\[1\]\) > abs\(before\[1\]\) \+ 0\.01:\n\+ {8}return -1 {2}# turned away from it$/m,
  );
  patched(spin, readFileSync(spin, 'utf8'), { kind: 'symmetric-turning', why: 'they spun on the spot.' });
  assert.throws(() => patchReward(spin, mirrored.patched, { kind: 'symmetric-turning', why: 'x.' }), /already has a matching penalty/);

  const moved = path.join(FIXTURES, 'moved-bonus.reward.py');
  const req: PatchRequest = { kind: 'movement-to-cells', cellSize: 2, why: 'they walked back and forth.' };
  const text = patched(moved, readFileSync(moved, 'utf8'), req);
  const diff = patchReward(moved, readFileSync(moved, 'utf8'), req).diff;
  // The movement bonus and the locals that only fed it go; a GLOBAL_DATA set of visited cells comes in.
  assert.match(diff, /^- {8}if moved > 0\.05:$/m);
  assert.match(diff, /^- {8}moved = math\.hypot\(x1 - x0, z1 - z0\)$/m);
  assert.match(diff, /^- {8}x0, _, z0, _, _ = past_agent_positions\[-2\]$/m);
  assert.match(
    diff,
    /^\+ {8}if cell_key not in GLOBAL_DATA\["visited_cells"\]:\n\+ {12}GLOBAL_DATA\["visited_cells"\]\.add\(cell_key\)\n {13}return 1 {2}# keep moving$/m,
  );
  const file = path.join(dir, 'cells.reward.py');
  writeFileSync(file, text);
  const sandbox = await RewardSandbox.open(file, 1);
  try {
    await sandbox.beginEpisodes([0], [obs({}, 0)]);
    // Back and forth between two 2 m cells: each pays on its first visit only, then it is standing still's -1.
    const paid: number[] = [];
    for (const x of [3, 0, 3, 0]) paid.push((await sandbox.step([obs({}, x)]))[0]!);
    assert.deepEqual(paid, [0.1, 0.1, -0.1, -0.1]);
  } finally {
    await sandbox.close();
  }
});

test('analyze a run with lava deaths against a Python reward: a Python diff that apply writes to the .reward.py', async () => {
  const run = path.join(dir, 'lava-run');
  cpSync(path.join(__dirname, 'fixtures', 'runs', 'lava-deaths'), run, { recursive: true });
  const reward = path.join(dir, 'explore.reward.py');
  const text = [
    '# task: explore-diamond',
    'import numpy as np',
    '',
    '',
    'def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):',
    '    def dense():',
    '        return 1 if current_nearest_blocks.get("diamond_ore") is not None else 0',
    '',
    '    sparse_reward = 1 if inventory_change.get("diamond", 0) > 0 else 0',
    '    return np.sign(sparse_reward) * 1 + np.sign(dense()) * 0.1',
    '',
  ].join('\n');
  writeFileSync(reward, text);
  const a = await analyzeRun(run, { rewardFile: reward });
  const lava = a.suggestions.find((s) => s.id === 'death-lava');
  assert.ok(lava?.diff, lava?.patchUnavailable ?? a.suggestions.map((s) => s.id).join(', '));
  assert.match(lava.diff, /^\+ {8}lava_in_view = current_nearest_blocks\.get\("lava"\)$/m);
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ version: 1, ...a })); // as `rewardsmith analyze` writes it
  const applied = applySuggestions(run, ['death-lava'], { to: reward });
  assert.ok(applied.written);
  const now = readFileSync(reward, 'utf8');
  assert.equal(now, applyUnifiedDiff(text, lava.diff));
  assert.deepEqual(problems(reward, now), []);
});

test('a braced TypeScript note, or one with a subscript, counts as a note, as its Python twin does: a patch goes below it in both, and both pay the same', async () => {
  // Twin rewards: pay on every step once an oak log has been seen this episode, recorded by a note that opens dense.
  const twins = {
    'note.reward.ts': [
      '// task: approach-tree',
      'export function dense(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {',
      '  if (current_nearest_blocks.oak_log !== undefined) {',
      '    GLOBAL_DATA.tree_seen = true;',
      '  }',
      '  return GLOBAL_DATA.tree_seen ? 1 : 0;',
      '}',
      '',
      'export function sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health) {',
      '  return 0;',
      '}',
      '',
    ],
    // The same note written as Python writes it, with a subscript.
    'note-subscript.reward.ts': [
      '// task: approach-tree',
      'export function dense(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {',
      "  if (current_nearest_blocks.oak_log !== undefined) GLOBAL_DATA['tree_seen'] = true;",
      '  return GLOBAL_DATA.tree_seen ? 1 : 0;',
      '}',
      '',
      'export function sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health) {',
      '  return 0;',
      '}',
      '',
    ],
    'note.reward.py': [
      'def dense(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):',
      '    if "oak_log" in current_nearest_blocks:',
      '        GLOBAL_DATA["tree_seen"] = True',
      '    return 1 if "tree_seen" in GLOBAL_DATA else 0',
      '',
      '',
      'def sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health):',
      '    return 0',
      '',
    ],
  };
  const seen: Record<string, { patchBelowNote: boolean; paid: number[] }> = {};
  for (const [name, lines] of Object.entries(twins)) {
    const p = patchReward(name, lines.join('\n'), REQUESTS[2]!); // the pitch limit: returns -1 first when looking far down
    const body = p.patched.split('\n');
    const note = body.findIndex((l) => /tree_seen\W*= *(true|True)/.test(l));
    const patch = body.findIndex((l) => /^\s*(\/\/|#) Analyzer:/.test(l));
    const file = path.join(dir, `patched-${name}`);
    writeFileSync(file, p.patched);
    const sandbox = await RewardSandbox.open(file, 1);
    try {
      await sandbox.beginEpisodes([0], [obs({}, 0)]);
      // A tree in view while looking 80° down (the pitch limit's -1), then looking ahead with no tree in view:
      // the tree was seen, so the second step pays.
      const paid = [...(await sandbox.step([obs({ oak_log: [6, 0, 0] }, 1, 80)])), ...(await sandbox.step([obs({}, 2)]))];
      seen[name] = { patchBelowNote: note >= 0 && note < patch, paid };
    } finally {
      await sandbox.close();
    }
  }
  const expected = { patchBelowNote: true, paid: [-0.1, 0.1] };
  assert.deepEqual(seen, { 'note.reward.ts': expected, 'note-subscript.reward.ts': expected, 'note.reward.py': expected });
});
