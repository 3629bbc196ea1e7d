// The Rewardsmith language server. Any LSP client can use it (it knows nothing about VS Code): diagnostics
// from the schema rules and TypeScript, quick fixes, hover, completion; the probes' findings (the reward run on
// its task's probe bank, on save and after PROBE_IDLE_MS without typing); the LLM critic's findings
// (`rewardsmith/critique`) and the trajectory analyzer's suggestions (`rewardsmith/setSuggestions`) published
// as separate diagnostic sources. Started by `rewardsmith lsp --stdio` or as dist/server.js (stdio or IPC).
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { CodeActionKind, ProposedFeatures, TextDocumentSyncKind, TextDocuments, createConnection, type Connection } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { REWARD_FILE_PATTERN } from '../../runner/src/lint/analysis';
import { COMPLETION_TRIGGERS, completionsAt, hoverAt, taskHeaderCompletions } from './editor';
import { FramingCheck } from './framing';
import {
  CONFIGURATION_SECTION,
  SERVER_COMMANDS,
  clearCritiqueNotification,
  critiqueRequest,
  setLlmApiKeyNotification,
  setSuggestionsNotification,
  suggestionResolvedNotification,
  type AnalyzerSuggestion,
  type LlmSettings,
} from '../../protocol/src/lsp';
import { codeActions } from './code-actions';
import { EditorCritic } from './critic';
import { documentDiagnostics } from './diagnostics';
import { DocumentLinter, isPythonReward, pythonReady } from './lint-scheduler';
import { EditorProbes, PROBE_IDLE_MS } from './probes';
import { pythonCompletionsAt, pythonHoverAt } from './python-editor';

function filePathOf(uri: string): string {
  if (uri.startsWith('file:')) return fileURLToPath(uri);
  // Unsaved buffers: a stable fake path that keeps the extension (TypeScript needs .ts/.js).
  const name = decodeURIComponent(uri.replace(/^[a-z-]+:/i, '')).replace(/[^\w.-]+/g, '_');
  return path.join(path.sep, '__unsaved__', REWARD_FILE_PATTERN.test(name) ? name : `${name}.reward.ts`);
}

