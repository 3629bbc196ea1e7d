// The linter's speed and robustness as the editor needs them. Re-lint after an edit, in process (update the
// project + every rule + TypeScript's diagnostics, what the server does per didChange before publishing): a
// 300-line and a 3,000-line reward, 60 edits each, wall-clock and CPU time. Then the fuzz: BENCH_FUZZ_CASES
// (default 10,000) mutated bundled rewards, incrementally per file; every case must answer without throwing.
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { RewardProject } from '../../runner/src/lint/analysis';
import { lintSnapshot } from '../../runner/src/lint/rules';
import { bundledRewards, mutate, prng } from '../../runner/test/helpers/lint-fuzz';
import { rewardFile } from './lsp.bench';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

function relint(helpers: number, lines: number): string {
  const text = rewardFile(helpers, lines);
  const project = new RewardProject(path.join(__dirname, `bench-${lines}-lines.reward.ts`), text);
  const first = lintSnapshot(project.snapshot());
  if (first.some((d) => d.severity === 'error' || d.severity === 'warning')) throw new Error(`benchmark file is not clean: ${first[0]!.message}`);
  const wall: number[] = [];
  const cpu: number[] = [];
  let current = text;
  for (let n = 0; n < 60; n++) {
    // Alternately change a threshold and put it back, at a different helper each time.
    const from = n % 2 === 0 ? 'before[0] - 0.05' : 'before[0] - 0.07';
    const to = n % 2 === 0 ? 'before[0] - 0.07' : 'before[0] - 0.05';
    current = current.replace(from, to);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    project.update(current);
    lintSnapshot(project.snapshot());
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  project.dispose();
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return `| ${lines.toLocaleString('en-US')} lines (${helpers} helpers) | ${percentile(wall, 50).toFixed(1)} ms | ${percentile(wall, 95).toFixed(1)} ms | ${percentile(cpu, 50).toFixed(1)} ms | ${percentile(cpu, 95).toFixed(1)} ms |`;
}

export async function run(): Promise<void> {
  console.log(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}`,
  );
  console.log(
    're-lint after an edit, in process (RewardProject.update + lintSnapshot: all rules and TypeScript diagnostics), 60 edits each; target: median ≤ 20 ms at 300 lines\n',
  );
  console.log('| file | wall median | wall p95 | CPU median | CPU p95 |\n|---|---:|---:|---:|---:|');
  console.log(relint(30, 300));
  console.log(relint(300, 3000));
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}\n`,
  );

  const cases = Number(process.env.BENCH_FUZZ_CASES ?? 10_000);
  const rewards = bundledRewards();
  const random = prng(1);
  const projects = rewards.map((r) => new RewardProject(`/fuzz/${r.name}`, r.text));
  const times: number[] = [];
  let diagnostics = 0;
  const failures: string[] = [];
  const started = performance.now();
  for (let n = 0; n < cases; n++) {
    const k = n % rewards.length;
    const { text, kinds } = mutate(rewards[k]!.text, random);
    const t0 = performance.now();
    try {
      projects[k]!.update(text);
      diagnostics += lintSnapshot(projects[k]!.snapshot()).length;
    } catch (err) {
      failures.push(`case ${n} (${rewards[k]!.name}: ${kinds.join(', ')}): ${(err as Error).message}`);
    }
    times.push(performance.now() - t0);
  }
  for (const p of projects) p.dispose();
  times.sort((a, b) => a - b);
  console.log(
    `fuzz: ${cases.toLocaleString('en-US')} mutated bundled rewards (${rewards.length} files; deletions, insertions, truncations, unbalanced brackets, unicode, nesting up to 1,500), ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  if (cases === 0) return; // BENCH_FUZZ_CASES=0: the re-lint figures only
  console.log(
    `answered: ${cases - failures.length} of ${cases}; threw: ${failures.length}; diagnostics: ${diagnostics.toLocaleString('en-US')}; per case median ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${times.at(-1)!.toFixed(0)} ms`,
  );
  for (const f of failures.slice(0, 10)) console.log(`  ${f}`);
  if (failures.length > 0) process.exitCode = 1;
}

if (require.main === module) void run();
