// Runs many `rewardsmith` command lines in one child process (helpers/cli-cases.ts, the real dispatcher) in
// `cwd`: one process start for all of them. Asynchronous, so that a test server in this process can answer.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TSX = pathToFileURL(path.join(__dirname, '..', '..', '..', 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function cliAll(cwd: string, cases: { args: string[]; env?: Record<string, string | null> }[], timeoutMs = 300_000): Promise<CliResult[]> {
  const child = spawn(process.execPath, ['--import', TSX, path.join(__dirname, 'cli-cases.ts')], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stdin.end(JSON.stringify(cases));
  const timer = setTimeout(() => child.kill(), timeoutMs);
  await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return JSON.parse(out) as CliResult[];
}
