// The improvement loop's iteration table for the dashboard, read from the experiment folder the loop wrote
// (editor-independent, so it is tested without an editor; not bundled into the webview, which has no files).
import * as path from 'node:path';
import { LOOP_FILES, readRecordText } from '../../runner/src/records';

/** A loop's table is a few kilobytes; a larger file is not one the loop wrote. */
const MAX_LOOP_TABLE_BYTES = 1 << 20;

/**
 * An improvement loop's iteration table (DIR/results.txt, as the CLI prints it), or undefined when the folder has
 * none; read by the runner's checked reader, so a table that is a link out of the folder, a folder or more than
 * 1 MiB is a RunRecordError naming it.
 */
export function readLoopTable(loopDir: string): string | undefined {
  return readRecordText(path.join(loopDir, LOOP_FILES.table), MAX_LOOP_TABLE_BYTES);
}
