// Training speed, the TensorFlow.js path (wasm backend) and the fused JS path side by side: `rewardsmith train`
// on approach-tree with the bundled dense reward, 65,536 frames (BENCH_TRAIN_FRAMES), no evaluation, each in a
// fresh process (train-process.ts). Prints frames per CPU-second of the whole process tree (main thread, env
// worker threads and the reward sandbox host; user + sys, start-up included), the load average around each
// run, and the phase profile of the main thread. `npm run bench train`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { PhaseTotals } from '../src/ppo/profile';

const FRAMES = Number(process.env.BENCH_TRAIN_FRAMES ?? 65_536);
const PATHS = (process.env.BENCH_TRAIN_BACKENDS ?? 'wasm,js').split(',');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface ProcessResult {
  backend: string;
  frames: number;
  processCpuSeconds: number;
  childrenCpuSeconds: number;
  wallSeconds: number;
  phases: Record<string, PhaseTotals>;
}

function trainProcess(backend: string): ProcessResult & { loadBefore: string; loadAfter: string } {
  const out = mkdtempSync(path.join(tmpdir(), 'rs-bench-train-'));
  const loadBefore = load();
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'train-process.ts'), backend, String(FRAMES), out], {
      encoding: 'utf8',
      timeout: 3_600_000,
    });
    if (r.status !== 0) throw new Error(`training on ${backend} failed: ${r.stderr}`);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as ProcessResult;
    return { ...result, loadBefore, loadAfter: load() };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  console.log(
    'reference (2026-11-26, 2-core AMD EPYC VM, load average 19-24): wasm 772 frames per CPU-second (84.9 s), fused JS 881 (74.4 s), 1.14x; PPO update 31.6 -> 19.0 CPU s.',
  );
  console.log(
    `method: train() on approach-tree, dense reward, seed 0, 32 envs, ${FRAMES.toLocaleString('en')} frames, no evaluation, one fresh process per path ` +
      `(TensorFlow.js ${PATHS.includes('wasm') ? 'wasm' : ''} then fused JS); CPU = user + sys of the process (main + env worker threads) and of its ` +
      `reaped children (the reward sandbox host), start-up included; ${cpus().length} cores. The phase table charges the main thread's own CPU ` +
      '(Linux schedstat); waits show the CPU of the thread that waits, not of what it waits for.',
  );
  const rate = (r: ProcessResult) => r.frames / (r.processCpuSeconds + r.childrenCpuSeconds);
  const results: ProcessResult[] = [];
  for (const backend of PATHS) {
    const r = trainProcess(backend);
    results.push(r);
    console.log(
      `${r.backend.padEnd(5)} ${rate(r).toFixed(0).padStart(6)} frames per CPU-second | CPU ${(r.processCpuSeconds + r.childrenCpuSeconds).toFixed(1)} s ` +
        `(process ${r.processCpuSeconds.toFixed(1)}, reward host ${r.childrenCpuSeconds.toFixed(1)}) | wall ${r.wallSeconds.toFixed(1)} s | load average ${r.loadBefore} → ${r.loadAfter}`,
    );
  }
  if (results.length === 2) console.log(`speed-up per CPU-second: ${(rate(results[1]!) / rate(results[0]!)).toFixed(2)}×`);
  const phases = [...new Set(results.flatMap((r) => Object.keys(r.phases)))];
  const width = Math.max(...phases.map((p) => p.length));
  console.log(
    `\n| ${'phase (main thread)'.padEnd(width)} | ${results.map((r) => `${r.backend} calls | ${r.backend} CPU s | ${r.backend} wall s`).join(' | ')} |`,
  );
  console.log(`|${'-'.repeat(width + 2)}|${results.map(() => '---:|---:|---:').join('|')}|`);
  for (const p of phases) {
    const cells = results.map((r) => {
      const t = r.phases[p];
      return t ? `${t.calls} | ${t.cpuSeconds.toFixed(2)} | ${t.wallSeconds.toFixed(2)}` : '— | — | —';
    });
    console.log(`| ${p.padEnd(width)} | ${cells.join(' | ')} |`);
  }
  const mainCpu = (r: ProcessResult) =>
    [
      'act: policy forward',
      'act: sample + buffer',
      'env step (wait for workers)',
      'reward (wait for sandbox)',
      'GAE',
      'PPO update',
      'checkpoint + metrics',
    ].reduce((s, p) => s + (r.phases[p]?.cpuSeconds ?? 0), 0);
  for (const r of results) {
    console.log(
      `${r.backend}: main thread in the loop ${mainCpu(r).toFixed(1)} CPU s; the rest of the process (env worker threads, start-up, GC threads) ${(r.processCpuSeconds - mainCpu(r)).toFixed(1)} s; reward host ${r.childrenCpuSeconds.toFixed(1)} s`,
    );
  }
}

if (require.main === module) void run();
