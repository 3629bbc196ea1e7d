// `npm start` as a user runs it, phase by phase: the build (none when nothing changed since the last), `pretrain` (start-up, the teacher's demonstrations,
// behaviour cloning, the foundation's held-out evaluation) and `train --init` (start-up with the reward's check,
// training, the held-out evaluation, the report), each command a child process as `npm start` runs it, in a
// temporary folder and with an empty cache (the probe bank is recorded as on a first run). A phase ends when its
// command prints the line that starts the next; its CPU is the command's process tree's (threads, the reward
// sandbox host) from /proc, with the load average at its start and end. It prints the held-out results, to
// compare with `npm start`'s. About 6 CPU-minutes. `npm run bench start`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { childrenCpuSeconds, treeCpuSeconds } from './cpu';

const ROOT = path.join(__dirname, '..', '..');
const CLI = path.join(ROOT, 'runner/bin/rewardsmith.js');
const load = () => loadavg()[0]!.toFixed(1);

interface Phase {
  name: string;
  cpu: number;
  wall: number;
  load: string;
}

/** Runs one command; a phase ends at the first output line matching its marker (the last one at exit). */
async function phases(args: string[], env: NodeJS.ProcessEnv, marks: { name: string; until: RegExp | null }[], lines: string[]): Promise<Phase[]> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  const reaped0 = childrenCpuSeconds();
  const out: Phase[] = [];
  let k = 0,
    cpu0 = 0,
    t0 = performance.now(),
    load0 = load();
  const close = (cpu: number) => {
    const t = performance.now();
    out.push({ name: marks[k]!.name, cpu: cpu - cpu0, wall: (t - t0) / 1000, load: `${load0}–${load()}` });
    cpu0 = cpu;
    t0 = t;
    load0 = load();
    k++;
  };
  const onLine = (line: string) => {
    lines.push(line);
    while (k < marks.length - 1 && marks[k]!.until?.test(line)) close(treeCpuSeconds(pid));
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`rewardsmith ${args[0]} exited ${code}:\n${lines.slice(-20).join('\n')}`);
  // The last phase ends at exit: the command's CPU is then among this process's reaped children.
  const total = childrenCpuSeconds() - reaped0;
  while (k < marks.length) close(total);
  return out;
}

/**
 * `npm start`'s build (`node build.mjs --if-stale`: nothing when no input changed since the last build). Its CPU
 * is sampled from /proc while it runs: esbuild's service process is never reaped, so no children count has it.
 */
async function buildPhase(): Promise<Phase> {
  const t0 = performance.now(),
    load0 = load(),
    reaped0 = childrenCpuSeconds();
  const child = spawn(process.execPath, [path.join(ROOT, 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = 0,
    stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.resume();
  const sampler = setInterval(() => (seen = Math.max(seen, treeCpuSeconds(child.pid!))), 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`build failed: ${stderr}`);
  const cpu = Math.max(seen, childrenCpuSeconds() - reaped0);
  return { name: 'build (--if-stale)', cpu, wall: (performance.now() - t0) / 1000, load: `${load0}–${load()}` };
}

export async function run(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rs-bench-start-'));
  const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, 'cache') };
  const lines: string[] = [];
  try {
    const rows: Phase[] = [];
    rows.push(await buildPhase());
    const foundation = path.join(dir, 'foundation');
    rows.push(
      ...(await phases(
        ['pretrain', '--task', 'approach-tree', '--out', foundation, '--overwrite'],
        env,
        [
          { name: 'pretrain: start-up', until: /^pretrain approach-tree:/ },
          // The cloning's first progress line ("[…] behaviour cloning 1/30 epochs"), not the start line that names it.
          { name: 'pretrain: 4 demonstrations', until: /\] behaviour cloning \d+\// },
          { name: 'pretrain: behaviour cloning', until: /^evaluating the foundation policy/ },
          { name: "pretrain: the foundation's held-out evaluation (100)", until: null },
        ],
        lines,
      )),
    );
    rows.push(
      ...(await phases(
        [
          'train',
          'runner/rewards/approach-tree.dense.reward.ts',
          '--task',
          'approach-tree',
          '--init',
          foundation,
          '--out',
          path.join(dir, 'main'),
          '--overwrite',
        ],
        env,
        [
          { name: "train: start-up + the reward's check (lint, probes; bank recorded)", until: /^train approach-tree with/ },
          { name: 'train: 256,000 frames', until: /^evaluating on \d+ held-out worlds/ },
          { name: 'train: held-out evaluation (100)', until: /^run folder:/ },
          { name: 'train: report (analysis, playback) + exit', until: null },
        ],
        lines,
      )),
    );
    const width = Math.max(...rows.map((r) => r.name.length));
    for (const r of rows)
      console.log(`  ${r.name.padEnd(width)}  ${r.cpu.toFixed(1).padStart(6)} CPU s  ${r.wall.toFixed(1).padStart(6)} s wall  load ${r.load}`);
    const cpu = rows.reduce((t, r) => t + r.cpu, 0),
      wall = rows.reduce((t, r) => t + r.wall, 0);
    console.log(`  ${'npm start'.padEnd(width)}  ${cpu.toFixed(1).padStart(6)} CPU s  ${wall.toFixed(1).padStart(6)} s wall`);
    for (const line of lines.filter((l) => /^foundation policy, held-out|^\| approach-tree/.test(l))) console.log(`  ${line}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
