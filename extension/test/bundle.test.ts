// The VS Code client is thin: VS Code loads its bundle on activation, before the first CodeLens shows. Built
// here with build.mjs's own configuration (not written to dist/), it must hold no game data (minecraft-data
// came in through the task list: tasks → schema → minecraft-data, 2.9 of the bundle's 4.2 MB) and stay under
// 1 MB.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = path.join(__dirname, '..', '..');
const MAX_BYTES = 1_000_000;
/** Packages of the game and the simulator: the runner's, never the editor client's. */
const GAME_PACKAGES = /node_modules\/(minecraft-data|prismarine-[^/]+|mineflayer|flying-squid)\//;

test(`the extension bundle holds no game data and is under ${MAX_BYTES.toLocaleString('en-US')} bytes`, async () => {
  const { EXTENSION_BUILD } = (await import(pathToFileURL(path.join(ROOT, 'build.mjs')).href)) as { EXTENSION_BUILD: esbuild.BuildOptions };
  assert.ok(Object.keys(EXTENSION_BUILD.entryPoints as Record<string, string>).length > 0, 'build.mjs found no extension entry point');
  const result = await esbuild.build({
    ...EXTENSION_BUILD,
    absWorkingDir: ROOT,
    logLevel: 'silent',
    write: false,
    metafile: true,
    sourcemap: false,
    // Everything but the plugin that writes the outputs into dist/.
    plugins: (EXTENSION_BUILD.plugins ?? []).filter((p) => p.name !== 'write-outputs-atomically'),
  });
  const bundle = result.outputFiles.find((f) => f.path.endsWith('extension.js'));
  assert.ok(bundle, 'no extension.js among the outputs');
  const inputs = Object.values(result.metafile.outputs).find((o) => o.entryPoint)!.inputs;
  const game = Object.keys(inputs).filter((file) => GAME_PACKAGES.test(file));
  const largest = Object.entries(inputs)
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .slice(0, 5)
    .map(([file, { bytesInOutput }]) => `${file} ${bytesInOutput.toLocaleString('en-US')}`);
  assert.deepEqual(game.slice(0, 5), [], `game data in the extension bundle; its largest inputs: ${largest.join(', ')}`);
  assert.ok(
    bundle.contents.length < MAX_BYTES,
    `extension.js is ${bundle.contents.length.toLocaleString('en-US')} bytes; its largest inputs: ${largest.join(', ')}`,
  );
});
