// Rebuilding while a training runs: build.mjs replaces each output in dist/ through a temporary file and a
// rename, so a running process keeps the files it started with. A sandbox host started from dist/ (it has
// dist/native/isolated_vm.node mapped) keeps answering steps while `node build.mjs` runs beside it. `npm start`'s
// `node build.mjs --if-stale` builds nothing when no input changed since the last build, and builds when one did.
import assert from 'node:assert/strict';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { compileRewardFile, REWARD_LIMITS } from '../src/reward';
import { LOOP_MARKER } from '../src/reward/compile';
import type { HostReply, HostRequest } from '../src/reward/protocol';
import { observationWire, SCALE_RULE } from '../src/schema';
import { tempDir } from './helpers/tmp';

const root = path.join(__dirname, '..', '..');
const dist = path.join(root, 'dist');
const addon = path.join(dist, 'native', 'isolated_vm.node');
const run = promisify(execFile);
const build = () => run(process.execPath, [path.join(root, 'build.mjs')], { cwd: root, maxBuffer: 16 * 2 ** 20 });

/** The bundled sandbox host, driven over its IPC protocol as RewardSandbox drives it. */
function startHost(): { child: ChildProcess; call: (req: Record<string, unknown>) => Promise<HostReply> } {
  const child = fork(path.join(dist, 'sandbox-host.js'), [], {
    execArgv: ['--no-node-snapshot'],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let nextId = 1;
  let died: Error | undefined;
  const waiting = new Map<number, { resolve: (r: HostReply) => void; reject: (e: Error) => void }>();
  child.on('message', (r: HostReply) => waiting.get(r.id)?.resolve(r));
  child.on('exit', (code, signal) => {
    died = new Error(`the sandbox host died (${signal ?? `code ${code}`})`);
    for (const w of waiting.values()) w.reject(died);
  });
  const call = (req: Record<string, unknown>) =>
    new Promise<HostReply>((resolve, reject) => {
      if (died) return reject(died);
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      child.send({ ...req, id } as HostRequest, (err) => err && reject(died ?? err));
    });
  return { child, call };
}

test('a rebuild replaces dist/ files by rename: a sandbox host running from dist/ keeps its addon and keeps stepping', { timeout: 300_000 }, async () => {
  if (!existsSync(path.join(dist, 'sandbox-host.js')) || !existsSync(addon)) await build();
  const compiled = compileRewardFile(path.join(__dirname, 'fixtures', 'rewards', 'counter.reward.ts'));
  const { child, call } = startHost();
  try {
    const open = await call({
      op: 'open',
      js: compiled.js,
      exportsKind: compiled.exportsKind,
      attack: false,
      limits: REWARD_LIMITS,
      loopMarker: LOOP_MARKER,
      scriptName: 'rewardsmith-reward.js',
      sparseWeight: SCALE_RULE.sparseWeight,
      denseWeight: SCALE_RULE.denseWeight,
      observation: observationWire(),
    });
    assert.equal(open.ok, true, JSON.stringify(open));
    const obs = (k: number) => ({
      nearest: { stone: [k, 0, 0.3] },
      inventory_change: {},
      health: 10,
      position: [k, 11, 0.5, 0, 0],
      damage_dealt: 0,
      kill_entity: {},
    });
    assert.equal((await call({ op: 'begin', json: JSON.stringify({ envs: [0], obs: [obs(0)] }) })).ok, true);
    // Names are sent once; afterwards a step is the packed numbers (see ObservationEncoder).
    const packed = (k: number, first: boolean) => ({
      op: 'step',
      newNames: first ? ['stone'] : [],
      data: Float64Array.from([1, 0, k, 0, 0.3, 0, 10, k, 11, 0.5, 0, 0, 0, 0]),
      count: 1,
    });
    let k = 1;
    const first = await call(packed(k, true));
    // Compared field by field: a reply may carry more (a probe's coverage detail, undefined here).
    const fields = (r: HostReply) => ({ id: r.id, ok: r.ok, values: r.ok && r.values ? Array.from(r.values) : undefined });
    assert.deepEqual(fields(first), { id: 3, ok: true, values: [1] });
    const inodes = (files: string[]) => files.map((f) => statSync(f).ino);
    const watched = [addon, path.join(dist, 'sandbox-host.js'), path.join(dist, 'cli.js')];
    const before = inodes(watched);
    // The host steps the whole time the build runs (each step runs the addon's code).
    let building = true;
    const rebuilt = build().finally(() => (building = false));
    while (building) {
      k++;
      const r = await call(packed(k, false));
      assert.deepEqual(fields(r), { id: r.id, ok: true, values: [k] }, `step ${k} during the rebuild`);
    }
    await rebuilt;
    const after = inodes(watched);
    for (let i = 0; i < watched.length; i++) assert.notEqual(after[i], before[i], `${path.relative(root, watched[i]!)} was rewritten in place, not replaced`);
    const last = await call(packed(k + 1, false));
    assert.equal(last.ok, true);
    assert.ok(k > 2, `the host stepped ${k} times during the rebuild`);
  } finally {
    child.kill('SIGKILL');
  }
});

test("npm start's `build.mjs --if-stale`: nothing rebuilt when no input changed; a changed, deleted or missing file is named", {
  timeout: 300_000,
}, async () => {
  const ifStale = () => run(process.execPath, [path.join(root, 'build.mjs'), '--if-stale'], { cwd: root, maxBuffer: 16 * 2 ** 20 });
  await ifStale(); // builds when the last build was by another version of this script, or interrupted
  const cli = path.join(dist, 'cli.js');
  const before = statSync(cli).ino;
  const { stdout } = await ifStale();
  assert.match(stdout, /dist\/ is up to date/);
  assert.equal(statSync(cli).ino, before, 'dist/cli.js was not written again');

  const { staleReason } = (await import(pathToFileURL(path.join(root, 'build.mjs')).href)) as {
    staleReason: (manifest: string, root?: string) => string | null;
  };
  const dir = tempDir('rewardsmith-build-inputs-');
  mkdirSync(path.join(dir, 'src'));
  mkdirSync(path.join(dir, 'dist'));
  writeFileSync(path.join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(path.join(dir, 'dist', 'cli.js'), '');
  const a = statSync(path.join(dir, 'src', 'a.ts'));
  const manifest = path.join('dist', '.build-inputs.json');
  const list = (inputs: [string, number, number][]) => writeFileSync(path.join(dir, manifest), JSON.stringify({ inputs, outputs: ['dist/cli.js'] }));
  assert.equal(staleReason(manifest, dir), 'no record of a previous build');
  list([['src/a.ts', a.size, a.mtimeMs]]);
  assert.equal(staleReason(manifest, dir), null);
  utimesSync(path.join(dir, 'src', 'a.ts'), a.atime, new Date(a.mtimeMs + 1000));
  assert.equal(staleReason(manifest, dir), 'src/a.ts changed');
  list([['src/a.ts', a.size + 1, a.mtimeMs + 1000]]);
  assert.equal(staleReason(manifest, dir), 'src/a.ts changed', 'same time, another size');
  rmSync(path.join(dir, 'dist', 'cli.js'));
  list([['src/a.ts', a.size, statSync(path.join(dir, 'src', 'a.ts')).mtimeMs]]);
  assert.equal(staleReason(manifest, dir), 'dist/cli.js is missing');
  rmSync(path.join(dir, 'src', 'a.ts'));
  assert.equal(staleReason(manifest, dir), 'src/a.ts changed', 'a deleted input');
});
