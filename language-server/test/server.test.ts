// The language server as an editor sees it: spawned over stdio and driven by a real JSON-RPC client
// (vscode-jsonrpc, what vscode-languageclient uses). Diagnostics on open and change, quick fixes applied as
// edits, hover, completion, the critic (against the scripted OpenAI-compatible server through the real
// openai client) and analyzer suggestions with Apply/Dismiss.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { CodeAction, CompletionItem, Diagnostic, Hover, PublishDiagnosticsParams, TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { serverNodeArgs } from '../../runner/test/helpers/cli-process';
import { startLlmServer, type LlmTestServer } from '../../runner/test/helpers/llm-server';
import {
  CLIENT_COMMANDS,
  critiqueRequest,
  setSuggestionsNotification,
  suggestionResolvedNotification,
  SERVER_COMMANDS,
  type CritiqueResult,
} from '../../protocol/src/lsp';

const root = path.join(__dirname, '..', '..');
const buggyPath = path.join(__dirname, 'fixtures', 'buggy', 'paper-explore-diamond-printed.reward.ts');
const uri = pathToFileURL(buggyPath).href;

let llm: LlmTestServer;
let server: ChildProcess;
let client: MessageConnection;
let text = readFileSync(buggyPath, 'utf8');
let version = 1;
const published = new Map<string, PublishDiagnosticsParams>();
const waiters: (() => void)[] = [];
const resolved: { id: string; how: string }[] = [];
let stderr = '';
let criticTimeoutMs = 5000;

// The critic: a review anchored to the GLOBAL_DATA line (14) and the return line (32), unless the code is
// asked to answer malformed JSON.
let criticAnswer = (): string | { delayMs: number; reply: string } =>
  JSON.stringify({
    reasoning: 'The reward reads memory before writing it and weights dense above sparse.',
    success: false,
    critique: 'Initialise GLOBAL_DATA["health"]; swap the weights.',
    findings: [
      { line: 14, severity: 'error', message: 'GLOBAL_DATA["health"] is compared before it is stored.' },
      { line: 32, severity: 'warning', message: 'dense is weighted 1 and sparse 0.1.' },
    ],
  });

/** The main document's diagnostics but the probes' (they arrive a second after each edit; their own test is below). */
function diagnostics(): Diagnostic[] {
  return (published.get(uri)?.diagnostics ?? []).filter((d) => d.source !== 'rewardsmith-probe');
}

function until(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `timed out waiting for ${what}; last diagnostics: ${JSON.stringify(diagnostics().map((d) => [d.source, d.code, d.range.start.line]))}\n${stderr}`,
          ),
        ),
      timeoutMs,
    );
    const check = () => {
      if (!predicate()) return waiters.push(check);
      clearTimeout(timer);
      resolve();
    };
    waiters.push(check);
  });
}

function applyEdits(source: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) => (starts[p.line] ?? source.length) + p.character;
  for (const e of [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start)))
    source = source.slice(0, offset(e.range.start)) + e.newText + source.slice(offset(e.range.end));
  return source;
}

/** Sends edits as incremental changes (last first, so each range is still valid) and waits for the re-lint. */
async function edit(edits: TextEdit[]): Promise<void> {
  const expected = applyEdits(text, edits);
  const sorted = [...edits].sort((a, b) => b.range.start.line - a.range.start.line || b.range.start.character - a.range.start.character);
  version++;
  await client.sendNotification('textDocument/didChange', {
    textDocument: { uri, version },
    contentChanges: sorted.map((e) => ({ range: e.range, text: e.newText })),
  });
  text = expected;
  const v = version;
  await until(() => published.get(uri)?.version === v, `diagnostics for version ${v}`);
}

function editsOf(action: CodeAction): TextEdit[] {
  const e = action.edit as WorkspaceEdit;
  if (e.changes) return e.changes[uri] ?? [];
  return (e.documentChanges ?? []).flatMap((c) => ('edits' in c ? (c.edits as TextEdit[]) : []));
}

