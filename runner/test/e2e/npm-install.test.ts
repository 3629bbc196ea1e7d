// Installing the CLI outside the checkout, as the README says: `npm pack` in the checkout, `npm i -g` of the
// tarball into a fresh prefix, then `rewardsmith` used from an unrelated folder — lint, a tiny training run
// with its report, the language server's help. Slow (the install builds isolated-vm): part of `npm run test:e2e`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/tmp';

const ROOT = path.join(__dirname, '..', '..', '..');

test('npm pack → npm i -g → rewardsmith works from a temporary folder', { timeout: 1_800_000 }, () => {
  const dir = tempDir('rewardsmith-install-');
  execFileSync('npm', ['pack', ROOT, '--pack-destination', dir], { cwd: dir, stdio: 'pipe' });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  const prefix = path.join(dir, 'prefix');
  execFileSync('npm', ['i', '-g', '--no-audit', '--no-fund', '--prefix', prefix, path.join(dir, tarball)], { cwd: dir, stdio: 'pipe' });
  const bin = path.join(prefix, 'bin', 'rewardsmith');
  assert.ok(existsSync(bin), `${bin} is installed`);
  const work = path.join(dir, 'work');
  execFileSync('mkdir', ['-p', work]);
  copyFileSync(path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts'), path.join(work, 'tree.reward.ts'));
  const run = (...args: string[]) => spawnSync(bin, args, { cwd: work, encoding: 'utf8', timeout: 900_000 });

  const help = run('--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /usage: rewardsmith <command>/);
  const lint = run('lint', 'tree.reward.ts');
  assert.equal(lint.status, 0, lint.stdout + lint.stderr);
  assert.match(lint.stdout, /1 of 1 file\(s\) linted, 0 error\(s\)/);
  const lsp = run('lsp', '--help');
  assert.equal(lsp.status, 0, lsp.stderr);

  const train = run(
    'train',
    'tree.reward.ts',
    '--task',
    'approach-tree',
    '--steps',
    '256',
    '--envs',
    '4',
    '--eval-episodes',
    '2',
    '--backend',
    'cpu',
    '--out',
    'runs/a',
  );
  assert.equal(train.status, 0, train.stdout + train.stderr);
  assert.match(train.stdout.trim().split('\n').pop()!, /^report: runs\/a\/report\.html · next: rewardsmith analyze runs\/a/);
  assert.match(readFileSync(path.join(work, 'runs/a/report.html'), 'utf8'), /Chart\.js|chart\.js/i);
  assert.ok(existsSync(path.join(work, 'runs/a/metrics.csv')));
});
