// Language-server latency as an editor sees it: the server is spawned over stdio and driven by a real
// JSON-RPC client. A generated 300-line reward file (30 helpers in the paper's style) is opened, then edited
// 60 times with incremental changes (a constant changed, alternately introducing and removing a defect);
// each latency is from sending didChange to receiving the publishDiagnostics for that version.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, loadavg } from 'node:os';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { RewardProject } from '../../runner/src/lint/analysis';
import { lintSnapshot } from '../../runner/src/lint/rules';

const NAMES = [
  'oak_log',
  'birch_log',
  'cow',
  'pig',
  'sheep',
  'chicken',
  'lava',
  'water',
  'diamond_ore',
  'iron_ore',
  'coal_ore',
  'stone',
  'grass_block',
  'sand',
  'gravel',
];
const HELPERS = 30;

/** A realistic 300-line reward: helpers over nearest-block entries, memory, and the scale rule. */
export function rewardFile300(): string {
  return rewardFile(HELPERS, 300);
}

/** The same shape with `helpers` helpers, padded with comment lines to `length` lines. */
export function rewardFile(helpers: number, length: number): string {
  const lines = ['// task: explore-diamond', '// Generated for the language-server benchmark: 30 shaping helpers, summed.', ''];
  lines.push('export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {');
  for (let i = 0; i < helpers; i++) {
    const name = NAMES[i % NAMES.length]!;
    lines.push(
      `  function approach_${i}(current_nearest_blocks, previous_nearest_blocks) {`,
      `    const now = current_nearest_blocks['${name}'];`,
      `    const before = previous_nearest_blocks['${name}'];`,
      '    if (now === undefined || before === undefined) return 0;',
      '    if (now[0] < before[0] - 0.05) return 1;',
      '    if (Math.abs(now[1]) < Math.abs(before[1]) - 0.01) return 0.5;',
      '    return -0.5;',
      '  }',
      '',
    );
  }
  lines.push("  if (!('visited' in GLOBAL_DATA)) GLOBAL_DATA.visited = new Set<string>();");
  lines.push('  const [x, , z] = past_agent_positions[past_agent_positions.length - 1];');
  lines.push('  const cell = `${Math.floor(x / 4)},${Math.floor(z / 4)}`;');
  lines.push('  let dense = GLOBAL_DATA.visited.has(cell) ? 0 : 1;');
  lines.push('  GLOBAL_DATA.visited.add(cell);');
  for (let i = 0; i < helpers; i += 3)
    lines.push(
      `  dense += approach_${i}(current_nearest_blocks, previous_nearest_blocks) + approach_${i + 1}(current_nearest_blocks, previous_nearest_blocks) + approach_${i + 2}(current_nearest_blocks, previous_nearest_blocks);`,
    );
  lines.push("  const diamond = current_nearest_blocks['diamond_ore'];");
  lines.push('  const sparse = diamond !== undefined && diamond[0] < 2 ? 1 : health <= 0 ? -1 : 0;');
  lines.push('  return Math.sign(sparse) * 1 + Math.sign(dense) * 0.1;');
  lines.push('}');
  while (lines.length < length) lines.splice(3, 0, '// padding comment: design notes');
  return lines.join('\n') + '\n';
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function run(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const text = rewardFile300();
  const uri = pathToFileURL(path.join(root, 'bench-300-lines.reward.ts')).href;
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'language-server', 'src', 'server.ts'), '--stdio'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const client = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const waiting = new Map<number, (p: PublishDiagnosticsParams) => void>();
  client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => waiting.get(p.version ?? -1)?.(p));
  client.listen();
  const published = (version: number) => new Promise<PublishDiagnosticsParams>((resolve) => waiting.set(version, resolve));
  await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} });
  await client.sendNotification('initialized', {});
  const initialized = performance.now() - t0;

  let version = 1;
  const tOpen = performance.now();
  const first = published(version);
  await client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version, text } });
  const firstDiagnostics = await first;
  const firstMs = performance.now() - tOpen;
  if (firstDiagnostics.diagnostics.length !== 0) throw new Error(`benchmark file is not clean: ${JSON.stringify(firstDiagnostics.diagnostics[0])}`);

  // Edit line of helper k's "0.05": alternately 0.05 → 0.07 and back, and every 4th edit an unknown name.
  const lines = text.split('\n');
  const thresholdLines = lines.map((l, i) => (l.includes('before[0] - 0.05') ? i : -1)).filter((i) => i >= 0);
  const latencies: number[] = [];
  let defects = 0;
  for (let n = 0; n < 60; n++) {
    const line = thresholdLines[n % thresholdLines.length]!;
    const col = lines[line]!.indexOf('0.05');
    const change = n % 4 === 3 ? { line: line - 3, from: "'", to: "'mag" } : { line, from: '', to: '' };
    version++;
    const done = published(version);
    const start = performance.now();
    if (change.from) {
      // Insert "mag" into a name (an unknown-name error), removed again by the next edit of this kind.
      const nameCol = lines[change.line]!.indexOf("['") + 2;
      await client.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { line: change.line, character: nameCol }, end: { line: change.line, character: nameCol } }, text: 'mag' }],
      });
      const p = await done;
      latencies.push(performance.now() - start);
      if (p.diagnostics.some((d) => d.code === 'unknown-name')) defects++;
      version++;
      const undo = published(version);
      await client.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { line: change.line, character: nameCol }, end: { line: change.line, character: nameCol + 3 } }, text: '' }],
      });
      await undo;
    } else {
      const value = n % 2 === 0 ? '0.07' : '0.05';
      await client.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: { line, character: col }, end: { line, character: col + 4 } }, text: value }],
      });
      await done;
      latencies.push(performance.now() - start);
      lines[line] = lines[line]!.slice(0, col) + value + lines[line]!.slice(col + 4);
    }
  }
  await client.sendRequest('shutdown');
  await client.sendNotification('exit');
  client.dispose();
  // The same re-lint in this process, timed by CPU time as well: wall latency depends on what else runs on
  // the machine (report the load average with it); CPU time per re-lint much less so.
  const project = new RewardProject(path.join(root, 'bench-300-lines.reward.ts'), text);
  lintSnapshot(project.snapshot());
  let current = text;
  const cpu: number[] = [];
  for (let n = 0; n < 60; n++) {
    current = n % 2 === 0 ? current.replace('0.05', '0.07') : current.replace('0.07', '0.05');
    const c0 = process.cpuUsage();
    project.update(current);
    lintSnapshot(project.snapshot());
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  project.dispose();
  const cpuSorted = cpu.sort((a, b) => a - b);
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(`file: ${lines.length - 1} lines, ${HELPERS} helpers; server over stdio (node --import tsx language-server/src/server.ts --stdio)`);
  console.log(`server start → initialize answered: ${initialized.toFixed(0)} ms`);
  console.log(`didOpen → first diagnostics: ${firstMs.toFixed(0)} ms (includes loading the schema and parsing lib.es2022.d.ts)`);
  console.log(
    `machine load while measuring: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (1/5/15 min) on ${cpus().length} cores`,
  );
  console.log(
    `re-lint CPU time in-process (update + all rules + TypeScript diagnostics, 60 edits): median ${percentile(cpuSorted, 50).toFixed(1)} ms, p95 ${percentile(cpuSorted, 95).toFixed(1)} ms`,
  );
  console.log(
    `re-lint after edit (didChange → publishDiagnostics, ${latencies.length} edits, ${defects} of them introduce an unknown-name that was reported): median ${percentile(sorted, 50).toFixed(1)} ms, p95 ${percentile(sorted, 95).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (target: median ≤ 50 ms)`,
  );
}

if (require.main === module) void run();
