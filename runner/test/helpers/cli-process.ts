// How a test starts `rewardsmith` (or its language server) as a process of its own, where it signals, kills or
// talks to that process or lets it start jobs (a sweep's `train` runs): from the bundle in dist/ when dist/ was
// built from the sources as they are now (build.mjs's record of every input's size and modification time,
// `staleReason`), else from the sources through tsx. The bundle starts in about 1 CPU-s where tsx takes about
// 3.5 (`train --help`), and the jobs a sweep starts run the CLI the sweep runs: a sweep of a few tiny runs spends
// most of its CPU starting processes. A checkout edited since its last build thus still tests its sources, more slowly.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(__dirname, '..', '..', '..');

let bundleFresh: Promise<boolean> | undefined;

/** Whether dist/ holds a build of the sources as they are now. */
function distIsFresh(): Promise<boolean> {
  bundleFresh ??= (async () => {
    const build = (await import(pathToFileURL(path.join(ROOT, 'build.mjs')).href)) as {
      BUILD_INPUTS: string;
      staleReason: (manifest: string, root?: string) => string | null;
    };
    return build.staleReason(build.BUILD_INPUTS, ROOT) === null;
  })();
  return bundleFresh;
}

async function nodeArgs(bundled: string, source: string): Promise<string[]> {
  if (await distIsFresh()) return [path.join(ROOT, bundled)];
  return ['--import', pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href, path.join(ROOT, source)];
}

/** The Node arguments before `rewardsmith`'s own: the installed command's launcher, or tsx and the CLI's source. */
export const cliNodeArgs = (): Promise<string[]> => nodeArgs('runner/bin/rewardsmith.js', 'runner/src/cli.ts');

/** The Node arguments before the language server's own (`--stdio`): its bundle, or tsx and its source. */
export const serverNodeArgs = (): Promise<string[]> => nodeArgs('dist/server.js', 'language-server/src/server.ts');
