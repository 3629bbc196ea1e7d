// `loop --candidates K --engine local`: the loop trains an iteration's candidates as `rewardsmith train` jobs on
// the sweep's engine, at the same time (without --engine they train there one at a time), and reads their runs back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loopCommand } from '../src/llm/loop-command';
import type { LoopResult } from '../src/llm/loop-types';
import type { JobExit } from '../src/sweep/engine';
import { startLlmServer } from './helpers/llm-server';
import { tempDir } from './helpers/tmp';

const rewardText = (name: string) => readFileSync(path.join(__dirname, '..', 'rewards', name), 'utf8');
const fence = (code: string) => 'Here is the reward function.\n\n```ts\n' + code + '```\n';

test('loop --candidates 2 --engine local trains both candidates as train jobs at once', { timeout: 240_000 }, async () => {
  let designs = 0;
  const server = await startLlmServer((req) => {
    if (/reward designer/.test(req.system))
      return fence(++designs === 1 ? rewardText('approach-tree.sparse.reward.ts') : rewardText('approach-tree.dense.reward.ts'));
    if (/review reward functions/.test(req.system)) return JSON.stringify({ reasoning: 'ok', success: true, critique: null, findings: [] });
    return JSON.stringify({ analysis: 'The agent never finds a tree.', suggestions: ['Reward exploring unvisited cells.'] });
  });
  const saved = { ...process.env };
  const out = tempDir('loop-engine-');
  try {
    process.env.OPENAI_BASE_URL = server.baseUrl;
    process.env.OPENAI_API_KEY = 'k';
    let text = '';
    const io = { stdout: (t: string) => void (text += t), stderr: (t: string) => void (text += t) };
    const code = await loopCommand(
      [
        '--task',
        'approach-tree',
        '--iterations',
        '1',
        '--candidates',
        '2',
        '--out',
        out,
        '--steps',
        '512',
        '--envs',
        '8',
        '--eval-episodes',
        '4',
        '--engine',
        'local',
        '--from-scratch',
      ],
      io,
    );
    assert.equal(code, 0, text);
    const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as LoopResult;
    const runs = result.iterations[0]!.candidates.map((c) => path.join(out, c.run!));
    assert.equal(runs.length, 2);
    const exits = runs.map((run) => JSON.parse(readFileSync(path.join(run, 'job-exit.json'), 'utf8')) as JobExit);
    for (const e of exits) assert.equal(e.exit_code, 0);
    // Both jobs were running at the same moment.
    assert.ok(Math.max(exits[0]!.started, exits[1]!.started) < Math.min(exits[0]!.ended, exits[1]!.ended), JSON.stringify(exits));
    assert.ok(result.iterations[0]!.candidates.every((c) => c.summary && c.summary.eval.episodes === 4));
  } finally {
    process.env = saved;
    await server.close();
    rmSync(out, { recursive: true, force: true });
  }
});
