// The layer diagram of ARCHITECTURE.md, enforced: reads the imports (static, `export … from`, `import()`,
// `require()`) of every source file under protocol/, runner/, language-server/ and extension/ and checks which module
// may import which. A module is a top-level folder, or a direct child (file or folder) of a `src/`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const TOP = ['protocol', 'runner', 'language-server', 'extension'] as const;

/**
 * runner/src's layers, top to bottom: a module imports only modules of lower layers, never one of its own
 * layer. A module that is not listed here is still held to "no cycles"; list it when you add it (and in
 * ARCHITECTURE.md).
 */
const RUNNER_LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['dispatch'],
  ['report', 'table'],
  ['llm'],
  ['analyze', 'playback'],
  ['lint'],
  ['probe'],
  ['sweep', 'pretrain'],
  ['runs'],
  ['env', 'ppo', 'reward'],
  ['events', 'patch-target'],
  ['records', 'tasks'],
  ['files'],
  ['args', 'stats', 'diff', 'svg'],
  ['seeds', 'escape', 'threads'],
  ['schema', 'task-list'],
];

/** The only runner and language-server modules the VS Code extension may import: the shared protocols. */
const EXTENSION_MAY_IMPORT = new Set([
  'protocol/src/lsp', // custom LSP requests and notifications, shared with the language server
  'runner/src/events', // the runner's stdout event stream
  'runner/src/records', // the files a run writes
  'runner/src/patch-target', // the one rule for which file a suggestion's patch may change (the editor's Apply and `apply`)
  'runner/src/task-list', // the built-in task list for the task picker and the `// task:` header (no game data)
  'runner/src/diff', // the unified diffs that analyzer suggestions carry
  'runner/src/stats', // the one format of rates and of differences between them (records already build on it)
  'runner/src/escape', // the one markup escape (the sweep panel's HTML, as the report's)
]);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) sourceFiles(file, out);
    else if (/\.(ts|mts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(file);
  }
  return out;
}

/** `runner/src/env` for runner/src/env/sim/vec.ts, `runner/src/cli` for runner/src/cli.ts, `runner` for runner/test/x.ts. */
function moduleOf(file: string): string {
  const [top, second, child] = path.relative(ROOT, file).split(path.sep);
  if (second === 'src' && child) return `${top}/src/${child.replace(/\.(ts|js)$/, '')}`;
  return top!;
}

interface ImportEdge {
  from: string; // file, relative to the root
  to: string;
  fromModule: string;
  toModule: string;
}

function importEdges(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const top of TOP) {
    for (const file of sourceFiles(path.join(ROOT, top))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue; // packages
        const target = path.resolve(path.dirname(file), fileName);
        const resolved = ['', '.ts', '.js', '/index.ts'].map((ext) => target + ext).find((f) => existsSync(f) && statSync(f).isFile()) ?? target;
        edges.push({ from: path.relative(ROOT, file), to: path.relative(ROOT, resolved), fromModule: moduleOf(file), toModule: moduleOf(resolved) });
      }
    }
  }
  return edges;
}

const EDGES = importEdges();
const moduleEdges = (filter: (e: ImportEdge) => boolean) => EDGES.filter((e) => e.fromModule !== e.toModule && filter(e));
const describeEdge = (e: ImportEdge) => `${e.from} imports ${e.to}`;

/** One cycle in the module graph, as `a -> b -> … -> a`, or undefined. */
function findCycle(edges: ImportEdge[]): string | undefined {
  const next = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!next.has(e.fromModule)) next.set(e.fromModule, new Set());
    next.get(e.fromModule)!.add(e.toModule);
  }
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (m: string): string | undefined => {
    if (state.get(m) === 'done') return undefined;
    if (state.get(m) === 'open') return [...stack.slice(stack.indexOf(m)), m].join(' -> ');
    state.set(m, 'open');
    stack.push(m);
    for (const n of next.get(m) ?? []) {
      const cycle = visit(n);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(m, 'done');
    return undefined;
  };
  for (const m of next.keys()) {
    const cycle = visit(m);
    if (cycle) return cycle;
  }
  return undefined;
}

const topOf = (module: string) => module.split('/')[0]!;

