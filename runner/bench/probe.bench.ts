// Reward probes: the size and recording cost of each built-in task's probe bank, and the time to probe a reward
// on it (the replay in the sandbox and the properties): a generated 300-line reward (many terms, helpers and
// branches, the size of a long LLM-written reward) and each of the project's rewards. Wall time and CPU seconds
// (this process plus the reaped sandbox hosts, from /proc/self/stat), with the load average beside, since the
// machine is shared.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { bankFile, probeBank, probeReward, recordBank } from '../src/probe/index';
import { BUILTIN_TASKS, resolveTask, taskFromHeader } from '../src/tasks';
import { cpuSeconds } from './cpu';

const load = () => loadavg()[0]!.toFixed(1);

/** A reward of about 300 lines: TERMS shaping terms, each a helper with branches, summed with the scale rule. */
export function longReward(terms = 24): string {
  const names = ['cow', 'pig', 'sheep', 'chicken', 'oak_log', 'grass', 'poppy', 'dandelion'];
  const helpers = Array.from({ length: terms }, (_, i) => {
    const name = names[i % names.length];
    return `  function term${i}(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA) {
    const now = current_nearest_blocks['${name}'];
    const before = previous_nearest_blocks['${name}'];
    if (now === undefined) return 0;
    const key = 'best${i}';
    const best = GLOBAL_DATA[key] ?? now[0];
    GLOBAL_DATA[key] = Math.min(best, now[0]);
    if (before !== undefined && Math.abs(now[1]) < Math.abs(before[1]) - 0.01) return 0.001;
    const [x, , z] = past_agent_positions[past_agent_positions.length - 1];
    return best > now[0] ? 0.01 * (best - now[0]) + 0 * (x + z) : 0;
  }`;
  });
  const sum = Array.from(
    { length: terms },
    (_, i) => `    dense += term${i}(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA);`,
  );
  return `// task: approach-cow
export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
${helpers.join('\n\n')}

  let sparse = 0;
  const cow = current_nearest_blocks['cow'];
  if (cow !== undefined && cow[0] < 2) sparse = 1;
  if (health <= 0) sparse = -1;
  let dense = 0;
${sum.join('\n')}
  return Math.sign(sparse) * 1 + Math.sign(dense) * 0.1;
}
`;
}

export async function run(): Promise<void> {
  console.log("method: each task's bank recorded once more (not from the cache), then each reward probed 3 times on the cached bank, best reported");
  console.log('| task | episodes | reward calls | bank on disk | record: CPU s | load |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const task of Object.values(BUILTIN_TASKS)) {
    const c0 = cpuSeconds();
    const bank = recordBank(task);
    const cpu = cpuSeconds() - c0;
    probeBank(task); // cached for the probes below
    const file = bankFile(task);
    const size = existsSync(file) ? `${(statSync(file).size / 1024).toFixed(0)} KiB` : '—';
    const steps = bank.episodes.reduce((n, e) => n + e.obs.length - 1, 0);
    console.log(`| ${task.id} | ${bank.episodes.length} | ${steps.toLocaleString('en-US')} | ${size} | ${cpu.toFixed(1)} | ${load()} |`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'probe-bench-'));
  try {
    const long = path.join(dir, 'long.reward.ts');
    writeFileSync(long, longReward());
    const rewards = [long, ...readdirSync(path.join(__dirname, '..', 'rewards')).map((f) => path.join(__dirname, '..', 'rewards', f))];
    console.log('\n| reward | lines | task | probe wall s | probe CPU s | calls | calls per CPU-second | findings | load |');
    console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|');
    for (const file of rewards) {
      const text = readFileSync(file, 'utf8');
      const task = resolveTask(taskFromHeader(text)!);
      let best = { wall: Infinity, cpu: Infinity, calls: 0, findings: 0 };
      // The bank passed in: probeReward keeps recent results by bank and text, so rounds 2 and 3 would be cache hits.
      const bank = probeBank(task);
      for (let round = 0; round < 3; round++) {
        const c0 = cpuSeconds();
        const t0 = performance.now();
        const r = await probeReward(file, task, { bank });
        const wall = (performance.now() - t0) / 1000;
        const cpu = cpuSeconds() - c0;
        if (cpu < best.cpu) best = { wall, cpu, calls: r.calls, findings: r.findings.filter((f) => f.severity !== 'information').length };
      }
      const name = file === long ? 'generated long reward' : path.basename(file);
      console.log(
        `| ${name} | ${text.split('\n').length} | ${task.id} | ${best.wall.toFixed(2)} | ${best.cpu.toFixed(2)} | ${best.calls.toLocaleString('en-US')} | ${Math.round(best.calls / best.cpu).toLocaleString('en-US')} | ${best.findings} | ${load()} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
