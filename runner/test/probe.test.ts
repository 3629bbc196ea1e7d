// Reward probes end to end: real simulator episodes (the probe bank), the reward replayed on them in the real
// sandbox, and what a user sees: warnings at the line that pays a failure mode, quiet on a well-shaped reward,
// errors where training would stop, and `train` refusing a reward with errors before it writes anything.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { checkReward } from '../src/lint/check';
import { STEP_CODES } from '../src/records';
import { GAME_FACTS } from '../src/schema';
import { BEHAVIOURS, bankFile, probeBank, probeBankAsync, probeReward, replayBank } from '../src/probe/index';
import { statementTotals } from '../src/probe/replay';
import { resolveTask } from '../src/tasks';
import { parseTrainArgs } from '../src/runs/config';
import { cliSession } from './helpers/cli-all';
import { tempDir } from './helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, 'fixtures', 'probe');
const fixture = (name: string) => path.join(FIXTURES, name);
// `rewardsmith ARGS…` through the real dispatcher, this file's command lines in one process (helpers/cli-all.ts).
const session = cliSession(ROOT);
after(() => session.close());
const cli = async (...args: string[]) => {
  const r = await session.run(args);
  return { status: r.code, stdout: r.out, stderr: r.err };
};

/** The lines a fixture marks with `// expect-probe: <code>`, as `line code`. */
function expected(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => [...text.matchAll(/expect-probe: ([\w-]+)/g)].map((m) => `${i + 1} ${m[1]}`));
}

describe('probe bank', () => {
  it('holds successful teacher episodes and every failure mode of the task, on real observations', () => {
    const bank = probeBank(resolveTask('approach-cow'));
    const teacher = bank.episodes.filter((e) => e.behaviour === 'teacher');
    assert.ok(teacher.length >= 1 && teacher.every((e) => e.success), 'no successful teacher episode');
    for (const b of Object.keys(BEHAVIOURS).filter((b) => b !== 'hazard'))
      assert.ok(
        bank.episodes.some((e) => e.behaviour === b),
        `no ${b} episode`,
      );
    assert.ok(bank.names.nearby.includes('cow') && !bank.names.nearby.includes('diamond_ore'));
    // Turning in place changes the yaw and nothing else.
    const turn = bank.episodes.find((e) => e.behaviour === 'turn')!;
    assert.notEqual(turn.obs[5]!.position[3], turn.obs[1]!.position[3]);
    assert.equal(turn.obs[5]!.position[0], turn.obs[1]!.position[0]);
  });

  it('a bank another live process is recording is waited for and read from the cache, not recorded again', async (t) => {
    const task = resolveTask('approach-cow');
    const recorded = bankFile(task);
    probeBank(task);
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = tempDir('rewardsmith-bank-cache-');
    // The other recorder: a live process of this host named in the bank's claim.
    const other = spawn('sleep', ['60']);
    t.after(() => {
      other.kill();
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    });
    const file = bankFile(task);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.recording`, JSON.stringify({ host: os.hostname(), pid: other.pid, started: Date.now() }));
    let read: Awaited<ReturnType<typeof probeBankAsync>> | null = null;
    const waiting = probeBankAsync(task).then((b) => (read = b));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(read, null, 'it waits while the other process records');
    // The other process's bank lands (marked, so that a bank recorded here instead would show).
    const bank = JSON.parse(gunzipSync(readFileSync(recorded)).toString('utf8'));
    writeFileSync(`${file}.tmp`, gzipSync(JSON.stringify({ ...bank, worldNames: [...bank.worldNames, 'from-the-other-process'] })));
    renameSync(`${file}.tmp`, file);
    await waiting;
    assert.ok(read!.worldNames.includes('from-the-other-process'), 'the bank was recorded again instead of read');
  });
});

describe('walking away from the target', () => {
  const bank = (task: string) => probeBank(resolveTask(task));
  it("a retreat takes the teacher's approach step for step on its world, then backs away from the log while it stays in view", () => {
    const retreats = bank('approach-tree').episodes.filter((e) => e.behaviour === 'retreat');
    assert.equal(retreats.length, 2);
    const back = STEP_CODES[GAME_FACTS.actions.indexOf('back')]!;
    for (const retreat of retreats) {
      const teacher = bank('approach-tree').episodes.find((e) => e.behaviour === 'teacher' && e.seed === retreat.seed);
      assert.ok(teacher?.success, `the retreat on world ${retreat.seed} plays a world the teacher succeeded on`);
      let same = 0;
      while (retreat.actions[same] === teacher.actions[same]) same++;
      assert.ok(same > 0 && same < teacher.actions.length - 1, `the approach is the teacher's for ${same} of its ${teacher.actions.length} steps`);
      const log = (t: number) => retreat.obs[t]!.nearest.oak_log?.[0];
      const from = log(same)!;
      assert.ok(from < 8, `the retreat begins with the log in view within 8 m (${from})`);
      // From there it walks backwards: the log in view and farther away, step after step.
      const inView = retreat.obs.slice(same).filter((o) => o.nearest.oak_log !== undefined).length;
      const farthest = Math.max(...retreat.obs.slice(same).map((o) => o.nearest.oak_log?.[0] ?? 0));
      assert.ok(inView >= 150, `the log in view on ${inView} steps of the retreat`);
      assert.ok(farthest - from >= 20, `backed away from ${from.toFixed(1)} m to ${farthest.toFixed(1)} m`);
      assert.ok(retreat.actions.slice(same).split(back).length - 1 >= 100, 'walking backwards');
    }
  });

  it('distance shaping with its sign reversed is warned at the line that pays walking away, against success on the same worlds', async () => {
    // The corpus's tree reward pays `0.05 * progress`; the weak cow reward pays positive "progress" at line 19's `return 1`.
    const corpus = fixture('corpus/incentive-walking-away.reward.ts');
    const sign = path.join(__dirname, 'fixtures', 'rewards', 'weak-approach-cow.sign.reward.ts');
    for (const [file, task, at] of [
      [corpus, 'approach-tree', `${expected(corpus)[0]!.split(' ')[0]}:3`],
      [sign, 'approach-cow', '19:23'],
    ] as const) {
      const { findings } = await probeReward(file, resolveTask(task));
      const warned = findings.filter((f) => f.severity !== 'information');
      assert.deepEqual(
        warned.map((f) => `${f.line}:${f.column} ${f.code}`),
        [`${at} probe-incentive`],
        `${path.basename(file)}: ${findings.map((f) => `${f.line} ${f.code}: ${f.message}`).join('\n')}`,
      );
      assert.match(
        warned[0]!.message,
        /^walking away from the target while it is in view is paid on \d+ % of its steps: [\d.]+ over its [\d,]+ steps; a successful episode on the same worlds, after the same approach, earns -?[\d.]+ \(mean of 2\)/,
      );
      assert.equal(bank(task).episodes[warned[0]!.episode!]!.behaviour, 'retreat', 'the episode to watch is a retreat');
    }
  });
});