const isReward = (uri: string) => REWARD_FILE_PATTERN.test(uri.replace(/[?#].*$/, ''));

export function startServer(given?: Connection): Promise<number> {
  const connection = given ?? createConnection(ProposedFeatures.all);
  const documents = new TextDocuments(TextDocument);
  const suggestions = new Map<string, Map<string, AnalyzerSuggestion>>();
  const probes = new EditorProbes({
    connection,
    documents,
    filePathOf,
    defaultTask: async () => (await settings()).defaultTask,
    publish: (uri) => publish(uri),
  });
  const critic = new EditorCritic({
    connection,
    documents,
    filePathOf,
    settings: () => settings(),
    staticDiagnostics: (uri) => lintResults.get(uri),
    publish: (uri) => publish(uri),
  });
  let canReadConfiguration = false;
  const settings = () => readSettings(connection, canReadConfiguration);
  const linter = new DocumentLinter({
    connection,
    documents,
    filePathOf,
    beforeLint: (uri) => critic.follow(uri),
    publish: (uri) => publish(uri),
  });
  const lintResults = linter.results;

  function publish(uri: string): void {
    const doc = documents.get(uri);
    const diagnostics = documentDiagnostics(doc, {
      lint: lintResults.get(uri) ?? [],
      probe: probes.diagnostics(uri),
      critic: critic.findings(uri),
      suggestions: [...(suggestions.get(uri)?.values() ?? [])],
    });
    void connection.sendDiagnostics({ uri, version: doc?.version, diagnostics });
  }

  connection.onInitialize((params) => {
    canReadConfiguration = !!params.capabilities.workspace?.configuration;
    probes.initialize(params);
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        hoverProvider: true,
        completionProvider: { triggerCharacters: COMPLETION_TRIGGERS },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        executeCommandProvider: { commands: Object.values(SERVER_COMMANDS) },
        codeLensProvider: { resolveProvider: false },
      },
      serverInfo: { name: 'rewardsmith', version: '0.1.0' },
    };
  });

  connection.onCodeLens((params) => {
    linter.touched();
    return probes.lenses(params.textDocument.uri);
  });

  documents.onDidOpen((e) => {
    if (!isReward(e.document.uri)) return;
    linter.schedule(e.document.uri);
    probes.opened(e.document.uri);
  });
  documents.onDidSave((e) => isReward(e.document.uri) && probes.schedule(e.document.uri, 0));
  documents.onDidChangeContent((e) => {
    if (!isReward(e.document.uri)) return;
    linter.schedule(e.document.uri);
    probes.schedule(e.document.uri, PROBE_IDLE_MS);
  });
  documents.onDidClose((e) => {
    linter.closed(e.document.uri);
    probes.closed(e.document.uri);
    critic.clear(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onCodeAction((params) => {
    linter.touched();
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return [];
    const fixes = codeActions(doc, params.context.diagnostics, lintResults.get(doc.uri) ?? [], suggestions.get(doc.uri));
    return [...fixes, ...probes.codeActions(doc.uri, params.context.diagnostics)];
  });

  connection.onExecuteCommand((params) => {
    const arg = params.arguments?.[0] as { uri?: string; id?: string } | undefined;
    if (!arg?.uri || !arg.id) return;
    const removed = suggestions.get(arg.uri)?.delete(arg.id);
    if (!removed) return;
    publish(arg.uri);
    const how = params.command === SERVER_COMMANDS.suggestionApplied ? 'applied' : 'dismissed';
    void connection.sendNotification(suggestionResolvedNotification, { textDocument: { uri: arg.uri }, id: arg.id, how });
  });

  serveHoverAndCompletion(connection, documents, linter);

  connection.onNotification(setSuggestionsNotification, (params) => {
    const uri = params.textDocument.uri;
    suggestions.set(uri, new Map(params.suggestions.map((s) => [s.id, s])));
    publish(uri);
  });

  connection.onNotification(clearCritiqueNotification, (params) => {
    critic.clear(params.textDocument.uri);
    publish(params.textDocument.uri);
  });

  connection.onNotification(setLlmApiKeyNotification, (params) => {
    critic.apiKey = params.apiKey && params.apiKey.trim() !== '' ? params.apiKey : null;
  });

  connection.onRequest(critiqueRequest, (params, token) => critic.critique(params, token));

  documents.listen(connection);
  connection.listen();
  if (!given && process.argv.includes('--stdio')) exitOnBrokenFraming();
  return new Promise<number>((resolve) => connection.onExit(() => resolve(0)));
}

/** Hover and completion on reward files (TypeScript through the linter's project, Python through tree-sitter). */
function serveHoverAndCompletion(connection: Connection, documents: TextDocuments<TextDocument>, linter: DocumentLinter): void {
  connection.onHover((params) => {
    linter.touched();
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return null;
    // A file the checker cannot analyse (nested too deep) has no hover; nothing here may take the server down.
    try {
      if (isPythonReward(doc.uri)) return pythonReady(() => linter.schedule(doc.uri)) ? (pythonHoverAt(doc.getText(), params.position) ?? null) : null;
      const project = linter.projectFor(doc);
      if (project.unanalysable) return null;
      const snap = project.snapshot();
      return hoverAt(snap, snap.offset(params.position)) ?? null;
    } catch (err) {
      connection.console.error(`hover ${doc.uri}: ${(err as Error).message}`);
      return null;
    }
  });

  connection.onCompletion((params) => {
    linter.touched();
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return [];
    try {
      const tasks = taskHeaderCompletions(doc.getText(), params.position, params.context?.triggerCharacter);
      if (tasks) return tasks;
      if (isPythonReward(doc.uri)) return pythonReady(() => linter.schedule(doc.uri)) ? pythonCompletionsAt(doc.getText(), params.position) : [];
      const project = linter.projectFor(doc);
      if (project.unanalysable) return [];
      const snap = project.snapshot();
      return completionsAt(snap, snap.offset(params.position));
    } catch (err) {
      connection.console.error(`completion ${doc.uri}: ${(err as Error).message}`);
      return [];
    }
  });
}

/** The client's LLM settings and default task (none when it cannot be asked). */
async function readSettings(connection: Connection, canReadConfiguration: boolean): Promise<{ llm: LlmSettings; defaultTask?: string }> {
  if (!canReadConfiguration) return { llm: {} };
  try {
    const [llm, defaultTask] = (await connection.workspace.getConfiguration([{ section: CONFIGURATION_SECTION }, { section: 'rewardsmith.defaultTask' }])) as [
      LlmSettings | null,
      string | null,
    ];
    return { llm: llm ?? {}, defaultTask: defaultTask || undefined };
  } catch {
    return { llm: {} };
  }
}

/**
 * Over stdio, checks the client's bytes beside the JSON-RPC reader (attached after it, so both see every
 * chunk) and exits when the framing breaks (see framing.ts): exit code 1 and the problem on stderr, which
 * the client shows or logs before it restarts the server.
 */
function exitOnBrokenFraming(): void {
  const check = new FramingCheck();
  process.stdin.on('data', (chunk: Buffer) => {
    const problem = check.push(chunk);
    if (!problem) return;
    process.stderr.write(`rewardsmith language server: the client sent ${problem}; exiting so that the client restarts the server\n`);
    process.exit(1);
  });
}

// Entry point of dist/server.js (the extension starts it with --stdio or --node-ipc). `rewardsmith lsp`
// imports this module and calls startServer() itself, so only start when this file is the program.
const entry = process.argv[1] ?? '';
if (/(^|[\\/])server\.(js|ts)$/.test(entry)) void startServer().then((code) => process.exit(code));
