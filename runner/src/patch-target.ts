// The one rule for which file a suggestion's patch may change: `rewardsmith apply` and the editor's Apply both
// call `patchTarget`, so a run folder from someone else can never steer a write the two would judge differently.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { readRecordBytes, RunRecordError } from './files';
import { readSummary, REWARD_FILE_EXTENSIONS, REWARD_FILE_PATTERN, RUN_FILES, sha256Hex } from './records';

/** Why a suggestion's patch may not change a file; nothing has been changed. */
export class PatchTargetError extends Error {
  override name = 'PatchTargetError';
}

/** The file a suggestion's patch will change, and why that file. */
export interface PatchTarget {
  file: string;
  /** `named`: the user chose it (`apply --to FILE`, the document open in the editor); `recorded`: the run's summary names it and its content is the reward the run trained on. */
  chosenBy: 'named' | 'recorded';
  /** `recorded`: the file's text as read and hashed here (the patch is applied to this text, never to a second read). */
  text?: string;
}

/**
 * The one rule for which file a suggestion's patch may change (`apply` and the editor's Apply both use it). A
 * run folder is untrusted input (a colleague's, a shared disk's), so a path it records is never written on
 * its word alone: the file must be named as a reward file (`*.reward.ts`/`.js`/`.py`, the link resolved too) and
 * its content must have the sha256 the run recorded for the reward it trained on. (A forged hash can match a
 * file whose content is public, such as an installed package's `index.js`: the name rule keeps those out.)
 * A file the user names needs no such proof, only to be a reward module (.ts, .js or .py).
 */
export function patchTarget(source: { named: string } | { runDir: string }): PatchTarget {
  const isRewardModule = (file: string) => REWARD_FILE_EXTENSIONS.includes(path.extname(file).toLowerCase());
  if ('named' in source) {
    if (!isRewardModule(source.named)) throw new PatchTargetError(`${source.named} is not a reward file (.ts, .js or .py); nothing was changed`);
    return { file: source.named, chosenBy: 'named' };
  }
  const { runDir } = source;
  const summaryFile = path.join(runDir, RUN_FILES.summary);
  const summary = readSummary(runDir);
  const recorded = summary?.reward_file;
  if (typeof recorded !== 'string' || recorded === '')
    throw new PatchTargetError(`${summaryFile} does not record the reward file the run trained on; name the file to patch: --to FILE`);
  const unreadable = (err: unknown) =>
    new PatchTargetError(
      `${recorded} (the reward file recorded in ${summaryFile}): ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}; name the file to patch: --to FILE`,
    );
  let real: string;
  try {
    real = realpathSync(recorded);
  } catch (err) {
    throw unreadable(err);
  }
  if (!REWARD_FILE_PATTERN.test(recorded) || !REWARD_FILE_PATTERN.test(real))
    throw new PatchTargetError(
      `${recorded}${real !== path.resolve(recorded) ? ` (a link to ${real})` : ''}, named by ${summaryFile}, is not a reward file (*.reward.ts, *.reward.js or *.reward.py); nothing was changed. Name the file to patch: --to FILE`,
    );
  const expected = summary!.reward_sha256;
  if (typeof expected !== 'string' || !/^[0-9a-f]{64}$/.test(expected))
    throw new PatchTargetError(
      `${summaryFile} does not record the sha256 of the reward it trained on, so the file it names cannot be checked; nothing was changed. ` +
        `Name the file to patch: --to FILE`,
    );
  let content: Uint8Array;
  try {
    // The path is the record's: read without waiting and bounded, so a FIFO or a device there is refused, not read.
    content = readRecordBytes(real, path.dirname(real));
  } catch (err) {
    if (err instanceof RunRecordError)
      throw new PatchTargetError(`${err.message} (the reward file recorded in ${summaryFile}); nothing was changed. Name the file to patch: --to FILE`);
    throw unreadable(err);
  }
  const actual = sha256Hex(content);
  if (actual !== expected)
    throw new PatchTargetError(
      `${recorded} is not the reward file the run trained on: its sha256 ${actual.slice(0, 12)}… differs from ${RUN_FILES.summary}'s reward_sha256 ${expected.slice(0, 12)}…; ` +
        `nothing was changed. If you edited it since, run \`rewardsmith analyze ${runDir} --reward ${recorded}\` for patches to the file as it is now; ` +
        `to patch a file of your choosing, name it: --to FILE`,
    );
  return { file: real, chosenBy: 'recorded', text: Buffer.from(content).toString('utf8') };
}
