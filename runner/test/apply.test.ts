// `rewardsmith apply RUN --suggestion ID`: the analyzer's patch lands in the user's reward file (the one the
// run recorded), after the diff is shown; a file changed since the run, an unknown id or a patch that no
// longer fits is refused and nothing is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { analyzeRun } from '../src/analyze/analyze';
import { readSuggestions, RUN_FILES, RunRecordError } from '../src/records';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');

/** The lava-deaths run, its summary pointing at a user's copy of the reward, analysed. */
async function analysedRun(): Promise<{ run: string; user: string; original: string }> {
  const dir = tempDir('rewardsmith-apply-');
  const run = path.join(dir, 'run');
  cpSync(path.join(__dirname, 'fixtures/runs/lava-deaths'), run, { recursive: true });
  const user = path.join(dir, 'explore-diamond.reward.ts');
  const original = readFileSync(path.join(run, RUN_FILES.rewardCopy), 'utf8');
  writeFileSync(user, original);
  const summaryFile = path.join(run, RUN_FILES.summary);
  writeFileSync(summaryFile, JSON.stringify({ ...JSON.parse(readFileSync(summaryFile, 'utf8')), reward_file: user }, null, 2));
  const analysis = await analyzeRun(run);
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ version: 1, ...analysis }, null, 2));
  return { run, user, original };
}

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'runner/src/cli.ts'), 'apply', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

test("apply shows the diff and patches the reward file the run recorded, not the run's copy", async () => {
  const { run, user, original } = await analysedRun();
  const dry = cli(run, '--suggestion', 'death-lava', '--dry-run');
  assert.equal(dry.status, 0, dry.stderr);
  assert.equal(readFileSync(user, 'utf8'), original, 'a dry run writes nothing');
  const r = cli(run, '--suggestion', 'death-lava');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^--- a\/reward\.ts\n\+\+\+ b\/reward\.ts\n@@ /);
  assert.match(r.stdout, new RegExp(`applied death-lava to ${user.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
  const patched = readFileSync(user, 'utf8');
  assert.notEqual(patched, original);
  const added = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .map((l) => l.slice(1));
  for (const line of added) assert.ok(patched.split('\n').includes(line), `patched file lacks: ${line}`);
  assert.equal(readFileSync(path.join(run, RUN_FILES.rewardCopy), 'utf8'), original, "the run's copy stays as trained");
});

test('apply refuses a reward file that changed since the run, an unknown suggestion and a missing analysis', async () => {
  const { run, user, original } = await analysedRun();
  const edited = original.replace(/\n/, '\n// my edit after training\n');
  writeFileSync(user, edited);
  const changed = cli(run, '--suggestion', 'death-lava');
  assert.equal(changed.status, 1);
  assert.match(
    changed.stderr,
    /^rewardsmith apply: .*explore-diamond\.reward\.ts changed since the run trained on it .*nothing was changed\. Run `rewardsmith analyze .* --reward .*` for patches to the file as it is now/,
  );
  assert.equal(readFileSync(user, 'utf8'), edited);
  const typo = cli(run, '--suggestion', 'death-lvaa');
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /--suggestion death-lvaa: no such suggestion in .* \(did you mean death-lava\?\)/);
  const none = cli(path.join(run, 'eval'), '--suggestion', 'death-lava');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /suggestions\.json: no analysis yet; run `rewardsmith analyze/);
  const missingId = cli(run);
  assert.equal(missingId.status, 2);
  assert.match(missingId.stderr, /^rewardsmith apply: --suggestion ID is required/);
});

