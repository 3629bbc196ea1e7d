// `rewardsmith apply RUN --suggestion ID [--reward FILE]`: applies one of the analyzer's patches (from
// RUN/suggestions.json) to the user's reward file — the file the run recorded as the one it trained on,
// not the run's copy — after showing the diff. It refuses, and changes nothing, when that file has changed
// since the run trained on it (the patch was written for the trained version) or when the patch no longer
// applies to the file as it is.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CommandError, didYouMean, parseCommandArgs, runCommand, terminalText, UsageError } from '../args';
import { applyUnifiedDiff, PatchError } from '../diff';
import { readSuggestions, readSummary, RUN_FILES, runRewardCopy } from '../records';

export const APPLY_SPEC = {
  command: 'apply',
  summary: `Shows one of the analyzer's patches (RUN/${RUN_FILES.suggestions}, written by \`rewardsmith analyze RUN\`) and applies it to your
reward file: the file the run recorded in its ${RUN_FILES.summary} (or --reward FILE). Refuses, changing nothing, when that file
changed since the run trained on it or when the patch no longer applies.`,
  positionals: 'RUN',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    suggestion: { type: 'string', valueName: 'ID', description: `the suggestion's id (as listed by analyze, e.g. death-lava)` },
    reward: { type: 'string', valueName: 'FILE', description: 'the reward file to patch (default: the one the run trained on)' },
    'dry-run': { type: 'boolean', description: 'show the diff and check that it applies, without writing' },
  },
  epilog: 'example: rewardsmith apply runs/a --suggestion death-lava',
} as const;

export interface ApplyResult {
  file: string;
  diff: string;
  written: boolean;
}

/** Applies suggestion `id` of run `runDir` to `rewardFile` (default: the run's recorded reward file). */
export function applySuggestion(runDir: string, id: string, opts: { rewardFile?: string; dryRun?: boolean } = {}): ApplyResult {
  const suggestionsFile = path.join(runDir, RUN_FILES.suggestions);
  const analysis = readSuggestions(runDir);
  if (!analysis) throw new CommandError(`${suggestionsFile}: no analysis yet; run \`rewardsmith analyze ${runDir}\` first`);
  const suggestion = analysis.suggestions.find((s) => s.id === id);
  if (!suggestion) {
    const ids = analysis.suggestions.map((s) => s.id);
    const [near] = didYouMean(id, ids);
    throw new UsageError(
      `--suggestion ${id}: no such suggestion in ${suggestionsFile}${near ? ` (did you mean ${near}?)` : ''}; there are: ${ids.join(', ') || 'none'}`,
    );
  }
  if (!suggestion.diff)
    throw new CommandError(
      `suggestion ${id} has no patch${suggestion.patchUnavailable ? `: ${suggestion.patchUnavailable}` : ''}; it is advice to act on by hand`,
    );

  const summary = readSummary(runDir);
  const target = opts.rewardFile ?? summary?.reward_file ?? undefined;
  if (!target) throw new UsageError(`the run does not record the reward file it trained on; pass --reward FILE`);
  if (!existsSync(target)) {
    throw new CommandError(
      `${target}: no such file${opts.rewardFile ? '' : ` (the reward file recorded in ${path.join(runDir, RUN_FILES.summary)}); pass --reward FILE`}`,
    );
  }
  const current = readFileSync(target, 'utf8');
  // The text the patch was written against: the file analyze read (normally the run's copy of the reward).
  const base = analysis.rewardFile && existsSync(analysis.rewardFile) ? readFileSync(analysis.rewardFile, 'utf8') : null;
  const baseIsRunCopy = analysis.rewardFile !== null && path.resolve(analysis.rewardFile) === path.resolve(runRewardCopy(runDir));
  if (baseIsRunCopy && base !== null && current !== base) {
    throw new CommandError(
      `${target} changed since the run trained on it (it differs from the run's copy ${runRewardCopy(runDir)}), ` +
        `so this patch, written for the trained version, may no longer fit; nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${target}\` for patches to the file as it is now, then apply again`,
    );
  }
  let patched: string;
  try {
    patched = applyUnifiedDiff(current, suggestion.diff);
  } catch (err) {
    if (!(err instanceof PatchError)) throw err;
    throw new CommandError(
      `the patch of ${id} does not apply to ${target} as it is now (${err.message}); nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${target}\` for patches to the current file`,
    );
  }
  if (!opts.dryRun) {
    // Written whole or not at all: a crash mid-write must not leave the user's reward half patched.
    const tmp = `${target}.rewardsmith-apply.tmp`;
    writeFileSync(tmp, patched);
    renameSync(tmp, target);
  }
  return { file: target, diff: suggestion.diff, written: !opts.dryRun };
}

export async function applyCommand(argv: string[]): Promise<number> {
  return runCommand('apply', async () => {
    const { values, positionals } = parseCommandArgs(APPLY_SPEC, argv);
    if (!values.suggestion) throw new UsageError('--suggestion ID is required (the ids are listed by `rewardsmith analyze RUN`)');
    const runDir = positionals[0]!;
    const r = applySuggestion(runDir, values.suggestion, { rewardFile: values.reward, dryRun: values['dry-run'] });
    process.stdout.write(terminalText(r.diff.endsWith('\n') ? r.diff : r.diff + '\n'));
    process.stdout.write(
      r.written
        ? `\napplied ${values.suggestion} to ${r.file} · next: rewardsmith lint ${r.file}, then train it again\n`
        : `\n(dry run) the patch applies to ${r.file}; nothing was written\n`,
    );
    return 0;
  });
}
