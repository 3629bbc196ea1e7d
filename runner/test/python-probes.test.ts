// The probes on Python rewards (`*.reward.py`): each file replayed on its task's probe bank in the Pyodide sandbox,
// coverage-instrumented, with the TypeScript path's semantics. The fixtures (runner/test/fixtures/probe/python/)
// are Python renderings of the probe corpus's bug classes and paid failure modes; each defect's line carries
// `# expect-probe: <code>` (a warning or an error there, none anywhere else) or `# expect-info: <code>`.
// Before, every Python reward was linted and said "not probed". The banks are the ones the TypeScript probe tests
// record (approach-tree, approach-cow); one Pyodide sandbox per file (~1.3 CPU-s to start from its snapshot).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { taskOfReward } from '../src/lint/check';
import { probePlayback } from '../src/playback/probe';
import { probeReward, type ProbeResult } from '../src/probe/index';
import { resolveTask } from '../src/tasks';

const FIXTURES = path.join(__dirname, 'fixtures', 'probe', 'python');
const fixture = (name: string) => path.join(FIXTURES, name);

/** The lines a fixture marks with `# expect-<kind>: <code>`, as `line code`. */
function marked(file: string, kind: 'probe' | 'info'): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => [...text.matchAll(new RegExp(`expect-${kind}: ([\\w-]+)`, 'g'))].map((m) => `${i + 1} ${m[1]}`));
}

const results = new Map<string, Promise<ProbeResult>>();
/** Each fixture probed once for all the tests that read it. */
function probed(name: string): Promise<ProbeResult> {
  const file = fixture(name);
  const text = readFileSync(file, 'utf8');
  if (!results.has(name)) results.set(name, probeReward(file, taskOfReward(file, text)!));
  return results.get(name)!;
}

describe('probes on Python rewards', () => {
  it('flag every marked defect at its line and nothing else as a warning or error, in every fixture', async () => {
    const names = readdirSync(FIXTURES).filter((f) => f.endsWith('.reward.py'));
    assert.ok(names.length >= 6);
    for (const name of names) {
      const { findings } = await probed(name);
      const flagged = findings.filter((f) => f.severity !== 'information').map((f) => `${f.line} ${f.code}`);
      assert.deepEqual(
        flagged.sort(),
        marked(fixture(name), 'probe').sort(),
        `${name}: ${findings.map((f) => `${f.line} ${f.code}: ${f.message}`).join('\n')}`,
      );
      const info = findings.filter((f) => f.severity === 'information').map((f) => `${f.line} ${f.code}`);
      for (const m of marked(fixture(name), 'info')) assert.ok(info.includes(m), `${name}: expected ${m} among ${info.join(', ')}`);
    }
  });

  it('a reward that pays turning in place more than success is warned at the line that pays it, with the episode that shows it', async () => {
    const { findings } = await probed('incentive-turning.reward.py');
    const [incentive] = findings.filter((f) => f.code === 'probe-incentive');
    assert.match(incentive!.message, /turning in place is paid on 100 % of its steps: \d+ per 2,000-step episode; a successful episode earns [\d.]+/);
    assert.equal(incentive!.column, 9, 'at the return statement');
    assert.ok(incentive!.episode !== undefined, 'names the probe episode to watch');
  });

  it('a reward that raises on some probe step is an error at the raising line, naming the step and episode', async () => {
    const { findings } = await probed('bug-empty-inventory.reward.py');
    const [thrown] = findings.filter((f) => f.code === 'probe-throws');
    assert.equal(thrown!.severity, 'error');
    assert.match(thrown!.message, /^IndexError: list index out of range at step 1 of a successful episode \(the scripted teacher\) \(probe episode 1 of \d+/);
    assert.equal(thrown!.column, 13, 'at the subscript that raised');
  });

  it('the reward profile and the dense/sparse parts come from the per-statement coverage of the Python file', async () => {
    const { profile, calls } = await probed('incentive-turning.reward.py');
    assert.ok(calls > 1000, `${calls} reward calls`);
    const paying = profile.find((p) => p.line === 10);
    assert.ok(paying, `a profile line for the paying return: ${JSON.stringify(profile)}`);
    assert.ok(paying.failureModes.pay > paying.successes.pay, JSON.stringify(paying));
    // The sparse part's pay is told apart from the dense part's (probe-sparse-dense needs both parts per call).
    const { findings } = await probed('bug-sparse-every-step.dense-sparse.reward.py');
    assert.match(findings.find((f) => f.code === 'probe-sparse-dense')!.message, /^sparse is positive on \d+ % of the [\d,]+ steps of failing probe episodes/);
  });

  it('a probe episode of a Python reward plays back with the per-step rewards of its replay', async () => {
    const file = fixture('incentive-turning.reward.py');
    const { findings } = await probed('incentive-turning.reward.py');
    const episode = findings.find((f) => f.code === 'probe-incentive')!.episode!;
    const playback = await probePlayback(file, resolveTask('approach-cow'), episode);
    // Every step of turning in place pays the turning line's 0.05 (the probes' replay, per step).
    assert.ok(
      playback.rows.slice(1).every((r) => r.reward === 0.05 && r.action === 'turn_left'),
      JSON.stringify(playback.rows.slice(0, 5)),
    );
  });
});