describe('layers', () => {
  it('reads the imports of every module (the test would pass vacuously otherwise)', () => {
    const modules = new Set(EDGES.map((e) => e.fromModule));
    for (const m of ['runner', 'runner/src/cli', 'runner/src/runs', 'runner/src/lint', 'language-server/src/server', 'extension/src/extension'])
      assert.ok(modules.has(m), `no imports read from ${m}`);
  });

  it('no cycles between the top-level folders', () => {
    const edges = moduleEdges((e) => topOf(e.fromModule) !== topOf(e.toModule)).map((e) => ({
      ...e,
      fromModule: topOf(e.fromModule),
      toModule: topOf(e.toModule),
    }));
    assert.equal(findCycle(edges), undefined);
  });

  it('no cycles between the modules of each src/', () => {
    for (const top of TOP) {
      const edges = moduleEdges((e) => e.fromModule.startsWith(`${top}/src/`) && e.toModule.startsWith(`${top}/src/`));
      assert.equal(findCycle(edges), undefined, `cycle in ${top}/src`);
    }
  });

  it('the protocol is neutral: it imports nothing of the runner, the language server or the extension', () => {
    const bad = moduleEdges((e) => topOf(e.fromModule) === 'protocol' && topOf(e.toModule) !== 'protocol').map(describeEdge);
    assert.deepEqual(bad, []);
  });

  it('the runner never imports the language server or the extension', () => {
    const bad = moduleEdges((e) => topOf(e.fromModule) === 'runner' && ['language-server', 'extension'].includes(topOf(e.toModule))).map(describeEdge);
    assert.deepEqual(bad, []);
  });

  it('runner/src modules import only the layers below them', () => {
    const layer = new Map<string, number>();
    RUNNER_LAYERS.forEach((mods, i) => mods.forEach((m) => layer.set(`runner/src/${m}`, i)));
    const bad = moduleEdges((e) => {
      const from = layer.get(e.fromModule);
      const to = layer.get(e.toModule);
      return from !== undefined && to !== undefined && to <= from;
    }).map(describeEdge);
    assert.deepEqual(bad, []);
  });

  it('PPO knows only the VecEnv interface of the environments', () => {
    const bad = moduleEdges((e) => e.fromModule === 'runner/src/ppo' && e.toModule === 'runner/src/env' && e.to !== 'runner/src/env/types.ts').map(
      describeEdge,
    );
    assert.deepEqual(bad, []);
  });

  it("the game's shared logic (env/game/) imports neither backend; the teacher and the probes read the simulated world only through env/privileged.ts", () => {
    const backend = /^runner\/src\/env\/(sim|mineflayer)\//;
    const game = EDGES.filter((e) => e.from.startsWith('runner/src/env/game/') && backend.test(e.to)).map(describeEdge);
    assert.deepEqual(game, []);
    const privileged = new Set(['runner/src/env/privileged.ts', 'runner/src/env/types.ts']);
    const teacher = moduleEdges(
      (e) => ['runner/src/pretrain', 'runner/src/probe'].includes(e.fromModule) && e.toModule === 'runner/src/env' && !privileged.has(e.to),
    ).map(describeEdge);
    assert.deepEqual(teacher, []);
  });

  it('the extension talks to the server and the runner only through the shared protocol modules', () => {
    // The extension's tests may also use the runner's test helpers (headless Chromium, a recorded run).
    const testHelper = (e: ImportEdge) => e.from.startsWith('extension/test/') && e.to.startsWith('runner/test/helpers/');
    const bad = moduleEdges(
      (e) => topOf(e.fromModule) === 'extension' && topOf(e.toModule) !== 'extension' && !EXTENSION_MAY_IMPORT.has(e.toModule) && !testHelper(e),
    ).map(describeEdge);
    assert.deepEqual(bad, []);
  });

  it("the language server is an adapter: it does not import the runner's environments, training or CLI", () => {
    const forbidden = ['env', 'ppo', 'runs', 'cli', 'analyze'].map((m) => `runner/src/${m}`);
    const bad = moduleEdges((e) => topOf(e.fromModule) === 'language-server' && forbidden.includes(e.toModule)).map(describeEdge);
    assert.deepEqual(bad, []);
  });

  it('product code stands alone: it never reads ../shared/ or names an issue number', () => {
    const bad: string[] = [];
    for (const top of TOP) {
      for (const file of sourceFiles(path.join(ROOT, top, 'src'))) {
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/\.\.\/shared\/|\bissues?\s*#?\d+/i.test(line)) bad.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    assert.deepEqual(bad, []);
  });

  it('markup escaping has one home (runner/src/escape.ts), which the report, the plots and the sweep panel all use', () => {
    // An escape of its own is a string that turns & into &amp;: a twin that may drift (a quote left out).
    const home = 'runner/src/escape.ts';
    const twins: string[] = [];
    for (const top of TOP) {
      for (const file of sourceFiles(path.join(ROOT, top, 'src'))) {
        const name = path.relative(ROOT, file);
        if (name !== home && /['"`]&amp;['"`]/.test(readFileSync(file, 'utf8'))) twins.push(name);
      }
    }
    assert.deepEqual(twins, []);
    for (const user of ['runner/src/report/html.ts', 'runner/src/svg.ts', 'extension/src/sweep-view.ts'])
      assert.ok(
        EDGES.some((e) => e.from === user && e.to === home),
        `${user} does not import ${home}`,
      );
  });

  it('finds a cycle when there is one (the checker itself)', () => {
    const edge = (a: string, b: string): ImportEdge => ({ from: a, to: b, fromModule: a, toModule: b });
    assert.equal(findCycle([edge('a', 'b'), edge('b', 'c'), edge('c', 'a')]), 'a -> b -> c -> a');
    assert.equal(findCycle([edge('a', 'b'), edge('b', 'c'), edge('a', 'c')]), undefined);
  });
});

describe('the repository', () => {
  it('holds no scratch files (*.tmp.*, scratch.*) among its tracked files', (t) => {
    const r = spawnSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) {
      t.skip('not a git checkout');
      return;
    }
    assert.deepEqual(
      r.stdout.split('\n').filter((f) => /(^|\/)(scratch\.[^/]*|[^/]+\.tmp\.[^/]+)$/.test(f)),
      [],
    );
  });
});
