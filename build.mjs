// One build for everything: esbuild bundles the thin VS Code client, the language server, the runner CLI
// and the runner's worker entry points into dist/, one bundle each, with their dependencies inside
// (TypeScript, minecraft-data, the prismarine simulator stack, TensorFlow.js and its wasm backend). What
// cannot be JavaScript stays a file beside the bundles: isolated-vm's native addon, the TensorFlow.js .wasm
// binaries, TypeScript's lib.*.d.ts (the language server type-checks reward files against them) and Chart.js's
// standalone build (inlined into `rewardsmith report` pages). The TypeScript server plugin the extension
// contributes is built as a package of its own (dist/rewardsmith-ts-plugin/).
// External, and not shipped in the .vsix: the mineflayer backend's stack (mineflayer, flying-squid and the
// prismarine packages only it loads), the optional native TensorFlow.js backends, and esbuild (only used when
// the runner runs from sources).
// Every output is written to a temporary file beside it and renamed over the old one, never rewritten in
// place: a training that is running keeps the files it started with (its sandbox host has the native addon
// mapped; truncating that file under it ended the host with SIGBUS).
// The VS Code client is thin: no game data (it lists tasks from runner/src/task-list.ts, which holds none) and
// its whitespace and syntax minified (identifiers kept, for readable stack traces), so it loads fast on
// activation; extension/test/bundle.test.ts builds it with EXTENSION_BUILD and holds it under 1 MB.
// `node build.mjs --if-stale` (what `npm start` runs) builds only when an input changed since the last build: every
// file the bundles were made of (esbuild's metafile), every file copied beside them, this script and the lock files, by
// size and modification time, listed in dist/.build-inputs.json; `npm ci` has just built, so `npm start` does not
// build again.
// `import`ing this file builds nothing: it builds when run (`node build.mjs`).
import * as esbuild from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const watch = process.argv.includes('--watch');
const ifStale = process.argv.includes('--if-stale');
const require = createRequire(import.meta.url);
const GAME_VERSION = '1.16.5';
// pyodide loads its interpreter (pyodide.asm.wasm, python_stdlib.zip) from its own folder: dist/pyodide/ (see
// PYODIDE_FILES) beside the bundles, node_modules/pyodide from sources.
const external = ['vscode', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'mineflayer', 'flying-squid', 'esbuild', 'playwright-core', 'pyodide'];

// Node entry points: [source, output name]. Workers are separate bundles because they are loaded by path.
const nodeEntries = {
  server: 'language-server/src/server.ts',
  cli: 'runner/src/cli.ts',
  'sandbox-host': 'runner/src/reward/sandbox-host.ts',
  'python-host': 'runner/src/reward/python-host.ts',
  'env-worker': 'runner/src/env/worker.ts',
  'replay-worker': 'runner/src/playback/worker.ts',
  'value-worker': 'runner/src/ppo/value-worker.ts',
};
const browserEntries = {
  dashboard: 'extension/src/dashboard/main.ts',
};

/**
 * minecraft-data's `data.js` maps every version of the game to its JSON files (hundreds of MB in all); the
 * bundles get a copy of it with only the Java Edition version the product plays, so only its JSON is bundled.
 */
