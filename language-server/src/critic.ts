// The LLM critic in the editor: `rewardsmith/critique` reviews a document, its findings are kept anchored to
// the text of their lines (they follow those lines when lines move above them and go when they change), and a
// review is cached by content, so the same text (e.g. after an edit and its undo) shows its review again.
import { createHash } from 'node:crypto';
import type { CancellationToken, Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { critiqueFile } from '../../runner/src/llm/critique';
import type { RewardDiagnostic } from '../../runner/src/lint/rules';
import type { CritiqueFinding, CritiqueParams, CritiqueResult, LlmSettings } from '../../protocol/src/lsp';

/** A critic finding with the text of its lines when it was made: it stays while those lines are unchanged
 * (following them when lines are inserted or removed above) and goes when they change. */
interface AnchoredFinding {
  finding: CritiqueFinding;
  lines: string[];
}

export interface EditorCriticHost {
  connection: Connection;
  documents: TextDocuments<TextDocument>;
  filePathOf(uri: string): string;
  settings(): Promise<{ llm: LlmSettings; defaultTask?: string }>;
  /** The static diagnostics of `uri` (the critic is told them, so it does not repeat them). */
  staticDiagnostics(uri: string): RewardDiagnostic[] | undefined;
  /** New findings for `uri`: publish its diagnostics. */
  publish(uri: string): void;
}

export class EditorCritic {
  private readonly anchored = new Map<string, AnchoredFinding[]>();
  private readonly cache = new Map<string, CritiqueResult & { status: 'ok' }>();
  /** Sent by the client (it keeps the key in its secret storage); overrides OPENAI_API_KEY. */
  apiKey: string | null = null;

  constructor(private readonly host: EditorCriticHost) {}

  findings(uri: string): CritiqueFinding[] {
    return (this.anchored.get(uri) ?? []).map((a) => a.finding);
  }

  clear(uri: string): void {
    this.anchored.delete(uri);
  }

  /** Content the critic has reviewed before (e.g. edit, then undo) shows that review again; otherwise the
   * findings follow their lines and go when those lines change. */
  follow(uri: string): void {
    const doc = this.host.documents.get(uri);
    if (!doc) return;
    const cached = this.cache.get(contentKey(doc.getText()));
    if (cached) this.set(doc, cached.findings);
    else this.reanchor(doc);
  }

  async critique(params: CritiqueParams, token: CancellationToken): Promise<CritiqueResult> {
    const { documents, publish } = this.host;
    const doc = documents.get(params.textDocument.uri);
    if (!doc) return { status: 'error', kind: 'no-document', message: `The server does not have ${params.textDocument.uri} open.` };
    const text = doc.getText();
    const { llm, defaultTask } = await this.host.settings();
    const overrides = { ...llm, ...(this.apiKey ? { apiKey: this.apiKey } : {}) };
    const key = contentKey(text, params.task ?? '', overrides.model ?? process.env.REWARDSMITH_MODEL ?? '');
    const cached = this.cache.get(key);
    if (cached && !params.force) {
      this.set(doc, cached.findings);
      publish(doc.uri);
      return { ...cached, cached: true };
    }
    const abort = new AbortController();
    token.onCancellationRequested(() => abort.abort());
    const outcome = await critiqueFile({
      file: this.host.filePathOf(doc.uri),
      source: text,
      task: params.task,
      defaultTask,
      llm: overrides,
      staticDiagnostics: this.host.staticDiagnostics(doc.uri),
      signal: abort.signal,
    });
    if (outcome.status === 'ok') {
      this.cache.set(key, outcome);
      this.cache.set(contentKey(text), outcome);
      // Only publish if the document did not change while the critic was thinking.
      if (documents.get(doc.uri)?.getText() === text) {
        this.set(doc, outcome.findings);
        publish(doc.uri);
      }
    }
    return outcome;
  }

  private set(doc: TextDocument, findings: CritiqueFinding[]): void {
    const lines = linesOf(doc);
    this.anchored.set(
      doc.uri,
      findings.map((finding) => ({ finding, lines: lines.slice(finding.range.start.line, finding.range.end.line + 1) })),
    );
  }

  /** Keeps each critic finding whose lines are still there (moved if needed); drops the others. */
  private reanchor(doc: TextDocument): void {
    const anchored = this.anchored.get(doc.uri);
    if (!anchored?.length) return;
    const lines = linesOf(doc);
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
    this.anchored.set(doc.uri, kept);
  }
}

const linesOf = (doc: TextDocument) =>
  doc
    .getText()
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));

function contentKey(text: string, task = '', model = ''): string {
  return createHash('sha256').update(`${task}\u0000${model}\u0000${text}`).digest('hex');
}
