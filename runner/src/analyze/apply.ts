// `rewardsmith apply RUN --suggestion ID… [--to FILE]`: applies analyzer's patches (from RUN/suggestions.json)
// to the user's reward file after showing the diff. The file is the one the user names with --to, else the one
// the run's summary records, but only when its content is the reward the run trained on (records.ts
// `patchTarget`: a run folder may be someone else's, so a path it names is never written on its word alone).
// It says which file it will change before changing it, and refuses, changing nothing, when the patches were
// written for another version of the file or no longer apply. Several patches are applied in order, all or
// none. The write is atomic and follows no symbolic link (files.ts).
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { CommandError, didYouMean, parseCommandArgs, requireExisting, runCommand, terminalText, UsageError } from '../args';
import { applyUnifiedDiff, PatchError, unifiedDiff } from '../diff';
import { writeAtomic } from '../files';
import { patchTarget, PatchTargetError, type PatchTarget } from '../patch-target';
import { readRunRewardCopy, readSuggestions, RUN_FILES, runRewardCopy } from '../records';

export const APPLY_SPEC = {
  command: 'apply',
  summary: `Shows one or more of the analyzer's patches (RUN/${RUN_FILES.suggestions}, written by \`rewardsmith analyze RUN\`) and applies
them to your reward file: the one you name with --to FILE, else the one the run's ${RUN_FILES.summary} records, if its content is
the reward the run trained on (its sha256). Several patches are applied in the order given, all or none. Refuses, changing nothing,
when that file changed since or when a patch no longer applies (two patches that change the same lines: apply one, analyze again,
then the other).`,
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
    to: { type: 'string', valueName: 'FILE', description: 'the reward file to patch (default: the one the run trained on, checked by its sha256)' },
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

/** What `apply` tells the user before it changes anything: the file, and why that one. */
export function patchTargetLine(target: PatchTarget, dryRun = false): string {
  const verb = dryRun ? 'would patch' : 'patching';
  return target.chosenBy === 'named'
    ? `${verb} ${target.file} (named with --to)`
    : `${verb} ${target.file} (the reward file the run trained on: its sha256 matches ${RUN_FILES.summary}'s reward_sha256)`;
}

export interface ApplyOptions {
  /** The file to patch (default: the run's recorded reward file, if its content is the trained reward). */
  to?: string;
  dryRun?: boolean;
  /** Hears which file will change and the diff, before it changes. */
  announce?: (target: PatchTarget, diff: string) => void;
}

/** Applies suggestion `id` of run `runDir` (see applySuggestions). */
export function applySuggestion(runDir: string, id: string, opts: ApplyOptions = {}): ApplyResult {
  return applySuggestions(runDir, [id], opts);
}

/**
 * Applies suggestions `ids` of run `runDir`, in order, to `opts.to` (default: the run's recorded reward file, if
 * its content is the trained reward), all or none: each patch is applied to the text the ones before it left,
 * and the file is written once.
 */
export function applySuggestions(runDir: string, ids: readonly string[], opts: ApplyOptions = {}): ApplyResult {
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

  if (opts.to !== undefined && !existsSync(opts.to)) throw new CommandError(`--to ${opts.to}: no such file`);
  let target: PatchTarget;
  try {
    target = patchTarget(opts.to !== undefined ? { named: opts.to } : { runDir });
  } catch (err) {
    if (err instanceof PatchTargetError) throw new CommandError(err.message);
    throw err;
  }
  const file = target.file;
  // A recorded target's text is the one whose hash was checked: a second read could find another file swapped in.
  const current = target.text ?? readFileSync(file, 'utf8');
  // A patch written against the run's copy of the reward fits only that text; only the run's own copy is read
  // as that base, checked (no link out of the run folder; suggestions.json's rewardFile is a record too, so no
  // other path it names is opened).
  const baseIsRunCopy = analysis.rewardFile !== null && path.resolve(analysis.rewardFile) === path.resolve(runRewardCopy(runDir));
  const runCopy = baseIsRunCopy ? readRunRewardCopy(runDir) : undefined;
  if (runCopy && current !== runCopy.text) {
    throw new CommandError(
      `${file} changed since the run trained on it (it differs from the run's copy ${runCopy.file}), ` +
        `so ${chosen.length === 1 ? 'this patch, written for the trained version,' : 'these patches, written for the trained version,'} may no longer fit; nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${file}\` for patches to the file as it is now, then apply again`,
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
          ? `the patch of ${id} does not apply to ${file} as it is now (${err.message}); nothing was changed. ` +
              `Run \`rewardsmith analyze ${runDir} --reward ${file}\` for patches to the current file`
          : `the patch of ${id} does not apply after ${before.join(', ')} (${err.message}: they change the same lines); nothing was changed. ` +
              `Apply ${before.join(' ')} first, then \`rewardsmith analyze ${runDir} --reward ${file}\` for a patch of ${id} to the result`,
      );
    }
  });
  const diff = chosen.length === 1 ? chosen[0]!.diff : unifiedDiff(current, patched, path.basename(file)).text;
  opts.announce?.(target, diff);
  // Written whole or not at all, to the file itself when the reward file is a link the user made to it.
  if (!opts.dryRun) {
    const real = realpathSync(file);
    writeAtomic(path.dirname(real), real, patched, { tmpSuffix: '.rewardsmith-apply.tmp' });
  }
  return { file, diff, written: !opts.dryRun, applied: chosen.map((c) => c.id) };
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
    const dryRun = values['dry-run'];
    const r = applySuggestions(runDir, ids, {
      to: values.to,
      dryRun,
      announce: (target, diff) => process.stdout.write(terminalText(`${patchTargetLine(target, dryRun)}\n${diff.endsWith('\n') ? diff : diff + '\n'}`)),
    });
    const names = r.applied.join(', ');
    process.stdout.write(
      terminalText(
        r.written
          ? `\napplied ${names} to ${r.file} · next: rewardsmith lint ${r.file}, then train it again\n`
          : `\n(dry run) ${r.applied.length === 1 ? 'the patch applies' : `the ${r.applied.length} patches apply, in this order,`} to ${r.file}; nothing was written\n`,
      ),
    );
    return 0;
  });
}
