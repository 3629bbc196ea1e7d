// `npm run package`: builds, then packs the extension into rewardsmith-<version>.vsix with @vscode/vsce.
// The bundles in dist/ carry everything esbuild can bundle. What it cannot (build.mjs's `external` list: the
// isolated-vm native addon, tfjs-core with its wasm backend and .wasm files, minecraft-data's JSON, the
// prismarine physics stack, typescript) ships as node_modules. vsce would walk every production dependency of
// the repo (thousands of files), so this script stages the package instead: the bundles, prompts, snippets,
// and only the runtime closure of the externals, trimmed of maps, typings, docs and duplicate bundle flavours,
// with only minecraft-data's files for the game version we use. vsce then packs the stage.
// Not shipped (documented in the report/README): mineflayer + flying-squid (the real-server backend; point
// `rewardsmith.runnerPath` at a checkout) and @tensorflow/tfjs-node(-gpu) (optional native backends; the
// runner falls back to wasm/cpu).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
const stage = path.join(root, 'dist', 'package');
// esbuild is external only for running from sources (the packaged runner uses the prebuilt dist/sandbox-host.js).
const NOT_SHIPPED = new Set(['vscode', 'mineflayer', 'flying-squid', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', 'esbuild']);
const GAME_VERSION = '1.16.5';
/** Files no runtime loads: maps, typings and sources, docs, the browser/ESM bundle flavours, native sources. */
const TRIMMED = /(\.map|\.ts|\.md|\.markdown|\.min\.js|\.es2017\.js|\.fesm\.js|\.cc|\.cpp|\.h|\.gyp|\.gypi|\.tsbuildinfo)$/i;

function externals() {
  const src = readFileSync(path.join(root, 'build.mjs'), 'utf8');
  const list = /const external = \[([\s\S]*?)\];/.exec(src);
  if (!list) throw new Error('build.mjs: no `const external = [...]` list found');
  return [...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

/** Node's lookup: the nearest node_modules/<name> from `fromDir` upwards. */
function findPackage(name, fromDir) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === path.dirname(dir)) return undefined;
  }
}

/** Every installed package the externals need (dependencies, peer and optional ones that exist), by directory. */
function runtimeClosure(names) {
  const found = new Map();
  const visit = (name, fromDir) => {
    if (NOT_SHIPPED.has(name)) return;
    const dir = findPackage(name, fromDir);
    if (!dir || found.has(dir)) return;
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    found.set(dir, { name, version: pkg.version });
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies })) visit(dep, dir);
  };
  for (const name of names) visit(name, root);
  return found;
}

/** Which files of a package ship. */
function shipped(name, dir) {
  if (name === 'typescript') {
    // The language server type-checks reward files: the compiler and the standard-library typings only.
    return (rel) => rel === 'package.json' || rel === 'lib/typescript.js' || /^lib\/lib\.[^/]*\.d\.ts$/.test(rel);
  }
  if (name === 'minecraft-data') {
    const dataPaths = JSON.parse(readFileSync(path.join(dir, 'minecraft-data/data/dataPaths.json'), 'utf8'));
    const folders = new Set([...Object.values(dataPaths.pc[GAME_VERSION]), 'pc/common', 'bedrock/common'].map((f) => `minecraft-data/data/${f}/`));
    return (rel) =>
      !rel.includes('/') || rel.startsWith('lib/') || rel.startsWith('minecraft-data/schemas/') || rel === 'minecraft-data/data/dataPaths.json' ||
      [...folders].some((f) => rel.startsWith(f) && !rel.slice(f.length).includes('/'));
  }
  return (rel) => !TRIMMED.test(rel);
}

/** Copies a package's shipped files (not its nested node_modules: those are packages of their own). */
function copyPackage(name, from, to) {
  const keep = shipped(name, from);
  const walk = (rel) => {
    for (const entry of readdirSync(path.join(from, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(r);
      } else if (entry.isFile() && keep(r)) {
        mkdirSync(path.dirname(path.join(to, r)), { recursive: true });
        copyFileSync(path.join(from, r), path.join(to, r));
      }
    }
  };
  walk('');
}

execFileSync(process.execPath, [path.join(root, 'build.mjs')], { cwd: root, stdio: 'inherit' });
rmSync(stage, { recursive: true, force: true });
mkdirSync(path.join(stage, 'dist'), { recursive: true });
for (const bundle of readdirSync(path.join(root, 'dist')).filter((f) => f.endsWith('.js'))) copyFileSync(path.join(root, 'dist', bundle), path.join(stage, 'dist', bundle));
for (const bundle of ['extension', 'server', 'cli', 'sandbox-host', 'env-worker', 'dashboard']) {
  if (!existsSync(path.join(stage, 'dist', `${bundle}.js`))) throw new Error(`dist/${bundle}.js is missing: the build did not produce it`);
}
for (const dir of ['prompts', 'snippets']) cpSync(path.join(root, dir), path.join(stage, dir), { recursive: true });
for (const file of ['README.md', 'LICENSE', '.vscodeignore']) if (existsSync(path.join(root, file))) copyFileSync(path.join(root, file), path.join(stage, file));

const closure = runtimeClosure(externals());
for (const [dir, { name }] of closure) copyPackage(name, dir, path.join(stage, path.relative(root, dir)));

// The staged manifest: the extension's, with the shipped top-level packages as its only dependencies (vsce asks
// npm for the production tree and packs exactly that).
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
delete manifest.devDependencies;
delete manifest.optionalDependencies;
delete manifest.scripts;
delete manifest.bin;
delete manifest.files; // npm pack's list for the CLI; the vsix ships the stage
manifest.dependencies = Object.fromEntries(
  [...closure]
    .filter(([dir]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path.relative(root, dir).split(path.sep).join('/')))
    .map(([, { name, version }]) => [name, version])
    .sort(),
);
writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

const out = path.join(root, `${manifest.name}-${manifest.version}.vsix`);
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(process.execPath, [vsce, 'package', '--out', out, '--target', `${process.platform}-${process.arch}`, '--skip-license', '--allow-missing-repository', '--allow-star-activation'], { cwd: stage, stdio: 'inherit' });
console.log(`${path.relative(process.cwd(), out)}: ${(statSync(out).size / 2 ** 20).toFixed(1)} MiB, ${closure.size} runtime packages: ${[...closure.values()].map((p) => p.name).sort().join(', ')}`);
