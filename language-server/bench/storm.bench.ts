// An edit storm as an editor can send one (a client replaying keystrokes, a formatter, a macro): the server
// spawned over stdio, the generated 300-line reward file opened, then three bursts of 1,000 one-character
// didChange edits, written as fast as the pipe takes them, with a hover and a completion request after every
// 100th edit. Reports the latency of those requests (queued behind the edits before them), how many times
// diagnostics were published, the server's memory (VmRSS before, VmHWM after) and CPU time; then, in this
// process, the CPU time the server's path spends on such a request (apply 100 edits, update the TypeScript
// project, answer): on a loaded machine the wall latency is mostly waiting for a core, the CPU time is not.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { RewardProject } from '../../runner/src/lint/analysis';
import { completionsAt, hoverAt } from '../src/editor';
import { rewardFile300 } from './lsp.bench';

const BURSTS = Number(process.env.STORM_BURSTS ?? 3);
const EDITS = 1000;
const REQUEST_EVERY = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** VmRSS / VmHWM of a process in MB, and its CPU seconds (user + system). */
function usage(pid: number): { rssMb: number; peakMb: number; cpuS: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMb: kb('VmRSS') / 1000, peakMb: kb('VmHWM') / 1000, cpuS: (Number(fields[11]) + Number(fields[12])) / 100 };
}

export async function run(): Promise<void> {
  const root = path.join(__dirname, '..', '..');
  const text = rewardFile300();
  const uri = pathToFileURL(path.join(root, 'bench-storm.reward.ts')).href;
  const child = spawn(
    process.execPath,
    [
      ...(process.env.STORM_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/hp-prof'] : []),
      '--import',
      'tsx',
      path.join(root, 'language-server', 'src', 'server.ts'),
      '--stdio',
    ],
    {
      cwd: root,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const client = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  let publishes = 0;
  let lastVersion = 0;
  const waiters: (() => void)[] = [];
  client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
    publishes++;
    lastVersion = p.version ?? -1;
    for (const w of waiters.splice(0)) w();
  });
  client.listen();
  const published = (v: number) =>
    new Promise<void>((resolve) => {
      const check = () => (lastVersion === v ? resolve() : waiters.push(check));
      check();
    });
  await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} });
  await client.sendNotification('initialized', {});
  let version = 1;
  await client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version, text } });
  await published(1);
  const lines = text.split('\n');
  const commentLine = lines.findIndex((l) => l.startsWith('// padding comment'));
  const nameLine = lines.findIndex((l) => l.includes("current_nearest_blocks['"));
  const inName = { line: nameLine, character: lines[nameLine]!.indexOf("['") + 3 };
  const hoverAt = { line: nameLine, character: lines[nameLine]!.indexOf('current_nearest_blocks') + 3 };
  let column = lines[commentLine]!.length;
  const before = usage(child.pid!);
  publishes = 0;
  const hoverMs: number[] = [];
  const completionMs: number[] = [];
  const requests: Promise<void>[] = [];
  const t0 = performance.now();
  for (let burst = 0; burst < BURSTS; burst++) {
    for (let k = 1; k <= EDITS; k++) {
      version++;
      const at = { line: commentLine, character: column++ };
      void client.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: at, end: at }, text: 'x' }],
      });
      if (k % REQUEST_EVERY === 0) {
        const sent = performance.now();
        requests.push(
          client.sendRequest('textDocument/hover', { textDocument: { uri }, position: hoverAt }).then(() => void hoverMs.push(performance.now() - sent)),
          client
            .sendRequest('textDocument/completion', { textDocument: { uri }, position: inName })
            .then(() => void completionMs.push(performance.now() - sent)),
        );
        // Let the writes go out, as an editor's event loop would between keystrokes.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    await Promise.all(requests);
  }
  await published(version);
  const stormS = (performance.now() - t0) / 1000;
  const after = usage(child.pid!);
  await client.sendRequest('shutdown');
  await client.sendNotification('exit');
  client.dispose();
  const h = [...hoverMs].sort((a, b) => a - b);
  const c = [...completionMs].sort((a, b) => a - b);
  console.log(`file: 300 lines; ${BURSTS} bursts of ${EDITS} one-character didChange edits; hover + completion after every ${REQUEST_EVERY}th edit`);
  console.log(
    `machine load while measuring: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (1/5/15 min) on ${cpus().length} cores`,
  );
  console.log(
    `hover during the storm (${h.length}): median ${percentile(h, 50).toFixed(0)} ms, p95 ${percentile(h, 95).toFixed(0)} ms, max ${h.at(-1)!.toFixed(0)} ms (target ≤ 200 ms)`,
  );
  console.log(
    `completion during the storm (${c.length}): median ${percentile(c, 50).toFixed(0)} ms, p95 ${percentile(c, 95).toFixed(0)} ms, max ${c.at(-1)!.toFixed(0)} ms`,
  );
  console.log(`diagnostics published ${publishes} times for ${BURSTS * EDITS} edits; the last for the last version`);
  const cpu = requestCpu(text, commentLine, hoverAt, inName);
  console.log(
    `server path CPU time per request after ${REQUEST_EVERY} edits (in-process, ${cpu.hover.length} of each): hover median ${percentile(cpu.hover, 50).toFixed(1)} ms, p95 ${percentile(cpu.hover, 95).toFixed(1)} ms; completion median ${percentile(cpu.completion, 50).toFixed(1)} ms, p95 ${percentile(cpu.completion, 95).toFixed(1)} ms`,
  );
  console.log(
    `server memory: VmRSS ${before.rssMb.toFixed(0)} MB before the storm, peak (VmHWM) ${after.peakMb.toFixed(0)} MB, VmRSS ${after.rssMb.toFixed(0)} MB after; server CPU ${(after.cpuS - before.cpuS).toFixed(1)} s over ${stormS.toFixed(1)} s`,
  );
}

/** CPU milliseconds of the server's work for a hover (100 edits applied, project updated) and the completion after it. */
function requestCpu(text: string, commentLine: number, hover: Position, completion: Position): { hover: number[]; completion: number[] } {
  let doc = TextDocument.create('file:///bench-storm.reward.ts', 'typescript', 1, text);
  const project = new RewardProject('/bench-storm.reward.ts', text);
  project.snapshot();
  let column = text.split('\n')[commentLine]!.length;
  const out = { hover: [] as number[], completion: [] as number[] };
  const ms = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
  for (let r = 0; r < 30; r++) {
    const c0 = process.cpuUsage();
    for (let k = 0; k < REQUEST_EVERY; k++) {
      const at = { line: commentLine, character: column++ };
      doc = TextDocument.update(doc, [{ range: { start: at, end: at }, text: 'x' }], doc.version + 1);
    }
    project.update(doc.getText());
    const snap = project.snapshot();
    hoverAt(snap, snap.offset(hover));
    out.hover.push(ms(process.cpuUsage(c0)));
    const c1 = process.cpuUsage();
    const again = project.snapshot();
    completionsAt(again, again.offset(completion));
    out.completion.push(ms(process.cpuUsage(c1)));
  }
  project.dispose();
  return { hover: out.hover.sort((a, b) => a - b), completion: out.completion.sort((a, b) => a - b) };
}

interface Position {
  line: number;
  character: number;
}

if (require.main === module) void run();
