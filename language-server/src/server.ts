// The Rewardsmith language server. Any LSP client can use it (it knows nothing about VS Code): diagnostics
// from the schema rules and TypeScript, quick fixes, hover, completion; the probes' findings (the reward run on
// its task's probe bank, on save and after PROBE_IDLE_MS without typing); the LLM critic's findings
// (`rewardsmith/critique`) and the trajectory analyzer's suggestions (`rewardsmith/setSuggestions`) published
// as separate diagnostic sources. Started by `rewardsmith lsp --stdio` or as dist/server.js (stdio or IPC).
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import {
  CodeActionKind,
  DiagnosticSeverity,
  ProposedFeatures,
  TextDocumentSyncKind,
  TextDocuments,
  createConnection,
  type CodeAction,
  type Connection,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { REWARD_FILE_PATTERN, RewardProject } from '../../runner/src/lint/analysis';
import { critiqueFile } from '../../runner/src/llm/critique';
import { diffTextEdits } from '../../runner/src/diff';
import { completionsAt, hoverAt } from './editor';
import { FramingCheck } from './framing';
import {
  CONFIGURATION_SECTION,
  DIAGNOSTIC_SOURCE,
  SERVER_COMMANDS,
  clearCritiqueNotification,
  critiqueRequest,
  setLlmApiKeyNotification,
  setSuggestionsNotification,
  suggestionResolvedNotification,
  type AnalyzerSuggestion,
  type CritiqueFinding,
  type CritiqueResult,
  type LlmSettings,
} from '../../protocol/src/lsp';
import { lintSnapshot, lintText, loadPythonParser, pythonParserReady, type RewardDiagnostic, type Severity } from '../../runner/src/lint/rules';
import { EditorProbes, PROBE_IDLE_MS } from './probes';
import { pythonCompletionsAt, pythonHoverAt } from './python-editor';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** A critic finding with the text of its lines when it was made: it stays while those lines are unchanged
 * (following them when lines are inserted or removed above) and goes when they change. */
interface AnchoredFinding {
  finding: CritiqueFinding;
  lines: string[];
}

function filePathOf(uri: string): string {
  if (uri.startsWith('file:')) return fileURLToPath(uri);
  // Unsaved buffers: a stable fake path that keeps the extension (TypeScript needs .ts/.js).
  const name = decodeURIComponent(uri.replace(/^[a-z-]+:/i, '')).replace(/[^\w.-]+/g, '_');
  return path.join(path.sep, '__unsaved__', REWARD_FILE_PATTERN.test(name) ? name : `${name}.reward.ts`);
}

const isReward = (uri: string) => REWARD_FILE_PATTERN.test(uri.replace(/[?#].*$/, ''));
/** Python reward files (`*.reward.py`), linted through tree-sitter-python rather than a TypeScript project. */
const isPythonReward = (uri: string) => /\.reward\.py$/.test(uri.replace(/[?#].*$/, ''));

/** Whether the Python parser (WebAssembly, loaded once, in the background) is there; if not, `then` runs once it is. */
function pythonReady(then: () => void): boolean {
  if (pythonParserReady()) return true;
  void loadPythonParser().then(then);
  return false;
}

/** The line that declares reward_function (else the first), where the analyzer's suggestions without a range go. */
function rewardFunctionLine(doc: TextDocument | undefined) {
  const lines = doc?.getText().split('\n') ?? [];
  const line = Math.max(
    0,
    lines.findIndex((l) => /\breward_function\b/.test(l)),
  );
  return { start: { line, character: 0 }, end: { line, character: (lines[line] ?? '').length } };
}

/**
 * Edits closer together than this are a storm (a paste replayed keystroke by keystroke, a formatter, a client
 * replaying its history): lint waits until the client has paused this long (no edit, hover, completion or code
 * action), then checks the latest version only. Linting every version made 1,000 lints a burst, and hover
 * waited behind them for over 20 s. An edit after a pause (typing) is linted at once, as before.
 */
const LINT_QUIET_MS = 30;
/** A client that never pauses still gets diagnostics this often (of the latest version). */
const LINT_MAX_WAIT_MS = 1000;

export function startServer(given?: Connection): Promise<number> {
  const connection = given ?? createConnection(ProposedFeatures.all);
  const documents = new TextDocuments(TextDocument);
  const projects = new Map<string, RewardProject>();
  const lintResults = new Map<string, RewardDiagnostic[]>();
  const criticFindings = new Map<string, AnchoredFinding[]>();
  const criticCache = new Map<string, CritiqueResult & { status: 'ok' }>();
  const suggestions = new Map<string, Map<string, AnalyzerSuggestion>>();
  let apiKey: string | null = null;
  const probes = new EditorProbes({
    connection,
    documents,
    filePathOf,
    defaultTask: async () => (await settings()).defaultTask,
    publish: (uri) => publish(uri),
  });
  let canReadConfiguration = false;
  const pending = new Set<string>();
  let lintTimer: NodeJS.Timeout | undefined;
  let pendingSince = 0;
  /** Messages handled so far (edits and requests): lint waits for a turn of the event loop in which none was. */
  let handled = 0;
  let lastEditAt = Number.NEGATIVE_INFINITY;

  function projectFor(doc: TextDocument): RewardProject {
    let project = projects.get(doc.uri);
    if (!project) {
      project = new RewardProject(filePathOf(doc.uri), doc.getText());
      projects.set(doc.uri, project);
    } else project.update(doc.getText());
    return project;
  }

  function toDiagnostic(d: RewardDiagnostic): Diagnostic {
    return { range: d.range, severity: SEVERITY[d.severity], code: d.code, source: DIAGNOSTIC_SOURCE.lint, message: d.message };
  }

  function publish(uri: string): void {
    const doc = documents.get(uri);
    const diagnostics: Diagnostic[] = (lintResults.get(uri) ?? []).map(toDiagnostic);
    for (const d of probes.diagnostics(uri))
      diagnostics.push({ range: d.range, severity: SEVERITY[d.severity], code: d.code, source: DIAGNOSTIC_SOURCE.probe, message: d.message });
    for (const { finding } of criticFindings.get(uri) ?? []) {
      diagnostics.push({ range: finding.range, severity: SEVERITY[finding.severity], source: DIAGNOSTIC_SOURCE.critic, message: finding.message });
    }
    for (const s of suggestions.get(uri)?.values() ?? []) {
      // Clients may send `character: MAX_SAFE_INTEGER` for "end of line": clamp to the document.
      const clamp = (p: { line: number; character: number }) => (doc ? doc.positionAt(doc.offsetAt(p)) : p);
      const range = s.range ? { start: clamp(s.range.start), end: clamp(s.range.end) } : rewardFunctionLine(doc);
      diagnostics.push({
        range,
        severity: DiagnosticSeverity.Information,
        source: DIAGNOSTIC_SOURCE.analyzer,
        code: 'analyzer-suggestion',
        message: s.evidence ? `${s.message}\n${s.evidence}` : s.message,
        data: { suggestionId: s.id },
      });
    }
    void connection.sendDiagnostics({ uri, version: doc?.version, diagnostics });
  }

  /** Keeps each critic finding whose lines are still there (moved if needed); drops the others. */
  function reanchorCritic(doc: TextDocument): void {
    const anchored = criticFindings.get(doc.uri);
    if (!anchored?.length) return;
    const lines = doc
      .getText()
      .split('\n')
      .map((l) => l.replace(/\r$/, ''));
    const kept: AnchoredFinding[] = [];
    for (const a of anchored) {
      const at = a.finding.range.start.line;
      const matchesAt = (s: number) => s >= 0 && s + a.lines.length <= lines.length && a.lines.every((l, k) => lines[s + k] === l);
      let found = -1;
      for (let d = 0; d <= lines.length && found < 0; d++) {
        if (matchesAt(at + d)) found = at + d;
        else if (d > 0 && matchesAt(at - d)) found = at - d;
      }
      if (found < 0) continue;
      const shift = found - at;
      const r = a.finding.range;
      kept.push({
        lines: a.lines,
        finding: {
          ...a.finding,
          range: { start: { line: r.start.line + shift, character: r.start.character }, end: { line: r.end.line + shift, character: r.end.character } },
        },
      });
    }
    criticFindings.set(doc.uri, kept);
  }

  function setCritic(doc: TextDocument, findings: CritiqueFinding[]): void {
    const lines = doc
      .getText()
      .split('\n')
      .map((l) => l.replace(/\r$/, ''));
    criticFindings.set(
      doc.uri,
      findings.map((finding) => ({ finding, lines: lines.slice(finding.range.start.line, finding.range.end.line + 1) })),
    );
  }

  function lintNow(uri: string): void {
    const doc = documents.get(uri);
    if (!doc) return;
    if (isPythonReward(uri) && !pythonReady(() => schedule(uri))) return;
    try {
      lintResults.set(uri, isPythonReward(uri) ? lintText(filePathOf(uri), doc.getText()) : lintSnapshot(projectFor(doc).snapshot()));
    } catch (err) {
      // A checker crash must not take the server down; say so on the first line instead.
      lintResults.set(uri, [
        {
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
          severity: 'error',
          code: 'internal',
          source: 'rewardsmith',
          message: `Rewardsmith could not check this file: ${(err as Error).message}`,
          fixes: [],
        },
      ]);
      connection.console.error(`lint ${uri}: ${(err as Error).stack ?? err}`);
    }
    publish(uri);
  }

  /** Lints `uri` once the client pauses (see LINT_QUIET_MS): only the version current then is checked and published. */
  function schedule(uri: string): void {
    const now = performance.now();
    if (pending.size === 0) pendingSince = now;
    pending.add(uri);
    handled++;
    armLint(now - lastEditAt < LINT_QUIET_MS ? LINT_QUIET_MS : 0);
    lastEditAt = now;
  }

  function armLint(quietMs: number): void {
    clearTimeout(lintTimer);
    const overdue = () => performance.now() >= pendingSince + LINT_MAX_WAIT_MS;
    lintTimer = setTimeout(
      () => {
        const seen = handled;
        // One more turn first: vscode-jsonrpc handles one queued message per turn of the event loop, so the rest
        // of a storm already queued (or queued behind a slow request) comes before the lint.
        setImmediate(() => {
          if (handled !== seen && !overdue()) return armLint(LINT_QUIET_MS);
          lintTimer = undefined;
          const uris = [...pending];
          pending.clear();
          for (const u of uris) {
            followCritic(u);
            lintNow(u);
          }
        });
      },
      Math.max(0, Math.min(quietMs, pendingSince + LINT_MAX_WAIT_MS - performance.now())),
    );
  }

  /** Content the critic has reviewed before (e.g. edit, then undo) shows that review again; otherwise the
   * findings follow their lines and go when those lines change. */
  function followCritic(uri: string): void {
    const doc = documents.get(uri);
    if (!doc) return;
    const cached = criticCache.get(contentKey(doc.getText()));
    if (cached) setCritic(doc, cached.findings);
    else reanchorCritic(doc);
  }

  connection.onInitialize((params) => {
    canReadConfiguration = !!params.capabilities.workspace?.configuration;
    probes.canRefreshLenses = !!params.capabilities.workspace?.codeLens?.refreshSupport;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        hoverProvider: true,
        completionProvider: { triggerCharacters: ['"', "'", '.', '`'] },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        executeCommandProvider: { commands: Object.values(SERVER_COMMANDS) },
        codeLensProvider: { resolveProvider: false },
      },
      serverInfo: { name: 'rewardsmith', version: '0.1.0' },
    };
  });

  connection.onCodeLens((params) => {
    handled++;
    return probes.lenses(params.textDocument.uri);
  });

  documents.onDidOpen((e) => {
    if (!isReward(e.document.uri)) return;
    schedule(e.document.uri);
    probes.opened(e.document.uri);
  });
  documents.onDidSave((e) => {
    if (isReward(e.document.uri)) probes.schedule(e.document.uri, 0);
  });
  documents.onDidChangeContent((e) => {
    if (!isReward(e.document.uri)) return;
    schedule(e.document.uri);
    probes.schedule(e.document.uri, PROBE_IDLE_MS);
  });
  documents.onDidClose((e) => {
    pending.delete(e.document.uri);
    projects.get(e.document.uri)?.dispose();
    projects.delete(e.document.uri);
    lintResults.delete(e.document.uri);
    probes.closed(e.document.uri);
    criticFindings.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onCodeAction((params) => {
    handled++;
    const uri = params.textDocument.uri;
    const doc = documents.get(uri);
    if (!doc) return [];
    // The schema's fixes come first and each finding's best fix is marked preferred (VS Code lists preferred
    // actions first and applies them with "Auto Fix"); the analyzer's actions follow.
    const schemaFixes: CodeAction[] = [];
    const actions: CodeAction[] = [];
    const current = lintResults.get(uri) ?? [];
    const sameRange = (a: Diagnostic['range'], b: Diagnostic['range']) =>
      a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
    for (const diag of params.context.diagnostics) {
      if (diag.source === DIAGNOSTIC_SOURCE.lint) {
        const match = current.find((d) => d.code === diag.code && sameRange(d.range, diag.range));
        const fixes = match?.fixes ?? [];
        const best = Math.max(
          0,
          fixes.findIndex((f) => f.preferred),
        );
        [fixes[best]!, ...fixes.filter((_, i) => i !== best)].forEach((fix, i) => {
          if (!fix) return;
          schemaFixes.push({
            title: fix.title,
            kind: CodeActionKind.QuickFix,
            diagnostics: [diag],
            isPreferred: i === 0,
            edit: { changes: { [uri]: fix.edits } },
          });
        });
      } else if (diag.source === DIAGNOSTIC_SOURCE.analyzer) {
        const id = (diag.data as { suggestionId?: string } | undefined)?.suggestionId;
        const suggestion = id ? suggestions.get(uri)?.get(id) : undefined;
        if (!suggestion) continue;
        const edits = suggestion.diff ? diffTextEdits(doc.getText(), suggestion.diff) : undefined;
        if (edits) {
          actions.push({
            title: 'Apply suggested patch',
            kind: CodeActionKind.QuickFix,
            diagnostics: [diag],
            isPreferred: true,
            edit: {
              documentChanges: [{ textDocument: { uri, version: doc.version }, edits: edits.map((e) => ({ ...e, annotationId: 'analyzer-patch' })) }],
              changeAnnotations: { 'analyzer-patch': { label: "Apply the analyzer's patch", needsConfirmation: true, description: suggestion.message } },
            },
            command: { title: 'Mark applied', command: SERVER_COMMANDS.suggestionApplied, arguments: [{ uri, id: suggestion.id }] },
          });
        }
        actions.push({
          title: 'Dismiss',
          kind: CodeActionKind.QuickFix,
          diagnostics: [diag],
          command: { title: 'Dismiss', command: SERVER_COMMANDS.dismissSuggestion, arguments: [{ uri, id: suggestion.id }] },
        });
      }
    }
    return [...schemaFixes, ...actions];
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

  connection.onHover((params) => {
    handled++;
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return null;
    // A file the checker cannot analyse (nested too deep) has no hover; nothing here may take the server down.
    try {
      if (isPythonReward(doc.uri)) return pythonReady(() => schedule(doc.uri)) ? (pythonHoverAt(doc.getText(), params.position) ?? null) : null;
      const project = projectFor(doc);
      if (project.unanalysable) return null;
      const snap = project.snapshot();
      return hoverAt(snap, snap.offset(params.position)) ?? null;
    } catch (err) {
      connection.console.error(`hover ${doc.uri}: ${(err as Error).message}`);
      return null;
    }
  });

  connection.onCompletion((params) => {
    handled++;
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return [];
    try {
      if (isPythonReward(doc.uri)) return pythonReady(() => schedule(doc.uri)) ? pythonCompletionsAt(doc.getText(), params.position) : [];
      const project = projectFor(doc);
      if (project.unanalysable) return [];
      const snap = project.snapshot();
      return completionsAt(snap, snap.offset(params.position));
    } catch (err) {
      connection.console.error(`completion ${doc.uri}: ${(err as Error).message}`);
      return [];
    }
  });

  connection.onNotification(setSuggestionsNotification, (params) => {
    const uri = params.textDocument.uri;
    suggestions.set(uri, new Map(params.suggestions.map((s) => [s.id, s])));
    publish(uri);
  });

  connection.onNotification(clearCritiqueNotification, (params) => {
    criticFindings.delete(params.textDocument.uri);
    publish(params.textDocument.uri);
  });

  connection.onNotification(setLlmApiKeyNotification, (params) => {
    apiKey = params.apiKey && params.apiKey.trim() !== '' ? params.apiKey : null;
  });

  async function settings(): Promise<{ llm: LlmSettings; defaultTask?: string }> {
    if (!canReadConfiguration) return { llm: {} };
    try {
      const [llm, defaultTask] = (await connection.workspace.getConfiguration([
        { section: CONFIGURATION_SECTION },
        { section: 'rewardsmith.defaultTask' },
      ])) as [LlmSettings | null, string | null];
      return { llm: llm ?? {}, defaultTask: defaultTask || undefined };
    } catch {
      return { llm: {} };
    }
  }

  function contentKey(text: string, task = '', model = ''): string {
    return createHash('sha256').update(`${task}\u0000${model}\u0000${text}`).digest('hex');
  }

  connection.onRequest(critiqueRequest, async (params, token): Promise<CritiqueResult> => {
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return { status: 'error', kind: 'no-document', message: `The server does not have ${params.textDocument.uri} open.` };
    const text = doc.getText();
    const { llm, defaultTask } = await settings();
    const overrides = { ...llm, ...(apiKey ? { apiKey } : {}) };
    const key = contentKey(text, params.task ?? '', overrides.model ?? process.env.REWARDSMITH_MODEL ?? '');
    const cached = criticCache.get(key);
    if (cached && !params.force) {
      setCritic(doc, cached.findings);
      publish(doc.uri);
      return { ...cached, cached: true };
    }
    const abort = new AbortController();
    token.onCancellationRequested(() => abort.abort());
    const outcome = await critiqueFile({
      file: filePathOf(doc.uri),
      source: text,
      task: params.task,
      defaultTask,
      llm: overrides,
      staticDiagnostics: lintResults.get(doc.uri),
      signal: abort.signal,
    });
    if (outcome.status === 'ok') {
      criticCache.set(key, outcome);
      criticCache.set(contentKey(text), outcome);
      // Only publish if the document did not change while the critic was thinking.
      if (documents.get(doc.uri)?.getText() === text) {
        setCritic(doc, outcome.findings);
        publish(doc.uri);
      }
    }
    return outcome;
  });

  documents.listen(connection);
  connection.listen();
  if (!given && process.argv.includes('--stdio')) exitOnBrokenFraming();
  return new Promise<number>((resolve) => connection.onExit(() => resolve(0)));
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
