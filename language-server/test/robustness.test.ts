// The language server under a broken or a hurried client, spawned over stdio as an editor starts it:
// framing errors end it with a message (so the client restarts it) instead of leaving it alive and deaf, and
// an edit storm is linted at its latest version only, with hover and completion answered in between.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { CompletionItem, Hover, PublishDiagnosticsParams } from 'vscode-languageserver-protocol';
import { serverNodeArgs } from '../../runner/test/helpers/cli-process';
import { FramingCheck } from '../src/framing';

const root = path.join(__dirname, '..', '..');
const fixture = path.join(__dirname, 'fixtures', 'buggy', 'paper-explore-diamond-printed.reward.ts');
const uri = pathToFileURL(fixture).href;

interface Server {
  child: ChildProcess;
  client: MessageConnection;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function startServer(): Promise<Server> {
  const child = spawn(process.execPath, [...(await serverNodeArgs()), '--stdio'], {
    cwd: root,
    env: { ...process.env, OPENAI_BASE_URL: '', OPENAI_API_KEY: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const client = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  client.listen();
  await client.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} });
  await client.sendNotification('initialized', {});
  return { child, client, stderr: () => stderr, exited };
}

/** A framed message with the Content-Length `length` (default: the body's). */
function frame(body: unknown, length?: number): string {
  const text = JSON.stringify(body);
  return `Content-Length: ${length ?? Buffer.byteLength(text)}\r\n\r\n${text}`;
}

/** Resolves with the exit code, or with 'alive' if the process is still running after `ms`. */
function exitOrAlive(server: Server, ms: number): Promise<number | null | 'alive'> {
  return Promise.race([server.exited, new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), ms).unref())]);
}

describe('framing errors end the server with a message, so that the client restarts it', () => {
  const shutdown = { jsonrpc: '2.0', id: 99, method: 'shutdown' };
  const cases: [string, string, RegExp][] = [
    ['Content-Length: -5', frame(shutdown, -5), /Content-Length "-5" is not a byte count/],
    [
      'a message with no Content-Length',
      `Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${JSON.stringify(shutdown)}`,
      /without one Content-Length header/,
    ],
    ['a Content-Length smaller than the body', frame(shutdown, 10) + frame(shutdown), /a message body that is not JSON \(is its Content-Length right\?\)/],
  ];
  for (const [name, bytes, problem] of cases) {
    test(name, { timeout: 60_000 }, async () => {
      const server = await startServer();
      try {
        // A healthy exchange first: the check follows the stream message by message.
        assert.equal(await server.client.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } }), null);
        server.child.stdin!.write(bytes);
        const outcome = await exitOrAlive(server, 15_000);
        assert.equal(
          outcome,
          1,
          `the server is ${outcome === 'alive' ? 'still alive, answering nothing' : `gone with ${outcome}`}; stderr: ${server.stderr()}`,
        );
        assert.match(
          server.stderr(),
          new RegExp(`^rewardsmith language server: the client sent .*${problem.source}.*; exiting so that the client restarts the server\\n$`, 'm'),
        );
      } finally {
        server.child.kill('SIGKILL');
        server.client.dispose();
      }
    });
  }
});

test('the framing check passes well-framed streams however they are cut, and names what breaks one', () => {
  const good = [
    frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { text: 'ünïcödé → 🌲' } }),
    `Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}`,
    `content-length: 2\r\n\r\n[]`,
  ].join('');
  const bytes = Buffer.from(good);
  for (const size of [1, 3, 7, bytes.length]) {
    const check = new FramingCheck();
    for (let at = 0; at < bytes.length; at += size) assert.equal(check.push(bytes.subarray(at, at + size)), undefined, `chunks of ${size}`);
  }
  const broken: [string, RegExp][] = [
    [frame({ a: 1 }, -5), /Content-Length "-5" is not a byte count/],
    ['Content-Length: 12abc\r\n\r\n{}', /Content-Length "12abc" is not a byte count/],
    [`Content-Length: ${2 ** 40}\r\n\r\n`, /over the 67108864-byte limit/],
    ['Content-Type: x\r\n\r\n{}', /without one Content-Length header/],
    ['Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}', /without one Content-Length header/],
    ['Content-Length : 2\r\n\r\n{}', /not a message header/],
    ['Foo\r\nContent-Length: 2\r\n\r\n{}', /a header line without a colon/],
    [frame({ a: 'b' }, 4), /a message body that is not JSON/],
    [frame({ a: 'b' }, 12) + frame({}), /a message body that is not JSON/],
    [`Content-Length: 1\r\n${'X-Pad: y\r\n'.repeat(1000)}\r\n`, /a header block longer than 8192 bytes/],
  ];
  for (const [stream, problem] of broken) {
    const whole = new FramingCheck().push(Buffer.from(stream));
    assert.match(whole ?? '', problem, JSON.stringify(stream.slice(0, 60)));
    const bytewise = new FramingCheck();
    let seen: string | undefined;
    for (const b of Buffer.from(stream)) seen ??= bytewise.push(Buffer.from([b]));
    assert.equal(seen, whole);
  }
});

