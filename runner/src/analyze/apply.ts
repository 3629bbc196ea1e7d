// `rewardsmith apply RUN --suggestion ID… [--reward FILE]`: applies analyzer's patches (from
// RUN/suggestions.json) to the user's reward file — the file the run recorded as the one it trained on,
// not the run's copy — after showing the diff. It refuses, and changes nothing, when that file has changed
// since the run trained on it (the patch was written for the trained version) or when the patch no longer
// applies to the file as it is.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CommandError, didYouMean, parseCommandArgs, requireExisting, runCommand, terminalText, UsageError } from '../args';
import { applyUnifiedDiff, PatchError, unifiedDiff } from '../diff';
import { readSuggestions, readSummary, RUN_FILES } from '../records';

export const APPLY_SPEC = {
  command: 'apply',
  summary: `Shows one or more of the analyzer's patches (RUN/${RUN_FILES.suggestions}, written by \`rewardsmith analyze RUN\`) and applies
them to your reward file: the file the run recorded in its ${RUN_FILES.summary} (or --reward FILE). Several patches are applied in
the order given, all or none. Refuses, changing nothing, when that file changed since the run trained on it or when a patch no
longer applies (two patches that change the same lines: apply one, analyze again, then the other).`,
  positionals: 'RUN',
  // RUN may also come last (`--suggestion A B runs/a`), where the list option has taken it: see applyCommand.
  minPositionals: 0,
  maxPositionals: 1,
  options: {
    suggestion: {
      type: 'list',
      valueName: 'ID...',
      description: `the suggestions' ids (as listed by analyze, e.g. death-lava); several: --suggestion A B or --suggestion A --suggestion B`,
    },
    reward: { type: 'string', valueName: 'FILE', description: 'the reward file to patch (default: the one the run trained on)' },
    'dry-run': { type: 'boolean', description: 'show the diff and check that it applies, without writing' },
  },
  epilog: 'examples:\n  rewardsmith apply runs/a --suggestion death-lava\n  rewardsmith apply runs/a --suggestion death-lava timeout-target-unseen',
} as const;

export interface ApplyResult {
  file: string;
  /** The whole change to the file (one suggestion: its own diff). */
  diff: string;
  written: boolean;
  /** The suggestions applied, in order. */
  applied: string[];
}

/** Applies suggestion `id` of run `runDir` to `rewardFile` (default: the run's recorded reward file). */
export function applySuggestion(runDir: string, id: string, opts: { rewardFile?: string; dryRun?: boolean } = {}): ApplyResult {
  return applySuggestions(runDir, [id], opts);
}

/**
 * Applies suggestions `ids` of run `runDir`, in order, to `rewardFile` (default: the run's recorded reward
 * file), all or none: each patch is applied to the text the ones before it left, and the file is written once.
 */
