// `npm run bench`: runs every benchmark module in this folder (each exports `run(): Promise<void>` and prints
// its own figures with the machine and method), or only those named on the command line.
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';

async function main() {
  const only = process.argv.slice(2);
  const files = readdirSync(__dirname)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
    .sort();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# Rewardsmith benchmarks — ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}\n`);
  for (const f of files) {
    console.log(`## ${f.replace(/\.bench\.ts$/, '')}`);
    const mod = (await import(path.join(__dirname, f))) as { run: () => Promise<void> };
    await mod.run();
    console.log('');
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