describe('an edit storm', () => {
  test('three bursts of 1,000 edits: hover and completion are answered after each, diagnostics go to the latest versions only', {
    timeout: 180_000,
  }, async () => {
    const server = await startServer();
    const publishes: number[] = [];
    let latest: PublishDiagnosticsParams | undefined;
    const waiters: (() => void)[] = [];
    server.client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      if (p.uri !== uri) return;
      publishes.push(p.version ?? -1);
      latest = p;
      for (const w of waiters.splice(0)) w();
    });
    const publishedVersion = (v: number) =>
      new Promise<void>((resolve) => {
        const check = () => (latest?.version === v ? resolve() : waiters.push(check));
        check();
      });
    try {
      const text = readFileSync(fixture, 'utf8');
      const lines = text.split('\n');
      let version = 1;
      await server.client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version, text } });
      await publishedVersion(1);
      publishes.length = 0;
      // Typing into a comment, one character per didChange, as a client replaying keystrokes sends them.
      const commentLine = lines.findIndex((l) => l.includes('// Penalise losing health.'));
      let column = lines[commentLine]!.length;
      const healthLine = lines.findIndex((l) => l.includes('if (health < GLOBAL_DATA'));
      const healthAt = { line: healthLine, character: lines[healthLine]!.indexOf('health') + 2 };
      const nameLine = lines.findIndex((l) => l.includes("'diamond_ore' in current_nearest_blocks &&"));
      const inName = { line: nameLine, character: lines[nameLine]!.indexOf("'diamond_ore'") + 3 };
      for (let burst = 1; burst <= 3; burst++) {
        for (let k = 0; k < 1000; k++) {
          version++;
          const at = { line: commentLine, character: column++ };
          void server.client.sendNotification('textDocument/didChange', {
            textDocument: { uri, version },
            contentChanges: [{ range: { start: at, end: at }, text: 'x' }],
          });
        }
        const hover = (await server.client.sendRequest('textDocument/hover', { textDocument: { uri }, position: healthAt })) as Hover | null;
        assert.match(JSON.stringify(hover?.contents ?? null), /health/, `burst ${burst}: hover over health`);
        const completion = (await server.client.sendRequest('textDocument/completion', { textDocument: { uri }, position: inName })) as
          | CompletionItem[]
          | { items: CompletionItem[] };
        const items = Array.isArray(completion) ? completion : completion.items;
        assert.ok(
          items.some((i) => i.label === 'diamond_ore'),
          `burst ${burst}: block names completed`,
        );
      }
      await publishedVersion(version);
      // Linted at the versions current when edits paused (a few: after each burst, and when a request held
      // the queue up long enough), never once per edit.
      assert.ok(publishes.length <= 30, `${publishes.length} publishes for 3,000 edits: ${publishes.slice(0, 12).join(', ')} …`);
      assert.equal(publishes.at(-1), version);
      assert.deepEqual(
        // The lint's (the probes may also have reported by now, under their own source).
        latest!.diagnostics.filter((d) => d.source === 'rewardsmith').map((d) => d.code),
        ['unknown-name', 'unknown-name', 'global-data-uninitialised', 'scale-swapped'],
      );
    } finally {
      await server.client.sendRequest('shutdown').catch(() => undefined);
      server.child.kill('SIGKILL');
      server.client.dispose();
    }
  });
});
