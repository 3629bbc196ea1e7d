// `npm run bench`: runs every benchmark module in this folder and in language-server/bench (each exports
// `run(): Promise<void>` and prints its own figures with the machine and method), or only those named on the
// command line.
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';

async function main() {
  const only = process.argv.slice(2);
  const folders = [__dirname, path.join(__dirname, '..', '..', 'language-server', 'bench')];
  const files = folders
    .flatMap((dir) => readdirSync(dir).map((f) => path.join(dir, f)))
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => path.basename(f).startsWith(o)))
    .sort((a, b) => path.basename(a).localeCompare(path.basename(b)));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# Rewardsmith benchmarks — ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}\n`);
  for (const f of files) {
    console.log(`## ${path.basename(f).replace(/\.bench\.ts$/, '')}`);
    const mod = (await import(f)) as { run: () => Promise<void> };
    await mod.run();
    console.log('');
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
