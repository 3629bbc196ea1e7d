// The improvement loop's iteration table for the dashboard, read from the experiment folder the loop wrote
// (editor-independent, so it is tested without an editor; not bundled into the webview, which has no files).
import { lstatSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { LOOP_FILES } from '../../runner/src/records';

/** A loop's table is a few kilobytes; a larger file is not one the loop wrote. */
const MAX_LOOP_TABLE_BYTES = 1 << 20;

/**
 * An improvement loop's iteration table (DIR/results.txt, as the CLI prints it), or undefined when the folder has
 * none, or it is not a plain file (a link, a folder) of at most 1 MiB.
 */
export function readLoopTable(loopDir: string): string | undefined {
  const file = path.join(loopDir, LOOP_FILES.table);
  const info = lstatSync(file, { throwIfNoEntry: false });
  if (!info?.isFile() || info.size > MAX_LOOP_TABLE_BYTES) return undefined;
  return readFileSync(file, 'utf8');
}
