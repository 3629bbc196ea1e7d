// `rewardsmith apply RUN --suggestion ID [--to FILE]`: applies one of the analyzer's patches (from
// RUN/suggestions.json) to the user's reward file after showing the diff. The file is the one the user names
// with --to, else the one the run's summary records, but only when its content is the reward the run trained
// on (records.ts `patchTarget`: a run folder may be someone else's, so a path it names is never written on its
// word alone). It says which file it will change before changing it, and refuses, changing nothing, when the
// patch was written for another version of the file or no longer applies. The write is atomic and follows no
// symbolic link (files.ts).
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { CommandError, didYouMean, parseCommandArgs, runCommand, terminalText, UsageError } from '../args';
import { applyUnifiedDiff, PatchError } from '../diff';
import { writeAtomic } from '../files';
import { patchTarget, PatchTargetError, readSuggestions, RUN_FILES, type PatchTarget } from '../records';

export const APPLY_SPEC = {
  command: 'apply',
  summary: `Shows one of the analyzer's patches (RUN/${RUN_FILES.suggestions}, written by \`rewardsmith analyze RUN\`) and applies it to your
reward file: the one you name with --to FILE, else the one the run's ${RUN_FILES.summary} records, if its content is the reward the
run trained on (its sha256). Refuses, changing nothing, when that file changed since or when the patch no longer applies.`,
  positionals: 'RUN',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    suggestion: { type: 'string', valueName: 'ID', description: `the suggestion's id (as listed by analyze, e.g. death-lava)` },
    to: { type: 'string', valueName: 'FILE', description: 'the reward file to patch (default: the one the run trained on, checked by its sha256)' },
    'dry-run': { type: 'boolean', description: 'show the diff and check that it applies, without writing' },
  },
  epilog: 'example: rewardsmith apply runs/a --suggestion death-lava',
} as const;

export interface ApplyResult {
  file: string;
  diff: string;
  written: boolean;
}

/** What `apply` tells the user before it changes anything: the file, and why that one. */
export function patchTargetLine(target: PatchTarget, dryRun = false): string {
  const verb = dryRun ? 'would patch' : 'patching';
  return target.chosenBy === 'named'
    ? `${verb} ${target.file} (named with --to)`
    : `${verb} ${target.file} (the reward file the run trained on: its sha256 matches ${RUN_FILES.summary}'s reward_sha256)`;
}

/**
 * Applies suggestion `id` of run `runDir` to `opts.to` (default: the run's recorded reward file, if its
 * content is the trained reward). `announce` hears which file will change and the diff, before it changes.
 */
export function applySuggestion(
  runDir: string,
  id: string,
  opts: { to?: string; dryRun?: boolean; announce?: (target: PatchTarget, diff: string) => void } = {},
): ApplyResult {
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

  if (opts.to !== undefined && !existsSync(opts.to)) throw new CommandError(`--to ${opts.to}: no such file`);
  let target: PatchTarget;
  try {
    target = patchTarget(opts.to !== undefined ? { named: opts.to } : { runDir });
  } catch (err) {
    if (err instanceof PatchTargetError) throw new CommandError(err.message);
    throw err;
  }
  const current = readFileSync(target.file, 'utf8');
  // A patch written against the run's copy of the reward fits only that text; only the run's own copy is read
  // as that base (suggestions.json's rewardFile is a record too, so no other path it names is opened).
  const runCopy = path.join(runDir, RUN_FILES.rewardCopy);
  const baseIsRunCopy = analysis.rewardFile !== null && path.resolve(analysis.rewardFile) === path.resolve(runCopy);
  if (baseIsRunCopy && existsSync(runCopy) && current !== readFileSync(runCopy, 'utf8')) {
    throw new CommandError(
      `${target.file} changed since the run trained on it (it differs from the run's copy ${runCopy}), ` +
        `so this patch, written for the trained version, may no longer fit; nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${target.file}\` for patches to the file as it is now, then apply again`,
    );
  }
  let patched: string;
  try {
    patched = applyUnifiedDiff(current, suggestion.diff);
  } catch (err) {
    if (!(err instanceof PatchError)) throw err;
    throw new CommandError(
      `the patch of ${id} does not apply to ${target.file} as it is now (${err.message}); nothing was changed. ` +
        `Run \`rewardsmith analyze ${runDir} --reward ${target.file}\` for patches to the current file`,
    );
  }
  opts.announce?.(target, suggestion.diff);
  // Written whole or not at all, to the file itself when the reward file is a link the user made to it.
  if (!opts.dryRun) writeAtomic(realpathSync(target.file), patched, { tmpSuffix: '.rewardsmith-apply.tmp' });
  return { file: target.file, diff: suggestion.diff, written: !opts.dryRun };
}

export async function applyCommand(argv: string[]): Promise<number> {
  return runCommand('apply', async () => {
    const { values, positionals } = parseCommandArgs(APPLY_SPEC, argv);
    if (!values.suggestion) throw new UsageError('--suggestion ID is required (the ids are listed by `rewardsmith analyze RUN`)');
    const runDir = positionals[0]!;
    const dryRun = values['dry-run'];
    const r = applySuggestion(runDir, values.suggestion, {
      to: values.to,
      dryRun,
      announce: (target, diff) => process.stdout.write(terminalText(`${patchTargetLine(target, dryRun)}\n${diff.endsWith('\n') ? diff : diff + '\n'}`)),
    });
    process.stdout.write(
      terminalText(
        r.written
          ? `\napplied ${values.suggestion} to ${r.file} · next: rewardsmith lint ${r.file}, then train it again\n`
          : `\n(dry run) the patch applies to ${r.file}; nothing was written\n`,
      ),
    );
    return 0;
  });
}