describe('language server over stdio', () => {
  before(async () => {
    llm = await startLlmServer(() => criticAnswer());
    server = spawn(process.execPath, [...(await serverNodeArgs()), '--stdio'], {
      cwd: root,
      env: { ...process.env, OPENAI_BASE_URL: '', OPENAI_API_KEY: 'test-key', REWARDSMITH_MODEL: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    client = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
    client.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      published.set(p.uri, p);
      for (const w of waiters.splice(0)) w();
    });
    client.onNotification(suggestionResolvedNotification, (p) => {
      resolved.push({ id: p.id, how: p.how });
      for (const w of waiters.splice(0)) w();
    });
    // Workspace settings override the environment: the base URL of the scripted server comes from here.
    client.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) =>
      params.items.map((item) =>
        item.section === 'rewardsmith.llm'
          ? { baseUrl: llm.baseUrl, model: 'scripted-critic', retryDelayMs: 1, maxRetries: 1, timeoutMs: criticTimeoutMs }
          : item.section === 'rewardsmith.defaultTask'
            ? ''
            : null,
      ),
    );
    client.onRequest('client/registerCapability', () => null);
    client.listen();
    const init = (await client.sendRequest('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      capabilities: { workspace: { configuration: true } },
      // As VS Code's client says: it plays a probe finding's episode (a code action the server then offers).
      initializationOptions: { playProbeEpisode: true },
    })) as { capabilities: Record<string, unknown> };
    assert.ok(init.capabilities.hoverProvider && init.capabilities.codeActionProvider && init.capabilities.completionProvider);
    await client.sendNotification('initialized', {});
    await client.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version, text } });
  });

  after(async () => {
    await client.sendRequest('shutdown').catch(() => undefined);
    await client.sendNotification('exit').catch(() => undefined);
    client.dispose();
    await new Promise((r) => (server.exitCode !== null ? r(null) : server.once('exit', r)));
    await llm.close();
  });

  test('publishes schema diagnostics on open', async () => {
    await until(() => diagnostics().length >= 4, 'diagnostics on open');
    assert.deepEqual(
      diagnostics().map((d) => `${d.range.start.line}:${d.code}:${d.source}`),
      ['9:unknown-name:rewardsmith', '10:unknown-name:rewardsmith', '13:global-data-uninitialised:rewardsmith', '31:scale-swapped:rewardsmith'],
    );
  });

  test('quick fixes apply as edits and the file re-lints clean', async () => {
    const magma = diagnostics().find((d) => d.code === 'unknown-name')!;
    const actions = (await client.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range: magma.range,
      context: { diagnostics: [magma] },
    })) as CodeAction[];
    const lava = actions.find((a) => a.title.startsWith("Change 'magma' to 'lava'"))!;
    assert.ok(lava?.isPreferred, 'rename to lava is the preferred fix');
    assert.equal(actions[0], lava, 'the preferred fix comes first');
    assert.equal(actions.filter((a) => a.isPreferred).length, 1, 'one preferred fix per finding');
    await edit(editsOf(lava));
    assert.ok(!diagnostics().some((d) => d.code === 'unknown-name'), 'both magma keys renamed');
    assert.match(text, /'lava' in current_nearest_blocks/);

    for (const code of ['global-data-uninitialised', 'scale-swapped']) {
      const d = diagnostics().find((x) => x.code === code)!;
      const [fix] = (await client.sendRequest('textDocument/codeAction', {
        textDocument: { uri },
        range: d.range,
        context: { diagnostics: [d] },
      })) as CodeAction[];
      await edit(editsOf(fix!));
    }
    assert.deepEqual(diagnostics(), []);
    assert.match(text, /GLOBAL_DATA\['health'\] \?\?= health;/);
    assert.match(text, /return Math\.sign\(sparse_reward\) \* 1 \+ Math\.sign\(dense_reward\) \* 0\.1;/);
  });

  test('a typed defect is reported after an incremental change', async () => {
    const line = text.split('\n').findIndex((l) => l.includes('if (y < 16)'));
    await edit([{ range: { start: { line, character: 4 }, end: { line, character: 4 } }, newText: 'if (health < 20) reward += 0;\n    ' }]);
    assert.deepEqual(
      diagnostics().map((d) => `${d.range.start.line}:${d.code}`),
      [`${line}:constant-condition`],
    );
    await edit([{ range: { start: { line, character: 4 }, end: { line: line + 1, character: 4 } }, newText: '' }]);
    assert.deepEqual(diagnostics(), []);
  });

  test('hover explains parameters, entry elements and names from the schema', async () => {
    const lines = text.split('\n');
    const at = (needle: string, line = lines.findIndex((l) => l.includes(needle))) => ({ line, character: lines[line]!.indexOf(needle) + 1 });
    const hover = async (position: { line: number; character: number }) =>
      ((await client.sendRequest('textDocument/hover', { textDocument: { uri }, position })) as Hover | null)?.contents as { value: string } | undefined;
    assert.match((await hover(at('health < GLOBAL')))!.value, /\*\*health\*\* `number` — 0\.\.10 hearts[\s\S]*0 \(dead\) to 10 \(full\)/);
    assert.match((await hover(at("'lava'")))!.value, /\*\*lava\*\* — Lava \(block\)[\s\S]*distance m, yaw rad, pitch rad/);
    assert.match((await hover(at('current_nearest_blocks,', 6)))!.value, /NearestBlocks[\s\S]*visible in the field of view/);
  });

  test('completion offers Minecraft names inside dict accesses', async () => {
    const line = text.split('\n').findIndex((l) => l.includes('if (y < 16)'));
    await edit([
      { range: { start: { line, character: 4 }, end: { line, character: 4 } }, newText: "if (current_nearest_blocks['dia'] !== undefined) reward += 1;\n    " },
    ]);
    const character = text.split('\n')[line]!.indexOf("'dia'") + 4;
    const items = (await client.sendRequest('textDocument/completion', { textDocument: { uri }, position: { line, character } })) as CompletionItem[];
    const diamondOre = items.find((i) => i.label === 'diamond_ore');
    assert.ok(diamondOre, 'diamond_ore offered');
    assert.ok(!items.some((i) => i.label === 'diamond'), 'items are not offered as nearest-block keys');
    assert.equal((diamondOre!.textEdit as TextEdit).range.start.character, character - 3);
    await edit([{ range: { start: { line, character: 4 }, end: { line: line + 1, character: 4 } }, newText: '' }]);
  });

  test('a Python reward (*.reward.py): diagnostics, quick fix, hover and completion from the schema', async () => {
    const pyPath = path.join(__dirname, '..', '..', 'runner', 'test', 'fixtures', 'rewards', 'python', 'paper', 'algorithm-1-explore-diamond.reward.py');
    const pyUri = pathToFileURL(pyPath).href;
    let pyText = readFileSync(pyPath, 'utf8');
    const pyDiagnostics = () => published.get(pyUri)?.diagnostics ?? [];
    await client.sendNotification('textDocument/didOpen', { textDocument: { uri: pyUri, languageId: 'python', version: 1, text: pyText } });
    await until(() => pyDiagnostics().length > 0, 'Python diagnostics on open', 60_000);
    const magmaLine = pyText.split('\n').findIndex((l) => l.includes('# flaw: magma'));
    assert.deepEqual(
      pyDiagnostics().map((d) => `${d.range.start.line}:${d.code}`),
      [`${magmaLine}:unknown-name`],
    );
    const magma = pyDiagnostics()[0]!;
    const [fix] = (await client.sendRequest('textDocument/codeAction', {
      textDocument: { uri: pyUri },
      range: magma.range,
      context: { diagnostics: [magma] },
    })) as CodeAction[];
    assert.equal(fix!.title, "Change 'magma' to 'lava'");
    pyText = applyEdits(pyText, (fix!.edit as WorkspaceEdit).changes![pyUri]!);
    await client.sendNotification('textDocument/didChange', { textDocument: { uri: pyUri, version: 2 }, contentChanges: [{ text: pyText }] });
    await until(() => published.get(pyUri)?.version === 2, 'Python diagnostics after the fix');
    assert.deepEqual(pyDiagnostics(), []);
    const lines = pyText.split('\n');
    const hover = (await client.sendRequest('textDocument/hover', {
      textDocument: { uri: pyUri },
      position: { line: magmaLine, character: lines[magmaLine]!.indexOf('"lava"') + 2 },
    })) as Hover | null;
    assert.match((hover!.contents as { value: string }).value, /\*\*lava\*\* — Lava \(block\)/);
    const character = lines[magmaLine]!.indexOf('"lava"') + 3;
    const items = (await client.sendRequest('textDocument/completion', {
      textDocument: { uri: pyUri },
      position: { line: magmaLine, character },
    })) as CompletionItem[];
    assert.ok(items.some((i) => i.label === 'diamond_ore') && !items.some((i) => i.label === 'diamond'), 'nearest-block names, not items');
    await client.sendNotification('textDocument/didClose', { textDocument: { uri: pyUri } });
  });

  test('critique: findings published as reward-critic diagnostics, cached by content, cleared when their lines change', async () => {
    const result = (await client.sendRequest(critiqueRequest, { textDocument: { uri } })) as CritiqueResult;
    assert.equal(result.status, 'ok');
    if (result.status !== 'ok') return;
    assert.equal(result.success, false);
    assert.equal(result.model, 'scripted-critic');
    assert.equal(result.cached, false);
    assert.deepEqual(
      result.findings.map((f) => f.range.start.line),
      [13, 31],
    );
    await until(() => diagnostics().filter((d) => d.source === 'reward-critic').length === 2, 'critic diagnostics');
    // The critic saw the task from the file's header and the numbered code.
    assert.match(llm.requests.at(-1)!.lastUser, /Find diamond ore/);
    assert.match(llm.requests.at(-1)!.lastUser, /14\| /);

    const calls = llm.requests.length;
    const again = (await client.sendRequest(critiqueRequest, { textDocument: { uri } })) as CritiqueResult;
    assert.ok(again.status === 'ok' && again.cached, 'second review of the same content is cached');
    assert.equal(llm.requests.length, calls);

    // A line inserted above moves both findings down; changing the second one's line drops that finding only.
    await edit([{ range: { start: { line: 5, character: 0 }, end: { line: 5, character: 0 } }, newText: '// a note\n' }]);
    assert.deepEqual(
      diagnostics()
        .filter((d) => d.source === 'reward-critic')
        .map((d) => d.range.start.line),
      [14, 32],
    );
    const changed = text.split('\n')[32]!;
    await edit([{ range: { start: { line: 32, character: changed.length }, end: { line: 32, character: changed.length } }, newText: ' // reviewed' }]);
    const critic = diagnostics().filter((d) => d.source === 'reward-critic');
    assert.deepEqual(
      critic.map((d) => d.range.start.line),
      [14],
    );
    assert.equal(critic[0]!.message, 'GLOBAL_DATA["health"] is compared before it is stored.');
    // Undo both edits: the content the critic reviewed is back, and so is its review (from the cache).
    await edit([
      { range: { start: { line: 32, character: changed.length }, end: { line: 32, character: changed.length + ' // reviewed'.length } }, newText: '' },
    ]);
    await edit([{ range: { start: { line: 5, character: 0 }, end: { line: 6, character: 0 } }, newText: '' }]);
    assert.deepEqual(
      diagnostics()
        .filter((d) => d.source === 'reward-critic')
        .map((d) => d.range.start.line),
      [13, 31],
    );
    assert.equal(llm.requests.length, calls);
  });

  test('critique: a malformed answer becomes a clear error, and the server keeps working', async () => {
    criticAnswer = () => 'I think this reward is fine overall.';
    const result = (await client.sendRequest(critiqueRequest, { textDocument: { uri }, force: true })) as CritiqueResult;
    assert.equal(result.status, 'error');
    if (result.status === 'error') {
      assert.equal(result.kind, 'llm');
      assert.match(result.message, /critic failed .*malformed/i);
    }
    // A critic that does not answer in time: retried, then a clear message.
    criticTimeoutMs = 150;
    criticAnswer = () => ({ delayMs: 1000, reply: '{}' });
    const slow = (await client.sendRequest(critiqueRequest, { textDocument: { uri }, force: true })) as CritiqueResult;
    assert.ok(slow.status === 'error' && slow.kind === 'llm' && /no complete answer within 150 ms/.test(slow.message), JSON.stringify(slow));
    const missing = (await client.sendRequest(critiqueRequest, { textDocument: { uri: 'file:///nowhere/x.reward.ts' } })) as CritiqueResult;
    assert.ok(missing.status === 'error' && missing.kind === 'no-document');
    const line = text.split('\n').findIndex((l) => l.includes('health < GLOBAL'));
    const hover = await client.sendRequest('textDocument/hover', {
      textDocument: { uri },
      position: { line, character: text.split('\n')[line]!.indexOf('health') + 2 },
    });
    assert.ok(hover, 'server still answers');
  });

  test('a file nested 1,000 brackets deep gets one located diagnostic; hover and completion answer without errors', async () => {
    const deepUri = pathToFileURL(path.join(root, 'language-server', 'test', 'fixtures', 'deep-nesting.reward.ts')).href;
    const deepText = `export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {\n  const x = ${'('.repeat(1000)}health${')'.repeat(1000)};\n  return x;\n}\n`;
    await client.sendNotification('textDocument/didOpen', { textDocument: { uri: deepUri, languageId: 'typescript', version: 1, text: deepText } });
    await until(() => published.has(deepUri), 'diagnostics of the deep file');
    const found = published.get(deepUri)!.diagnostics;
    // The function's brace is the first level, so the 256th parenthesis is one too many.
    assert.deepEqual(
      found.map((d) => [d.code, d.range.start.line, d.range.start.character]),
      [['unanalysable', 1, 12 + 255]],
    );
    assert.match(String(found[0]!.message), /nest more than 256 levels/);
    const position = { line: 1, character: 1200 };
    assert.equal(await client.sendRequest('textDocument/hover', { textDocument: { uri: deepUri }, position }), null);
    assert.deepEqual(await client.sendRequest('textDocument/completion', { textDocument: { uri: deepUri }, position }), []);
    assert.doesNotMatch(stderr, /Maximum call stack/);
    await client.sendNotification('textDocument/didClose', { textDocument: { uri: deepUri } });
  });

  test('analyzer suggestions: diagnostics with Apply suggested patch (previewed) and Dismiss', async () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes('let reward = 0;'));
    const diff = [
      `--- a/${path.basename(buggyPath)}`,
      `+++ b/${path.basename(buggyPath)}`,
      `@@ -${at + 1},1 +${at + 1},2 @@`,
      lines[at]!.replace(/^/, ' '),
      "+    if ('lava' in current_nearest_blocks && current_nearest_blocks['lava'][0] < 3) reward -= 1; // lava in view",
      '',
    ].join('\n');
    const range = { start: { line: at, character: 0 }, end: { line: at, character: lines[at]!.length } };
    await client.sendNotification(setSuggestionsNotification, {
      textDocument: { uri },
      suggestions: [
        { id: 'run1/0', message: 'The agent dies in lava in 7 of 10 failed episodes; penalise lava in view.', evidence: 'episodes 1, 3, 4', range, diff },
        { id: 'run1/1', message: 'The agent holds an extreme pitch.', range },
      ],
    });
    await until(() => diagnostics().filter((d) => d.source === 'reward-analyzer').length === 2, 'analyzer diagnostics');
    const [lava, pitch] = diagnostics().filter((d) => d.source === 'reward-analyzer');
    const actions = (await client.sendRequest('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [lava] } })) as CodeAction[];
    assert.deepEqual(
      actions.map((a) => a.title),
      ['Apply suggested patch', 'Dismiss'],
    );
    const apply = actions[0]!;
    assert.equal((apply.edit as WorkspaceEdit).changeAnnotations?.['analyzer-patch']?.needsConfirmation, true);
    await edit(editsOf(apply));
    assert.match(text, /lava in view\n/);
    await client.sendRequest('workspace/executeCommand', { command: apply.command!.command, arguments: apply.command!.arguments });
    await until(() => resolved.length === 1, 'suggestion resolved');
    assert.deepEqual(resolved[0], { id: 'run1/0', how: 'applied' });

    const pitchActions = (await client.sendRequest('textDocument/codeAction', {
      textDocument: { uri },
      range,
      context: { diagnostics: [pitch] },
    })) as CodeAction[];
    assert.deepEqual(
      pitchActions.map((a) => a.title),
      ['Dismiss'],
      'no patch, no Apply',
    );
    assert.equal(pitchActions[0]!.command!.command, SERVER_COMMANDS.dismissSuggestion);
    await client.sendRequest('workspace/executeCommand', { command: SERVER_COMMANDS.dismissSuggestion, arguments: pitchActions[0]!.command!.arguments });
    await until(() => !diagnostics().some((d) => d.source === 'reward-analyzer'), 'suggestions gone');
    assert.deepEqual(resolved[1], { id: 'run1/1', how: 'dismissed' });
  });

  test('probes: a reward that pays a failure mode gets a rewardsmith-probe warning at the paying line, after a pause in typing', async () => {
    const file = path.join(root, 'runner', 'test', 'fixtures', 'probe', 'cow-pays-movement.reward.ts');
    const probedUri = pathToFileURL(file).href;
    const source = readFileSync(file, 'utf8');
    await client.sendNotification('textDocument/didOpen', { textDocument: { uri: probedUri, languageId: 'typescript', version: 1, text: source } });
    // Hover answers while the probes are still to come (they run off the request path).
    const hover = (await client.sendRequest('textDocument/hover', { textDocument: { uri: probedUri }, position: { line: 5, character: 16 } })) as Hover | null;
    const shown = (hover?.contents as { value: string } | undefined)?.value ?? '';
    assert.match(shown, /current_nearest_blocks/);
    const probeDiagnostics = () => (published.get(probedUri)?.diagnostics ?? []).filter((d) => d.source === 'rewardsmith-probe');
    await until(() => probeDiagnostics().some((d) => d.code === 'probe-incentive'), 'probe diagnostics', 240_000);
    const incentive = probeDiagnostics().find((d) => d.code === 'probe-incentive')!;
    const paying = source.split('\n').findIndex((l) => l.includes('expect-probe: probe-incentive'));
    assert.equal(incentive.range.start.line, paying);
    assert.match(typeof incentive.message === 'string' ? incentive.message : incentive.message.value, /turning in place is paid on 100 % of its steps/);
    // The reward profile: above the paying line, how often it ran and its share of the pay on successes and failure modes.
    const lenses = (await client.sendRequest('textDocument/codeLens', { textDocument: { uri: probedUri } })) as {
      range: { start: { line: number } };
      command?: { title: string };
    }[];
    const atPaying = lenses.find((l) => l.range.start.line === paying);
    assert.match(
      atPaying?.command?.title ?? '',
      /^probe profile: successes: ran \d+ % of calls, \d+ % of pay · failure modes: ran \d+ % of calls, 100 % of pay$/,
    );
    // The probe episode that shows it: a code action asks the client to play it (the dashboard does).
    const episode = (incentive.data as { probeEpisode?: number } | undefined)?.probeEpisode;
    assert.ok(Number.isInteger(episode) && episode! >= 1, JSON.stringify(incentive.data));
    const actions = (await client.sendRequest('textDocument/codeAction', {
      textDocument: { uri: probedUri },
      range: incentive.range,
      context: { diagnostics: [incentive] },
    })) as CodeAction[];
    assert.deepEqual(
      actions.map((a) => [a.title, a.command?.command, a.command?.arguments]),
      [[`Watch probe episode ${episode} with this reward`, CLIENT_COMMANDS.playProbeEpisode, [{ uri: probedUri, episode }]]],
    );
  });
});
