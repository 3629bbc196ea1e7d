// Suggestions while training runs: `train --events ndjson` streams provisional analyzer suggestions about the
// training episodes before training ends, and the editor replaces them after evaluation.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { parseEvent, type RunnerEvent } from '../src/events';
import { readSummary } from '../src/records';
import { analyzeRun, formatAnalysis } from '../src/analyze/analyze';
import { cliNodeArgs } from './helpers/cli-process';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const out = tempDir('live-suggestions-');
after(() => rmSync(out, { recursive: true, force: true }));

test('train --events ndjson: provisional suggestions with episode counts arrive before training ends', async () => {
  const reward = path.join(__dirname, 'fixtures/rewards/weak-approach-tree.reward.ts');
  const task = path.join(__dirname, 'fixtures/short-approach-tree.yaml');
  const r = spawnSync(
    process.execPath,
    [
      ...(await cliNodeArgs()),
      'train',
      reward,
      '--task',
      task,
      '--steps',
      '3072',
      '--envs',
      '4',
      '--eval-episodes',
      '2',
      '--seed',
      '7',
      '--out',
      path.join(out, 'run'),
      '--events',
      'ndjson',
    ],
    { encoding: 'utf8', cwd: ROOT },
  );
  assert.equal(r.status, 0, r.stderr);
  const events = r.stdout
    .split('\n')
    .map(parseEvent)
    .filter((e): e is RunnerEvent => !!e);
  const lastProgress = events.map((e) => e.type).lastIndexOf('progress');
  const provisional = events.flatMap((e, i) => (e.type === 'suggestion' && e.provisional ? [{ e, i }] : []));
  assert.ok(provisional.length > 0, 'at least one provisional suggestion');
  for (const { e, i } of provisional) {
    assert.ok(i < lastProgress, `${e.id} arrived while training ran`);
    assert.match(e.id, /^training\//);
    // A reward-level finding (the reward ignores a target name) may concern no episode of this window.
    assert.ok(e.explained_episodes! >= 0 && e.explained_episodes! <= e.failed_episodes!, 'counts the failed training episodes behind it');
    assert.match(e.message, /^Provisional \(\d+ of \d+ failed training episodes of the last \d+, \d+ % into training\)/);
  }
  assert.ok(
    provisional.some(({ e }) => e.explained_episodes! > 0),
    'some suggestion explains failed training episodes',
  );
  const patched = provisional.find(({ e }) => e.diff)?.e;
  assert.ok(patched?.diff?.includes('+++ b/weak-approach-tree.reward.ts'), 'patches the file the user edits');
});

test('a run on a task file keeps the file in summary.json, and analyze resolves the task from it', async () => {
  // The run of the test above: --task fixtures/short-approach-tree.yaml (id short-approach-tree, not a built-in id).
  const runDir = path.join(out, 'run');
  const summary = readSummary(runDir)!;
  assert.equal(summary.task, 'short-approach-tree');
  assert.equal(summary.task_file, path.join(__dirname, 'fixtures/short-approach-tree.yaml'));
  const analysis = await analyzeRun(runDir);
  assert.equal(analysis.taskError, undefined);
  // Findings that need the task's target names are there (the oak logs the task's plains hold; not birch,
  // which its success rule names but plains never grow).
  if (analysis.failed_episodes > 0)
    assert.ok(
      analysis.suggestions.some((s) => ['target-not-approached', 'target-lost', 'timeout-target-unseen', 'reward-gamed'].includes(s.id)),
      analysis.suggestions.map((s) => s.id).join(', '),
    );
  for (const s of analysis.suggestions) assert.doesNotMatch(s.diff ?? '', /birch/);
  // A task file that moved since: the analysis says which findings are missing and why, instead of dropping them silently.
  const moved = path.join(out, 'moved-run');
  cpSync(runDir, moved, { recursive: true });
  writeFileSync(path.join(moved, 'summary.json'), JSON.stringify({ ...summary, task_file: path.join(out, 'gone.yaml') }));
  const degraded = await analyzeRun(moved);
  assert.match(degraded.taskError ?? '', /gone\.yaml/);
  assert.match(formatAnalysis(degraded), /The run's task could not be read, so findings about its targets are missing: .*gone\.yaml/);
});
