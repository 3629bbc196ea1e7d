// `npm run package`: builds, then packs the extension into rewardsmith-<version>.vsix with @vscode/vsce.
// Everything the extension runs is in dist/: one bundle each for the client, the language server, the runner
// CLI, the environment worker and the reward sandbox's child (dependencies inside, minecraft-data reduced to
// the game version we play), plus the files that cannot be JavaScript: isolated-vm's native addon
// (dist/native/), Pyodide's interpreter and standard library (dist/pyodide/), the Python parser's .wasm, the
// TensorFlow.js .wasm binaries, TypeScript's lib.*.d.ts and Chart.js's standalone build.
// node_modules holds one package only: the TypeScript server plugin (rewardsmith-ts-plugin), which VS Code's
// TypeScript service resolves by package name from the extension's node_modules.
// Not shipped: mineflayer + flying-squid (the real-server backend, tens of MB of dependencies only
// `--env mineflayer` loads; point `rewardsmith.runnerPath` at a checkout to use it) and
// @tensorflow/tfjs-node(-gpu) (optional native backends; the runner falls back to wasm, then cpu).
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
const stage = path.join(root, 'dist', 'package');
/** What ships from dist/: bundles (not their source maps) and the runtime files beside them. */
const SHIPPED = /(\.js|\.wasm|^lib\..*\.d\.ts|\.node)$/;

execFileSync(process.execPath, [path.join(root, 'build.mjs')], { cwd: root, stdio: 'inherit' });
rmSync(stage, { recursive: true, force: true });
mkdirSync(path.join(stage, 'dist'), { recursive: true });
for (const sub of ['', 'native']) {
  mkdirSync(path.join(stage, 'dist', sub), { recursive: true });
  for (const f of readdirSync(path.join(root, 'dist', sub)).filter((f) => SHIPPED.test(f)))
    copyFileSync(path.join(root, 'dist', sub, f), path.join(stage, 'dist', sub, f));
}
// Pyodide's files, as build.mjs put them (the interpreter for Python rewards: ~13 MB, ~5 MB packed).
cpSync(path.join(root, 'dist', 'pyodide'), path.join(stage, 'dist', 'pyodide'), { recursive: true });
for (const bundle of ['extension', 'server', 'cli', 'sandbox-host', 'python-host', 'env-worker', 'replay-worker', 'value-worker', 'dashboard']) {
  if (!existsSync(path.join(stage, 'dist', `${bundle}.js`))) throw new Error(`dist/${bundle}.js is missing: the build did not produce it`);
}
if (!readdirSync(path.join(stage, 'dist', 'native')).some((f) => f.endsWith('.node')))
  throw new Error('dist/native/ has no native addon (isolated-vm): the build did not copy it');
const plugin = JSON.parse(readFileSync(path.join(root, 'dist', 'rewardsmith-ts-plugin', 'package.json'), 'utf8'));
if (!existsSync(path.join(root, 'dist', 'rewardsmith-ts-plugin', 'index.js')))
  throw new Error('dist/rewardsmith-ts-plugin/index.js is missing: the build did not produce it');
cpSync(path.join(root, 'dist', 'rewardsmith-ts-plugin'), path.join(stage, 'node_modules', plugin.name), {
  recursive: true,
  filter: (f) => !f.endsWith('.map'),
});
for (const dir of ['prompts', 'snippets']) cpSync(path.join(root, dir), path.join(stage, dir), { recursive: true });
for (const file of ['README.md', 'LICENSE', '.vscodeignore'])
  if (existsSync(path.join(root, file))) copyFileSync(path.join(root, file), path.join(stage, file));

// The staged manifest: the extension's, whose dependencies are inside the bundles, except the plugin package
// (a dependency, so that vsce packs node_modules/rewardsmith-ts-plugin/ and nothing else of node_modules).
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
for (const key of ['devDependencies', 'optionalDependencies', 'dependencies', 'scripts', 'bin', 'files']) delete manifest[key];
manifest.dependencies = { [plugin.name]: plugin.version };
writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

const out = path.join(root, `${manifest.name}-${manifest.version}.vsix`);
const vsce = path.join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(
  process.execPath,
  [vsce, 'package', '--out', out, '--target', `${process.platform}-${process.arch}`, '--skip-license', '--allow-missing-repository', '--allow-star-activation'],
  { cwd: stage, stdio: 'inherit' },
);
const files = execFileSync('unzip', ['-Z1', out], { encoding: 'utf8' }).split('\n').filter(Boolean);
console.log(
  `${path.relative(process.cwd(), out)}: ${(statSync(out).size / 2 ** 20).toFixed(1)} MiB, ${files.length} files, ${files.filter((f) => f.endsWith('.js')).length} .js`,
);
