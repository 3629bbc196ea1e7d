// The Rewardsmith language server. Any LSP client can use it (it knows nothing about VS Code): diagnostics
// from the schema rules and TypeScript, quick fixes, hover, completion; the LLM critic's findings
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
} from './lsp_ext';
import { lintSnapshot, lintText, loadPythonParser, pythonParserReady, type RewardDiagnostic, type Severity } from '../../runner/src/lint/rules';
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
  return path.join(path.sep, '__unsaved__', REWARD_FILE_PATTERN.test(name) || PYTHON_REWARD.test(name) ? name : `${name}.reward.ts`);
}

/** Python reward files (`*.reward.py`), linted through tree-sitter-python rather than a TypeScript project. */
const PYTHON_REWARD = /\.reward\.py$/;

export function startServer(connection: Connection = createConnection(ProposedFeatures.all)): Promise<number> {
  const documents = new TextDocuments(TextDocument);
  const projects = new Map<string, RewardProject>();
  const lintResults = new Map<string, RewardDiagnostic[]>();
  const criticFindings = new Map<string, AnchoredFinding[]>();
  const criticCache = new Map<string, CritiqueResult & { status: 'ok' }>();
  const suggestions = new Map<string, Map<string, AnalyzerSuggestion>>();
  let apiKey: string | null = null;
  let canReadConfiguration = false;
  const pending = new Set<string>();
  let flushScheduled = false;

  const isReward = (uri: string) => REWARD_FILE_PATTERN.test(uri.replace(/[?#].*$/, '')) || isPythonReward(uri);
  const isPythonReward = (uri: string) => PYTHON_REWARD.test(uri.replace(/[?#].*$/, ''));
  /** Python files wait for the parser (WebAssembly, loaded once, in the background). */
  const pythonReady = (uri: string): boolean => {
    if (pythonParserReady()) return true;
    void loadPythonParser().then(() => schedule(uri));
    return false;
  };

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

  function rewardFunctionLine(doc: TextDocument | undefined) {
    const lines = doc?.getText().split('\n') ?? [];
    const line = Math.max(
      0,
      lines.findIndex((l) => /\breward_function\b/.test(l)),
    );
    return { start: { line, character: 0 }, end: { line, character: (lines[line] ?? '').length } };
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
    if (isPythonReward(uri) && !pythonReady(uri)) return;
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

  function schedule(uri: string): void {
    pending.add(uri);
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      const uris = [...pending];
      pending.clear();
      for (const u of uris) lintNow(u);
    });
  }

  connection.onInitialize((params) => {
    canReadConfiguration = !!params.capabilities.workspace?.configuration;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        hoverProvider: true,
        completionProvider: { triggerCharacters: ['"', "'", '.', '`'] },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        executeCommandProvider: { commands: Object.values(SERVER_COMMANDS) },
      },
      serverInfo: { name: 'rewardsmith', version: '0.1.0' },
    };
  });

  documents.onDidOpen((e) => {
    if (isReward(e.document.uri)) schedule(e.document.uri);
  });
  documents.onDidChangeContent((e) => {
    if (!isReward(e.document.uri)) return;
    // Content the critic has reviewed before (e.g. edit, then undo) shows that review again; otherwise the
    // findings follow their lines and go when those lines change.
    const cached = criticCache.get(contentKey(e.document.getText()));
    if (cached) setCritic(e.document, cached.findings);
    else reanchorCritic(e.document);
    schedule(e.document.uri);
  });
  documents.onDidClose((e) => {
    projects.get(e.document.uri)?.dispose();
    projects.delete(e.document.uri);
    lintResults.delete(e.document.uri);
    criticFindings.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onCodeAction((params) => {
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
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return null;
    // A file the checker cannot analyse (nested too deep) has no hover; nothing here may take the server down.
    try {
      if (isPythonReward(doc.uri)) return pythonReady(doc.uri) ? (pythonHoverAt(doc.getText(), params.position) ?? null) : null;
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
    const doc = documents.get(params.textDocument.uri);
    if (!doc || !isReward(doc.uri)) return [];
    try {
      if (isPythonReward(doc.uri)) return pythonReady(doc.uri) ? pythonCompletionsAt(doc.getText(), params.position) : [];
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
  return new Promise<number>((resolve) => connection.onExit(() => resolve(0)));
}

// Entry point of dist/server.js (the extension starts it with --stdio or --node-ipc). `rewardsmith lsp`
// imports this module and calls startServer() itself, so only start when this file is the program.
const entry = process.argv[1] ?? '';
if (/(^|[\\/])server\.(js|ts)$/.test(entry)) void startServer().then((code) => process.exit(code));
