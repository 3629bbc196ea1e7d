#!/usr/bin/env node
// The `rewardsmith` command. The CLI is bundled into dist/ by `npm run build` (run by `npm ci` through
// `prepare`); a missing or stale-free checkout builds it on first use so `npx rewardsmith` always works.
const path = require('node:path');
const fs = require('node:fs');
const root = path.join(__dirname, '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
if (!fs.existsSync(cli)) {
  const { status } = require('node:child_process').spawnSync(process.execPath, [path.join(root, 'build.mjs')], { cwd: root, stdio: 'inherit' });
  if (status !== 0 || !fs.existsSync(cli)) {
    process.stderr.write(`rewardsmith: could not build ${cli}; run \`npm run build\` and look at its errors.\n`);
    process.exit(2);
  }
}
// REWARDSMITH_DEBUG=1 prints an unexpected error's stack (runner/src/args.ts): mapped through the bundle's source
// map, so that it names runner/src/ files and lines rather than positions in the whitespace-minified bundle. Only
// then: Node reads and parses the 30 MB map when it compiles the bundle (about +0.9 CPU s a command, measured on
// `train --help`), and it maps only modules loaded by require, not the code cache's vm.Script. The npm package
// and the extension leave the map out (it would double what they install), so there the stack stays unmapped,
// and the command says so rather than let the positions pass for source lines.
if (process.env.REWARDSMITH_DEBUG === '1') {
  if (fs.existsSync(`${cli}.map`)) process.setSourceMapsEnabled(true);
  else
    process.stderr.write(
      `rewardsmith: REWARDSMITH_DEBUG=1: this installation has no ${path.basename(cli)}.map (packages leave the source map out), so stacks name positions in ${cli}, not runner/src/ lines; a checkout's \`npm run build\` has the map\n`,
    );
  require(cli);
} else runWithCodeCache(cli);

/**
 * Runs the bundle as `require(file)` would, through V8's code cache: compiling the 17 MB bundle costs every
 * command 0.2–0.7 s, reading the cache about 40 ms. The cache lives beside the bundle, named by the bundle's
 * size and modification time (V8 itself checks only the length of the source), and is written after the first
 * run of a build, when it also holds the functions that run compiled. Any failure falls back to plain
 * compilation: the cache only ever saves time.
 */
function runWithCodeCache(file) {
  const Module = require('node:module');
  const vm = require('node:vm');
  let source;
  let cacheFile = null;
  let cached;
  try {
    const stat = fs.statSync(file);
    source = fs.readFileSync(file, 'utf8');
    cacheFile = `${file}.${stat.size}-${Math.floor(stat.mtimeMs)}-${process.version}.v8cache`;
    cached = fs.existsSync(cacheFile) ? fs.readFileSync(cacheFile) : undefined;
  } catch {
    return require(file);
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData: cached });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  require.cache[file] = mod;
  if (cached === undefined || script.cachedDataRejected) {
    process.once('exit', () => {
      try {
        const dir = path.dirname(file);
        const stem = `${path.basename(file)}.`;
        for (const old of fs.readdirSync(dir)) if (old.startsWith(stem) && old.endsWith('.v8cache')) fs.rmSync(path.join(dir, old), { force: true });
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile);
      } catch {
        // a read-only install: every run compiles, as without the cache
      }
    });
  }
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
}
