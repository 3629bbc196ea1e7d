// One build for everything: esbuild bundles the thin VS Code client, the language server, the runner CLI
// and the runner's worker entry points into dist/. Modules that cannot be bundled (native addons, wasm,
// the huge per-version minecraft-data JSON, the Minecraft server stack) stay external and ship in node_modules.
import * as esbuild from 'esbuild';
import { existsSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const external = [
  'vscode', 'isolated-vm', '@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-backend-wasm',
  'minecraft-data', 'mineflayer', 'flying-squid', 'prismarine-physics', 'prismarine-block', 'prismarine-chunk',
  'prismarine-world', 'vec3', 'typescript', 'esbuild',
];

// Node entry points: [source, output name]. Workers are separate bundles because they are loaded by path.
const nodeEntries = {
  extension: 'extension/src/extension.ts',
  server: 'language-server/src/server.ts',
  cli: 'runner/src/cli.ts',
  'sandbox-host': 'runner/src/reward/sandbox-host.ts',
  'env-worker': 'runner/src/env/worker.ts',
};
const browserEntries = {
  dashboard: 'extension/src/dashboard/main.ts',
};

const pick = (entries) => Object.fromEntries(Object.entries(entries).filter(([, src]) => existsSync(src)));

const common = { bundle: true, sourcemap: true, logLevel: 'warning', outdir: 'dist', legalComments: 'none' };
const builds = [
  { ...common, entryPoints: pick(nodeEntries), platform: 'node', target: 'node20', format: 'cjs', external },
  { ...common, entryPoints: pick(browserEntries), platform: 'browser', target: 'es2022', format: 'iife' },
].filter((b) => Object.keys(b.entryPoints).length > 0);

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
