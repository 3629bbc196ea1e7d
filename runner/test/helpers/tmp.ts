// Scratch folders for tests, removed when the test file's tests have finished, so a test run leaves nothing
// in the system's temp folder. REWARDSMITH_KEEP_TMP=1 keeps them, to look at what a failing test wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

const made: string[] = [];
// Registered when the test file first imports this module: a root hook, run after the file's last test.
after(() => {
  if (process.env.REWARDSMITH_KEEP_TMP === '1') return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder `<tmp>/<prefix>XXXXXX`, removed after the file's tests. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
