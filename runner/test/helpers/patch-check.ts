// What every analyzer patch must do beyond patchReward's own checks: apply exactly with GNU patch and with the
// extension's applier (the same text), and lint no worse than the file it patches.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { applyUnifiedDiff } from '../../src/diff';
import { lintText } from '../../src/lint/rules';
import { tempDir } from './tmp';

export function lintProblems(file: string, text: string): string[] {
  return lintText(file, text)
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => `${d.range.start.line + 1}: ${d.code} ${d.message}`);
}

let scratch: string | undefined;

/** Applies the diff with GNU patch in a scratch folder and checks it against the extension's applier; returns the patched text. */
export function applyWithPatch(rewardFile: string, diff: string): string {
  const text = readFileSync(rewardFile, 'utf8');
  const name = /^\+\+\+ b\/(.+)$/m.exec(diff)![1]!;
  scratch ??= tempDir('rewardsmith-patch-');
  const dir = mkdtempSync(path.join(scratch, 'patch-'));
  writeFileSync(path.join(dir, name), text);
  writeFileSync(path.join(dir, 'change.diff'), diff);
  // --fuzz=0: the hunks must match exactly, context included.
  execFileSync('patch', ['-p1', '--fuzz=0', '--no-backup-if-mismatch', '-i', 'change.diff'], { cwd: dir, stdio: 'pipe' });
  const patched = readFileSync(path.join(dir, name), 'utf8');
  assert.equal(applyUnifiedDiff(text, diff), patched, 'the extension applies the diff to the same text');
  return patched;
}

/** A reward whose dense term is a `let` variable rather than a function. */
export const VARIABLE_DENSE_REWARD = [
  '// task: approach-tree',
  'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {',
  '  let dense = 0;',
  "  const log = current_nearest_blocks['oak_log'];",
  '  if (log !== undefined) dense = 1;',
  '  const sparse = log !== undefined && log[0] < 1 ? 1 : 0;',
  '  return Math.sign(sparse) * 1 + Math.sign(dense) * 0.1;',
  '}',
].join('\n');