test('a malformed suggestions.json is refused with the file and the suggestion at fault, by apply and by the one reader', async (t) => {
  const { run, user, original } = await analysedRun();
  t.after(() => rmSync(path.dirname(run), { recursive: true, force: true }));
  const file = path.join(run, RUN_FILES.suggestions);
  const analysis = JSON.parse(readFileSync(file, 'utf8'));
  analysis.suggestions[1].lines = 'near the top';
  writeFileSync(file, JSON.stringify(analysis));
  const expected = `${file}: suggestions[1] (${analysis.suggestions[1].id}): lines must be [first, last], 1-based line numbers`;
  assert.throws(
    () => readSuggestions(run),
    (err: Error) => err instanceof RunRecordError && err.message === expected,
  );
  const r = cli(run, '--suggestion', 'death-lava');
  assert.equal(r.status, 1);
  assert.equal(r.stderr, `rewardsmith apply: ${expected}\n`);
  assert.equal(readFileSync(user, 'utf8'), original, 'nothing is written');
});

/** A recorded run copied with its summary pointing at a user's copy of its reward. */
function userRun(fixture: string): { run: string; user: string; original: string } {
  const dir = tempDir('rewardsmith-apply-');
  const run = path.join(dir, 'run');
  cpSync(path.join(__dirname, 'fixtures/runs', fixture), run, { recursive: true });
  const user = path.join(dir, `${fixture}.reward.ts`);
  const original = readFileSync(path.join(run, RUN_FILES.rewardCopy), 'utf8');
  writeFileSync(user, original);
  const summaryFile = path.join(run, RUN_FILES.summary);
  writeFileSync(summaryFile, JSON.stringify({ ...JSON.parse(readFileSync(summaryFile, 'utf8')), reward_file: user }, null, 2));
  return { run, user, original };
}

test('several suggestions that change different lines are applied in one go; two that change the same lines are refused, nothing written', async () => {
  const { run, user, original } = userRun('spin-in-place');
  const analysis = await analyzeRun(run);
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ version: 1, ...analysis }, null, 2));
  const added = (id: string) =>
    analysis.suggestions
      .find((s) => s.id === id)!
      .diff!.split('\n')
      .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
      .map((l) => l.slice(1));

  const clash = cli(run, '--suggestion', 'stuck', '--suggestion', 'target-lost');
  assert.equal(clash.status, 1);
  assert.match(clash.stderr, /the patch of target-lost does not apply after stuck .*they change the same lines\); nothing was changed\. Apply stuck first/);
  assert.equal(readFileSync(user, 'utf8'), original, 'all or none');

  // RUN last, after the list of ids, works too.
  const both = cli('--suggestion', 'stuck', 'turning-farmed', run);
  assert.equal(both.status, 0, both.stderr);
  assert.match(both.stdout, /applied stuck, turning-farmed to /);
  const patched = readFileSync(user, 'utf8').split('\n');
  for (const line of [...added('stuck'), ...added('turning-farmed')]) assert.ok(patched.includes(line), `patched file lacks: ${line}`);
});

test('re-analysing with the patched reward compares returns of that reward (re-run), not the recorded ones of the trained reward', async () => {
  // The weak approach-tree run: with its own reward, failing pays more than succeeding (recorded returns).
  const { run, user } = userRun('weak-tree');
  const first = await analyzeRun(run);
  assert.match(first.suggestions.find((s) => s.id === 'reward-gamed')!.message, /Failing pays more than succeeding: mean return/);
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ version: 1, ...first }, null, 2));
  assert.equal(cli(run, '--suggestion', 'extreme-pitch').status, 0);
  // The second analysis, of the file as patched: its returns are re-run over the recorded steps.
  const second = await analyzeRun(run, { rewardFile: user });
  const gamed = second.suggestions.find((s) => s.id === 'reward-gamed')!;
  assert.match(gamed.message, /succeeding with the reward analysed \(its returns re-run over the recorded last steps of every episode/);
  const [failedMean] = /mean return (-?[\d.]+) over 22 failed/.exec(gamed.message)!.slice(1);
  const [recordedMean] = /mean return (-?[\d.]+) over 22 failed/.exec(first.suggestions.find((s) => s.id === 'reward-gamed')!.message)!.slice(1);
  assert.notEqual(failedMean, recordedMean, "the old reward's returns are not reported beside the new reward's re-run figures");
});
