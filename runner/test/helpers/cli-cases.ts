// The child process of helpers/cli-all.ts: runs each command line it is sent (over the IPC channel) through
// the real dispatcher (`runCli`, what the program runs), in the folder named, with the environment variables
// given set for it alone, and sends back its exit code and output. One at a time: stdout and stderr are taken
// over while a command runs.
import { runCli } from '../../src/dispatch';
import type { CliCase, CliResult } from './cli-all';

const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

async function runCase(c: CliCase & { cwd: string }): Promise<CliResult> {
  let out = '';
  let err = '';
  const saved = Object.fromEntries(Object.keys(c.env ?? {}).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(c.env ?? {}))
    if (v === null) delete process.env[k];
    else process.env[k] = v;
  process.chdir(c.cwd);
  process.stdout.write = ((chunk: string | Uint8Array) => ((out += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((err += String(chunk)), true)) as typeof process.stderr.write;
  // The output goes to a string, as it would to a pipe: no terminal (progress is then a line per tenth).
  const tty = { out: process.stdout.isTTY, err: process.stderr.isTTY };
  process.stdout.isTTY = process.stderr.isTTY = false;
  let code: number;
  try {
    code = await runCli(c.args);
  } catch (e) {
    code = -1;
    err += `runCli threw: ${e instanceof Error ? e.stack : String(e)}`;
  } finally {
    process.stdout.write = write.out;
    process.stderr.write = write.err;
    process.stdout.isTTY = tty.out;
    process.stderr.isTTY = tty.err;
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
  return { code, out, err };
}

// Commands may leave handles (a sandbox host, a timer): the session ends this process when it is done, and so
// does the end of the test process that started it.
process.on('message', (c: CliCase & { cwd: string }) => {
  void runCase(c).then((r) => process.send!(r));
});
process.on('disconnect', () => process.exit(0));