export function applySuggestions(runDir: string, ids: readonly string[], opts: { rewardFile?: string; dryRun?: boolean } = {}): ApplyResult {
  const suggestionsFile = path.join(runDir, RUN_FILES.suggestions);
  const analysis = readSuggestions(runDir);
  if (!analysis) throw new CommandError(`${suggestionsFile}: no analysis yet; run \`rewardsmith analyze ${runDir}\` first`);
  const unique = [...new Set(ids)];
  const chosen = unique.map((id) => {
    const suggestion = analysis.suggestions.find((s) => s.id === id);
    if (!suggestion) {
      const known = analysis.suggestions.map((s) => s.id);
      const [near] = didYouMean(id, known);
      throw new UsageError(
        `--suggestion ${id}: no such suggestion in ${suggestionsFile}${near ? ` (did you mean ${near}?)` : ''}; there are: ${known.join(', ') || 'none'}`,
      );
    }
    if (!suggestion.diff)
      throw new CommandError(
        `suggestion ${id} has no patch${suggestion.patchUnavailable ? `: ${suggestion.patchUnavailable}` : ''}; it is advice to act on by hand`,
      );
    return { id, diff: suggestion.diff };
  });

  const summary = readSummary(runDir);
  const target = opts.rewardFile ?? summary?.reward_file ?? undefined;
  if (!target) throw new UsageError(`the run does not record the reward file it trained on; pass --reward FILE`);
  if (!existsSync(target)) {
    throw new CommandError(
      `${target}: no such file${opts.rewardFile ? '' : ` (the reward file recorded in ${path.join(runDir, RUN_FILES.summary)}); pass --reward FILE`}`,
    );
  }
  const current = readFileSync(target, 'utf8');
  // The text the patches were written against: the file analyze read (normally the run's copy of the reward).
  const base = analysis.rewardFile && existsSync(analysis.rewardFile) ? readFileSync(analysis.rewardFile, 'utf8') : null;
  const baseIsRunCopy = analysis.rewardFile !== null && path.resolve(analysis.rewardFile) === path.resolve(runDir, RUN_FILES.rewardCopy);
  if (baseIsRunCopy && base !== null && current !== base) {
    throw new CommandError(
      `${target} changed since the run trained on it (it differs from the run's copy ${path.join(runDir, RUN_FILES.rewardCopy)}), ` +
        `so ${chosen.length === 1 ? 'this patch, written for the trained version,' : 'these patches, written for the trained version,'} may no longer fit; nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${target}\` for patches to the file as it is now, then apply again`,
    );
  }
  let patched = current;
  chosen.forEach(({ id, diff }, i) => {
    try {
      patched = applyUnifiedDiff(patched, diff);
    } catch (err) {
      if (!(err instanceof PatchError)) throw err;
      const before = chosen.slice(0, i).map((c) => c.id);
      throw new CommandError(
        before.length === 0
          ? `the patch of ${id} does not apply to ${target} as it is now (${err.message}); nothing was changed. ` +
              `Run \`rewardsmith analyze ${runDir} --reward ${target}\` for patches to the current file`
          : `the patch of ${id} does not apply after ${before.join(', ')} (${err.message}: they change the same lines); nothing was changed. ` +
              `Apply ${before.join(' ')} first, then \`rewardsmith analyze ${runDir} --reward ${target}\` for a patch of ${id} to the result`,
      );
    }
  });
  if (!opts.dryRun) {
    // Written whole or not at all: a crash mid-write must not leave the user's reward half patched.
    const tmp = `${target}.rewardsmith-apply.tmp`;
    writeFileSync(tmp, patched);
    renameSync(tmp, target);
  }
  const diff = chosen.length === 1 ? chosen[0]!.diff : unifiedDiff(current, patched, path.basename(target)).text;
  return { file: target, diff, written: !opts.dryRun, applied: chosen.map((c) => c.id) };
}

export async function applyCommand(argv: string[]): Promise<number> {
  return runCommand('apply', async () => {
    const { values, positionals } = parseCommandArgs(APPLY_SPEC, argv);
    const ids = [...values.suggestion];
    // `apply --suggestion ID RUN`: --suggestion takes every value up to the next option, RUN included.
    if (positionals.length === 0 && ids.length > 1 && existsSync(ids[ids.length - 1]!)) positionals.push(ids.pop()!);
    if (positionals.length === 0) throw new UsageError('missing RUN');
    if (ids.length === 0) throw new UsageError('--suggestion ID is required (the ids are listed by `rewardsmith analyze RUN`)');
    const runDir = requireExisting(positionals[0]!, 'run folder');
    const r = applySuggestions(runDir, ids, { rewardFile: values.reward, dryRun: values['dry-run'] });
    process.stdout.write(terminalText(r.diff.endsWith('\n') ? r.diff : r.diff + '\n'));
    const names = r.applied.join(', ');
    process.stdout.write(
      r.written
        ? `\napplied ${names} to ${r.file} · next: rewardsmith lint ${r.file}, then train it again\n`
        : `\n(dry run) ${r.applied.length === 1 ? 'the patch applies' : `the ${r.applied.length} patches apply, in this order,`} to ${r.file}; nothing was written\n`,
    );
    return 0;
  });
}
