// The probes as the editor runs them: the same long reward (the generated 300-line one of probe.bench.ts) probed
// again and again in one process, its task's bank already in memory. Cold: a sandbox host started for each probe
// (as before hosts were kept warm); warm: the host kept between probes, started once beforehand (the language
// server starts it when it first sees a reward file). CPU seconds are this process's, its reaped hosts' and the
// warm host's own (from /proc; Linux), with the load average beside.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { probeBank, probeReward } from '../src/probe/index';
import { endWarmHosts, prewarmSandboxHost, warmHostPids } from '../src/reward/index';
import { resolveTask } from '../src/tasks';
import { longReward } from './probe.bench';
import { statSeconds } from './cpu';

/** CPU seconds of this process, its reaped children and the warm hosts alive now. */
const cpuSeconds = () => statSeconds('/proc/self/stat', true) + warmHostPids().reduce((s, pid) => s + statSeconds(`/proc/${pid}/stat`, false), 0);

const ROUNDS = 5;

export async function run(): Promise<void> {
  const task = resolveTask('approach-cow');
  const bank = probeBank(task);
  const dir = mkdtempSync(path.join(tmpdir(), 'probe-editor-bench-'));
  try {
    const file = path.join(dir, 'long.reward.ts');
    const text = longReward();
    writeFileSync(file, text);
    console.log(
      `method: a ${text.split('\n').length}-line reward probed ${ROUNDS} times per row on ${task.id}'s bank (${bank.episodes.length} episodes, in memory); median of the rounds`,
    );
    console.log('| host | probe wall s | probe CPU s | calls | calls per CPU-second | load |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const warm of [false, true]) {
      await endWarmHosts();
      if (warm) prewarmSandboxHost();
      const rounds: { wall: number; cpu: number; calls: number }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        if (!warm) await endWarmHosts();
        const pidsBefore = warmHostPids();
        const c0 = cpuSeconds();
        const t0 = performance.now();
        // Another text each round (a comment at the end), as an edit makes it: the same text is not probed twice.
        const r = await probeReward(file, task, { source: `${text}// round ${warm} ${round}\n` });
        const wall = (performance.now() - t0) / 1000;
        if (!warm) await endWarmHosts(); // reaped: its CPU time moves to this process's children
        // The warm host counted before and after is the same process (it stays warm between probes).
        const cpu = cpuSeconds() - c0;
        if (warm && warmHostPids().join() !== pidsBefore.join()) console.log('(the warm host changed during a round)');
        rounds.push({ wall, cpu, calls: r.calls });
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const cpu = median(rounds.map((r) => r.cpu));
      console.log(
        `| ${warm ? 'warm (kept between probes)' : 'cold (started per probe)'} | ${median(rounds.map((r) => r.wall)).toFixed(2)} | ${cpu.toFixed(2)} | ${rounds[0]!.calls.toLocaleString('en-US')} | ${Math.round(rounds[0]!.calls / cpu).toLocaleString('en-US')} | ${loadavg()[0]!.toFixed(1)} |`,
      );
    }
  } finally {
    await endWarmHosts();
    rmSync(dir, { recursive: true, force: true });
  }
}
