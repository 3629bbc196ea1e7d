// Runs `rewardsmith` command lines in one child process (helpers/cli-cases.ts, the real dispatcher `runCli`,
// what the program runs): one process start for many command lines instead of one each. Asynchronous, so that
// a test server in this process can answer. `cliSession` keeps the process for a test file's command lines, run
// one at a time in the order asked, each in its own working folder; `cliAll` runs a list of them and ends it.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TSX = pathToFileURL(path.join(__dirname, '..', '..', '..', 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export interface CliCase {
  args: string[];
  /** Environment variables to set (a null value unsets one) for this command line only. */
  env?: Record<string, string | null>;
  /** Its working folder (default: the session's). */
  cwd?: string;
  /** How long it may take (default: the session's bound). */
  timeoutMs?: number;
}

export interface CliSession {
  run(args: string[], options?: Omit<CliCase, 'args'>): Promise<CliResult>;
  close(): void;
}

// Between command lines the process does not keep this one alive; it ends itself when this one ends.
const idle = (c: ChildProcess) => (c.unref(), c.channel?.unref());
const busy = (c: ChildProcess) => (c.ref(), c.channel?.ref());

/** A child process that runs command lines in `cwd` until closed; each command line is bounded by `timeoutMs`. */
export function cliSession(cwd: string, timeoutMs = 300_000): CliSession {
  let child: ChildProcess | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  const start = () => {
    // Started on first use: a test file that closes a session it never used pays nothing.
    const c = fork(path.join(__dirname, 'cli-cases.ts'), [], { cwd, execArgv: ['--import', TSX], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    c.on('exit', () => {
      if (child === c) child = null;
    });
    idle(c);
    return c;
  };
  const runOne = ({ timeoutMs: limit = timeoutMs, ...c }: CliCase) =>
    new Promise<CliResult>((resolve, reject) => {
      const proc = (child ??= start());
      busy(proc);
      const timer = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`rewardsmith ${c.args.join(' ')}: no result within ${limit} ms`));
      }, limit);
      const done = (fn: () => void) => {
        clearTimeout(timer);
        proc.off('message', onMessage);
        proc.off('exit', onExit);
        idle(proc);
        fn();
      };
      const onMessage = (r: CliResult) => done(() => resolve(r));
      const onExit = (code: number | null, signal: string | null) =>
        done(() => reject(new Error(`rewardsmith ${c.args.join(' ')}: the command process ended (${signal ?? `exit ${code}`}) without a result`)));
      proc.on('message', onMessage);
      proc.on('exit', onExit);
      proc.send({ cwd, ...c });
    });
  return {
    run(args, options = {}) {
      const next = queue.then(() => runOne({ args, ...options }));
      queue = next.catch(() => undefined);
      return next;
    },
    close() {
      child?.kill('SIGKILL');
      child = null;
    },
  };
}

/** Runs the command lines in order in one process in `cwd`, all of them within `timeoutMs`; their results in order. */
export async function cliAll(cwd: string, cases: CliCase[], timeoutMs = 300_000): Promise<CliResult[]> {
  const session = cliSession(cwd, timeoutMs);
  const deadline = Date.now() + timeoutMs;
  try {
    const results: CliResult[] = [];
    for (const c of cases) results.push(await session.run(c.args, { ...c, timeoutMs: Math.max(1, deadline - Date.now()) }));
    return results;
  } finally {
    session.close();
  }
}