const minecraftDataOneVersion = {
  name: 'minecraft-data-one-version',
  setup(build) {
    build.onLoad({ filter: /[\\/]minecraft-data[\\/]data\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const start = source.indexOf(`    '${GAME_VERSION}': {`);
      if (start < 0) throw new Error(`${args.path}: no pc entry for ${GAME_VERSION}`);
      const end = source.indexOf('\n    },', start) + '\n    },'.length;
      const entry = source.slice(start, end);
      return { contents: `module.exports =\n{\n  'pc': {\n${entry}\n  },\n  'bedrock': {}\n}\n`, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

/**
 * One wrapper of TypeScript for the whole bundle: esbuild wraps a CommonJS package once per module that imports
 * it (`__toESM`: a getter defined per export, 2,244 for TypeScript), and 30 modules import it (0.17 CPU s of every
 * command's start-up). Our modules import this one ES module instead, which imports TypeScript once.
 */
const typescriptOnce = {
  name: 'typescript-once',
  setup(build) {
    build.onResolve({ filter: /^typescript$/ }, (args) =>
      args.namespace === 'typescript-once' ? undefined : { path: 'typescript', namespace: 'typescript-once' },
    );
    build.onLoad({ filter: /.*/, namespace: 'typescript-once' }, () => ({
      contents: "import ts from 'typescript';\nexport default ts;\n",
      resolveDir: path.dirname(fileURLToPath(import.meta.url)),
      loader: 'js',
    }));
  },
};

/**
 * prismarine-nbt loaded on first use: building its three NBT codecs and protodef's schema validator (ajv) at
 * load costs every thread that loads prismarine-block (the CLI and each env worker) about 0.2 CPU s, and the
 * simulator never reads or writes NBT (only a block entity's methods do). The package itself runs unchanged.
 */
const lazyNbt = {
  name: 'lazy-prismarine-nbt',
  setup(build) {
    build.onResolve({ filter: /^prismarine-nbt$/ }, (args) =>
      args.namespace === 'lazy-nbt' ? undefined : { path: 'prismarine-nbt', namespace: 'lazy-nbt', pluginData: args.resolveDir },
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-nbt' }, (args) => ({
      contents:
        "let nbt;\nconst load = () => (nbt ??= require('prismarine-nbt'));\n" +
        'module.exports = new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load(), ownKeys: () => Reflect.ownKeys(load()), getOwnPropertyDescriptor: (_, key) => Object.getOwnPropertyDescriptor(load(), key) });\n',
      resolveDir: args.pluginData,
      loader: 'js',
    }));
  },
};

/** What Pyodide's loader reads at start-up (in Node, CommonJS): everything else in its package is for browsers or types. */
export const PYODIDE_FILES = ['pyodide.js', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];

const TS_PLUGIN = { name: 'rewardsmith-ts-plugin', source: 'extension/src/ts-plugin.ts', dir: 'dist/rewardsmith-ts-plugin' };

/** Replaces `file` by a rename, so that a process holding or mapping the old file keeps it whole. */
function writeAtomic(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, contents);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Sources of the files copied beside the bundles (inputs of the build, like the bundles' own). */
const copiedSources = [];
const copyAtomic = (from, to) => {
  copiedSources.push(from);
  writeAtomic(to, readFileSync(from));
};

/** Where the last build lists its inputs (path, size, modification time) and its outputs. */
export const BUILD_INPUTS = path.join('dist', '.build-inputs.json');

/** [path, size, mtimeMs] of a file, or null when it is not a file. */
function fileStamp(file) {
  try {
    const st = statSync(file);
    return st.isFile() ? [file, st.size, st.mtimeMs] : null;
  } catch {
    return null;
  }
}

/**
 * Why `manifest` (BUILD_INPUTS' file) is out of date, or null when every input it lists has the size and
 * modification time it had and every output is there. Paths relative to `root`.
 */
export function staleReason(manifest, root = '.') {
  let listed;
  try {
    listed = JSON.parse(readFileSync(path.join(root, manifest), 'utf8'));
  } catch {
    return 'no record of a previous build';
  }
  if (!Array.isArray(listed?.inputs) || !Array.isArray(listed?.outputs)) return 'no record of a previous build';
  for (const [file, size, mtimeMs] of listed.inputs) {
    const now = fileStamp(path.join(root, file));
    if (!now || now[1] !== size || now[2] !== mtimeMs) return `${file} changed`;
  }
  for (const file of listed.outputs) if (!existsSync(path.join(root, file))) return `${file} is missing`;
  return null;
}

/** Lists the inputs and outputs of a build that has just finished (esbuild's metafiles, the copied files). */
function recordInputs(results) {
  // npm gives every installed file the same modification time: the lock files say when a dependency changed.
  const inputs = new Set([fileURLToPath(import.meta.url), 'package.json', 'package-lock.json', 'node_modules/.package-lock.json', ...copiedSources]);
  const outputs = new Set();
  for (const r of results) {
    // Inputs a plugin made up (a namespace, not a file) are derived from real files and this script.
    for (const file of Object.keys(r.metafile?.inputs ?? {})) inputs.add(file);
    for (const file of Object.keys(r.metafile?.outputs ?? {})) outputs.add(file);
  }
  const stamps = [...inputs].map((f) => fileStamp(path.relative('.', f))).filter((s) => s !== null);
  writeAtomic(BUILD_INPUTS, `${JSON.stringify({ inputs: stamps, outputs: [...outputs] })}\n`);
}

/** esbuild hands its outputs to this plugin (`write: false`) instead of writing over the old files itself. */
const writeOutputsAtomically = {
  name: 'write-outputs-atomically',
  setup(build) {
    build.onEnd((result) => {
      for (const out of result.outputFiles ?? []) writeAtomic(out.path, out.contents);
    });
  },
};

const pick = (entries) => Object.fromEntries(Object.entries(entries).filter(([, src]) => existsSync(src)));

const common = { bundle: true, sourcemap: true, logLevel: 'warning', outdir: 'dist', legalComments: 'none', write: false, metafile: true };

/** The VS Code client: its own build, so that it alone is minified (its source map keeps the sources). */
export const EXTENSION_BUILD = {
  ...common,
  entryPoints: pick({ extension: 'extension/src/extension.ts' }),
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external,
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [minecraftDataOneVersion, writeOutputsAtomically],
};

const builds = [
  EXTENSION_BUILD,
  {
    ...common,
    entryPoints: pick(nodeEntries),
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external,
    // Whitespace and comments out (identifiers kept, as in the extension's): cli.js 17.9 → 11.7 MB, which every
    // command reads and compiles at start-up (reading it alone 0.35–0.45 → 0.12 CPU s).
    minifyWhitespace: true,
    plugins: [minecraftDataOneVersion, typescriptOnce, lazyNbt, writeOutputsAtomically],
    // isolated-vm's `require('./out/isolated_vm')` is its native addon: copied beside the bundle.
    resolveExtensions: ['.ts', '.js', '.json', '.node'],
    loader: { '.node': 'copy' },
    assetNames: 'native/[name]',
  },
  { ...common, entryPoints: pick(browserEntries), platform: 'browser', target: 'es2022', format: 'iife', plugins: [writeOutputsAtomically] },
  // The TypeScript server plugin, as the package tsserver resolves by name (package.mjs ships it as
  // node_modules/rewardsmith-ts-plugin/ in the .vsix). tsserver passes it its own TypeScript and calls
  // `module.exports` itself, so the default export becomes module.exports.
  {
    ...common,
    entryPoints: pick({ index: TS_PLUGIN.source }),
    sourcemap: false,
    outdir: TS_PLUGIN.dir,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    external: ['typescript'],
    footer: { js: 'module.exports = module.exports.default;' },
    plugins: [writeOutputsAtomically],
  },
].filter((b) => Object.keys(b.entryPoints).length > 0);

/** The files the bundles load by path at run time, copied beside them. */
function copyRuntimeFiles() {
  mkdirSync('dist', { recursive: true });
  const tsLib = path.dirname(require.resolve('typescript'));
  for (const f of readdirSync(tsLib).filter((f) => /^lib\..*\.d\.ts$/.test(f))) copyAtomic(path.join(tsLib, f), path.join('dist', f));
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  for (const f of readdirSync(wasmDir).filter((f) => f.endsWith('.wasm'))) copyAtomic(path.join(wasmDir, f), path.join('dist', f));
  copyAtomic(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), path.join('dist', 'chart.umd.min.js'));
  copyAtomic(require.resolve('gifenc'), path.join('dist', 'gifenc.js'));
  // The Python parser's WebAssembly (runner/src/reward/python-syntax.ts looks beside the bundle first).
  copyAtomic(require.resolve('web-tree-sitter/web-tree-sitter.wasm'), path.join('dist', 'web-tree-sitter.wasm'));
  copyAtomic(require.resolve('tree-sitter-python/tree-sitter-python.wasm'), path.join('dist', 'tree-sitter-python.wasm'));
  // Pyodide (the Python rewards' interpreter) as a folder of its own: its loader finds the interpreter, the
  // standard library and the lock file beside itself (runner/src/reward/python-host.ts loads it from there).
  const pyodideDir = path.dirname(require.resolve('pyodide'));
  for (const f of PYODIDE_FILES) copyAtomic(path.join(pyodideDir, f), path.join('dist', 'pyodide', f));
  const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
  writeAtomic(path.join(TS_PLUGIN.dir, 'package.json'), `${JSON.stringify({ name: TS_PLUGIN.name, version, private: true, main: 'index.js' }, null, 2)}\n`);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const stale = ifStale ? staleReason(BUILD_INPUTS) : 'asked to build';
  if (stale === null) {
    console.log(`build: dist/ is up to date (no input changed since the last build; \`node build.mjs\` builds anyway)`);
  } else {
    rmSync(BUILD_INPUTS, { force: true });
    copyRuntimeFiles();
    if (watch) {
      for (const b of builds) await (await esbuild.context(b)).watch();
    } else {
      recordInputs(await Promise.all(builds.map((b) => esbuild.build(b))));
    }
  }
}
