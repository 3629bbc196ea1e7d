// Runs many `rewardsmith` command lines in one process through the real dispatcher (`runCli`, what the
// program runs) and prints each one's exit code and output as one JSON array: a test of every command's exit
// codes costs one process instead of one per case. Input on stdin: [{ args, env? }…]; runs in the cwd.
import { runCli } from '../../src/dispatch';

interface Case {
  args: string[];
  /** Environment variables to set (a null value unsets one) for this case only. */
  env?: Record<string, string | null>;
}

async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += String(chunk);
  const cases = JSON.parse(input) as Case[];
  const results: { code: number; out: string; err: string }[] = [];
  const write = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  for (const c of cases) {
    let out = '';
    let err = '';
    const saved = Object.fromEntries(Object.keys(c.env ?? {}).map((k) => [k, process.env[k]]));
    for (const [k, v] of Object.entries(c.env ?? {}))
      if (v === null) delete process.env[k];
      else process.env[k] = v;
    process.stdout.write = ((chunk: string | Uint8Array) => ((out += String(chunk)), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => ((err += String(chunk)), true)) as typeof process.stderr.write;
    let code: number;
    try {
      code = await runCli(c.args);
    } catch (e) {
      code = -1;
      err += `runCli threw: ${e instanceof Error ? e.stack : String(e)}`;
    } finally {
      process.stdout.write = write.out;
      process.stderr.write = write.err;
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
    results.push({ code, out, err });
  }
  write.out(JSON.stringify(results));
  // Commands may leave handles (a sandbox host, a timer); the results are out, so this process is done.
  process.exit(0);
}

void main();
