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
require(cli);