describe('probe findings', () => {
  it('the paper-shaped cow reward that pays every step of movement gets an incentive warning at its paying line', async () => {
    const file = fixture('cow-pays-movement.reward.ts');
    const { findings } = await probeReward(file, resolveTask('approach-cow'));
    const incentive = findings.filter((f) => f.code === 'probe-incentive');
    assert.deepEqual(
      incentive.map((f) => `${f.line} ${f.code}`),
      expected(file),
    );
    assert.match(incentive[0]!.message, /turning in place is paid on 100 % of its steps: \d+ per 2,000-step episode; a successful episode earns [\d.]+/);
  });
  it('turning in place paid by several checks is warned at the one that pays most of it, from the replay, not at the check every paid call passes', async () => {
    // approach-pig's dense part: +1 when a pig comes into view, when it is closer, when the agent turned towards
    // it. Turning in place is paid by all three (the pigs wander), none half of it; the `if` of the closer check
    // runs before the turned check on every call either pays, and was named instead.
    const file = path.join(ROOT, 'runner', 'rewards', 'approach-pig.dense-sparse.reward.ts');
    const task = resolveTask('approach-pig');
    const lines = readFileSync(file, 'utf8').split('\n');
    const lineOf = (comment: string) => lines.findIndex((l) => l.includes(comment)) + 1;
    const { findings } = await probeReward(file, task);
    const turning = findings.find((f) => f.code === 'probe-incentive' && f.message.startsWith(BEHAVIOURS.turn));
    assert.ok(turning, findings.map((f) => `${f.line}:${f.column} ${f.message}`).join('\n'));
    // What each check's `return 1` paid on the turning episodes, replayed in the sandbox.
    const replay = await replayBank(file, task, probeBank(task));
    const turnEpisodes = probeBank(task).episodes.flatMap((e, i) => (e.behaviour === 'turn' ? [i] : []));
    const paid = new Map<number, number>();
    replay.compiled.statements.forEach((st, k) => {
      const t = statementTotals(replay.coverage!, turnEpisodes, k);
      if (t.runs > 0 && t.paidRuns === t.runs && /return 1/.test(lines[st.line - 1]!.slice(st.column - 1))) paid.set(st.line, t.paidSum);
    });
    const total = [...paid.values()].reduce((a, b) => a + b, 0);
    const [top] = [...paid].sort((a, b) => b[1] - a[1]);
    assert.deepEqual([...paid.keys()].sort(), [lineOf('a pig came into view'), lineOf('// closer'), lineOf('turned towards it')].sort());
    assert.ok(top![1] < 0.5 * total, 'no one check pays half of it');
    assert.equal(top![0], lineOf('turned towards it'));
    assert.equal(turning.line, top![0], turning.message);
    assert.match(
      turning.message,
      new RegExp(
        `; this line pays ${Math.round((100 * top![1]) / total)} % of it, lines ${lineOf('a pig came into view')} and ${lineOf('// closer')} pay it too\\.`,
      ),
    );
  });
  it('an input the reward reads but whose value never changes the result is found by replaying it swapped, at the line that reads it', async () => {
    const file = fixture('corpus/bug-progress-clamped.reward.ts');
    const { findings } = await probeReward(file, resolveTask('approach-cow'));
    const unused = findings.filter((f) => f.code === 'probe-input-unused');
    assert.deepEqual(
      unused.map((f) => `${f.line} ${f.code}`),
      expected(file),
    );
    assert.match(
      unused[0]!.message,
      /^previous_nearest_blocks is read here but its value never changes the reward: .* same reward on all [\d,]+ calls, although it differed on [\d,]+ of them/,
    );
  });
  it('a well-shaped dense approach reward (new closest distance, success) gets no warning', async () => {
    const { findings } = await probeReward(fixture('cow-approach-shaped.reward.ts'), resolveTask('approach-cow'));
    assert.deepEqual(
      findings.filter((f) => f.severity !== 'information').map((f) => f.message),
      [],
    );
  });
});

describe('train refuses a reward with errors', () => {
  it("refuses the 'magma' reward naming line 4, writing nothing to the run folder", async () => {
    const out = path.join(tempDir('rewardsmith-gate-'), 'run');
    const r = await cli('train', fixture('magma.reward.ts'), '--task', 'explore-diamond', '--out', out, '--events', 'ndjson');
    assert.equal(r.status, 1, r.stderr);
    // An editor tells the refusal from a failed run by its typed field (VS Code offers "Train anyway").
    const finished = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'finished');
    assert.equal(finished?.ok, false);
    assert.equal(finished?.check_errors, 1);
    assert.match(finished?.error, /error\(s\) found before training/);
    assert.match(r.stderr, /magma\.reward\.ts:4:\d+: error unknown-name/);
    assert.match(r.stderr, /magma\.reward\.ts:4:\d+: warning probe-absent-name: 'magma' never occurs/);
    assert.match(r.stderr, /nothing was trained or written.*--no-check/);
    assert.equal(existsSync(out), false);
  });
  it('--no-check turns the check off', () => {
    assert.equal(parseTrainArgs(['r.reward.ts', '--task', 'approach-cow', '--out', 'x']).check, true);
    assert.equal(parseTrainArgs(['r.reward.ts', '--task', 'approach-cow', '--out', 'x', '--no-check']).check, false);
  });
});

describe('lint runs the probes', () => {
  it('by default, with the probe diagnostics under their own source; --no-probe skips them', async () => {
    const file = fixture('cow-pays-movement.reward.ts');
    const text = readFileSync(file, 'utf8');
    const task = resolveTask('approach-cow');
    const probed = await checkReward(file, text, task);
    assert.ok(probed.diagnostics.some((d) => d.source === 'rewardsmith-probe' && d.code === 'probe-incentive'));
    const r = await cli('lint', '--no-probe', file);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /probe-/);
  });
});
