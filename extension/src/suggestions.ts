// The trajectory analyzer's suggestions: kept per reward file, pushed to the language server (which shows them
// as `reward-analyzer` diagnostics with Apply/Dismiss code actions), listed in the "Suggestions" tree, and
// previewable as a diff against a virtual document before being applied as a WorkspaceEdit.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { setSuggestionsNotification, suggestionResolvedNotification, type AnalyzerSuggestion } from '../../protocol/src/lsp';
import type { SuggestionEvent } from '../../runner/src/events';
import { applyUnifiedDiff, PatchError } from '../../runner/src/diff';
import { patchTarget, PatchTargetError } from '../../runner/src/patch-target';

export const PATCHED_SCHEME = 'rewardsmith-patched';

/** A suggestion as `rewardsmith analyze` streams it (event) or writes it (suggestions.json). */
export function toAnalyzerSuggestion(s: Pick<SuggestionEvent, 'id' | 'message' | 'lines' | 'diff'> & { evidence?: string }): AnalyzerSuggestion {
  const out: AnalyzerSuggestion = { id: s.id, message: s.message };
  if (s.evidence) out.evidence = s.evidence;
  if (s.lines) out.range = { start: { line: s.lines[0] - 1, character: 0 }, end: { line: s.lines[1] - 1, character: Number.MAX_SAFE_INTEGER } };
  if (s.diff) out.diff = s.diff;
  return out;
}

/** How much of a run's failures the analyzer explained (suggestions.json), or, while training, how many failed training episodes the provisional suggestions are about. */
export type Coverage = { failed: number; explained: number; causes: Record<string, number> } | { provisional: true; failed: number };

type Node =
  | { kind: 'file'; uri: string }
  | { kind: 'coverage'; uri: string; coverage: Coverage }
  | { kind: 'suggestion'; uri: string; suggestion: AnalyzerSuggestion };

/** "74 of 75 failed episodes explained (99 %) · reward-gamed 61, target-not-approached 56"; the provisional variant says so. */
export function coverageLabel(c: Coverage): { label: string; description: string } {
  if ('provisional' in c) return { label: `Provisional: from ${c.failed} failed training episodes`, description: 'replaced after held-out evaluation' };
  const pct = c.failed > 0 ? Math.round((100 * c.explained) / c.failed) : 100;
  const causes = Object.entries(c.causes)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return { label: `${c.explained} of ${c.failed} failed episodes explained (${pct} %)`, description: causes };
}

export class Suggestions implements vscode.TreeDataProvider<Node>, vscode.TextDocumentContentProvider {
  private readonly byFile = new Map<string, AnalyzerSuggestion[]>();
  private readonly coverage = new Map<string, Coverage>();
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly patchedChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.patchedChanged.event;

  constructor(private readonly client: () => LanguageClient | undefined) {}

  /** Call once the client runs: the server tells us when its code actions applied or dismissed one. */
  listen(client: LanguageClient): vscode.Disposable {
    return client.onNotification(suggestionResolvedNotification, ({ textDocument, id }) => this.drop(textDocument.uri, id, false));
  }

  set(uri: vscode.Uri, suggestions: AnalyzerSuggestion[], coverage?: Coverage): void {
    this.byFile.set(uri.toString(), suggestions);
    if (coverage) this.coverage.set(uri.toString(), coverage);
    else this.coverage.delete(uri.toString());
    this.push(uri.toString());
    this.changed.fire(undefined);
  }

  all(): { uri: string; suggestion: AnalyzerSuggestion }[] {
    return [...this.byFile].flatMap(([uri, list]) => list.map((suggestion) => ({ uri, suggestion })));
  }

  find(uri: string, id: string): AnalyzerSuggestion | undefined {
    return this.byFile.get(uri)?.find((s) => s.id === id);
  }

  /** Re-sends every file's suggestions (after the server restarts). */
  pushAll(): void {
    for (const uri of this.byFile.keys()) this.push(uri);
  }

  private push(uri: string): void {
    void this.client()?.sendNotification(setSuggestionsNotification, { textDocument: { uri }, suggestions: this.byFile.get(uri) ?? [] });
  }

  drop(uri: string, id: string, tellServer = true): void {
    const list = this.byFile.get(uri);
    if (!list) return;
    this.byFile.set(
      uri,
      list.filter((s) => s.id !== id),
    );
    if (tellServer) this.push(uri);
    this.changed.fire(undefined);
  }

  // --- preview and apply --------------------------------------------------------------------------------
  /** Virtual document `rewardsmith-patched:<path>?<uri>#<id>`: the file as it would be with the patch applied. */
  patchedUri(uri: string, id: string): vscode.Uri {
    const file = vscode.Uri.parse(uri);
    return vscode.Uri.from({ scheme: PATCHED_SCHEME, path: file.path, query: uri, fragment: id });
  }

  provideTextDocumentContent(patched: vscode.Uri): string {
    const { text } = this.patchedText(patched.query, patched.fragment);
    return text;
  }

  private patchedText(uri: string, id: string): { text: string; document?: vscode.TextDocument } {
    const suggestion = this.find(uri, id);
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    if (!suggestion?.diff || !document) throw new PatchError('the suggestion or its file is no longer open');
    return { text: applyUnifiedDiff(document.getText(), suggestion.diff), document };
  }

  async preview(uri: string, id: string): Promise<void> {
    const suggestion = this.find(uri, id);
    if (!suggestion?.diff) return;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    try {
      applyUnifiedDiff(document.getText(), suggestion.diff);
    } catch (err) {
      void vscode.window.showWarningMessage(`The suggested patch no longer applies: ${(err as Error).message}. Re-run the analyzer on the current file.`);
      return;
    }
    const patched = this.patchedUri(uri, id);
    this.patchedChanged.fire(patched);
    await vscode.commands.executeCommand('vscode.diff', document.uri, patched, `${path.basename(document.uri.fsPath)} ↔ suggested patch`, { preview: true });
    const choice = await vscode.window.showInformationMessage(
      `Suggested patch to ${vscode.workspace.asRelativePath(document.uri)}: ${firstLine(suggestion.message)}`,
      'Apply',
      'Dismiss',
    );
    if (choice === 'Apply') await this.apply(uri, id);
    else if (choice === 'Dismiss') this.drop(uri, id);
  }

  async apply(uri: string, id: string): Promise<boolean> {
    await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    let patched: { text: string; document?: vscode.TextDocument };
    try {
      patched = this.patchedText(uri, id);
    } catch (err) {
      void vscode.window.showWarningMessage(`The suggested patch no longer applies: ${(err as Error).message}`);
      return false;
    }
    const document = patched.document!;
    // The editor patches the document the user has open, never a path a run's records name: the "named" case
    // of the rule `rewardsmith apply` follows (records.ts patchTarget), which also insists on a reward module.
    try {
      patchTarget({ named: document.uri.fsPath });
    } catch (err) {
      if (!(err instanceof PatchTargetError)) throw err;
      void vscode.window.showWarningMessage(`Rewardsmith: ${err.message}`);
      return false;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), patched.text);
    if (!(await vscode.workspace.applyEdit(edit))) return false;
    this.drop(uri, id);
    return true;
  }

  // --- tree ---------------------------------------------------------------------------------------------
  getChildren(node?: Node): Node[] {
    if (!node) {
      const files = [...this.byFile].filter(([uri, list]) => list.length > 0 || this.coverage.has(uri));
      // One file: its coverage and suggestions directly; several: one folder per file.
      if (files.length === 1) return this.fileChildren(files[0][0]);
      return files.map(([uri]) => ({ kind: 'file', uri }));
    }
    if (node.kind === 'file') return this.fileChildren(node.uri);
    return [];
  }

  private fileChildren(uri: string): Node[] {
    const coverage = this.coverage.get(uri);
    return [
      ...(coverage ? [{ kind: 'coverage' as const, uri, coverage }] : []),
      ...(this.byFile.get(uri) ?? []).map((suggestion) => ({ kind: 'suggestion' as const, uri, suggestion })),
    ];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'file') {
      const item = new vscode.TreeItem(vscode.Uri.parse(node.uri), vscode.TreeItemCollapsibleState.Expanded);
      item.description = vscode.workspace.asRelativePath(vscode.Uri.parse(node.uri));
      return item;
    }
    if (node.kind === 'coverage') {
      const { label, description } = coverageLabel(node.coverage);
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
      item.description = description;
      item.tooltip = description ? `Failed episodes per cause (an episode may have several): ${description}` : label;
      item.iconPath = new vscode.ThemeIcon('pie-chart');
      item.contextValue = 'coverage';
      return item;
    }
    const { suggestion, uri } = node;
    const item = new vscode.TreeItem(firstLine(suggestion.message), vscode.TreeItemCollapsibleState.None);
    const line = suggestion.range ? suggestion.range.start.line + 1 : undefined;
    item.description = `${path.basename(vscode.Uri.parse(uri).fsPath)}${line ? `:${line}` : ''}${suggestion.diff ? ' · patch' : ''}`;
    item.tooltip = new vscode.MarkdownString().appendText(suggestion.message + (suggestion.evidence ? `\n\nEvidence: ${suggestion.evidence}` : ''));
    item.iconPath = new vscode.ThemeIcon(suggestion.diff ? 'lightbulb-autofix' : 'lightbulb');
    item.contextValue = suggestion.diff ? 'suggestion.patch' : 'suggestion';
    item.command = suggestion.diff
      ? { command: 'rewardsmith.previewSuggestion', title: 'Preview suggested patch', arguments: [{ uri, id: suggestion.id }] }
      : {
          command: 'vscode.open',
          title: 'Show',
          arguments: [
            vscode.Uri.parse(uri),
            { selection: suggestion.range ? new vscode.Range(suggestion.range.start.line, 0, suggestion.range.start.line, 0) : undefined },
          ],
        };
    return item;
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}

/** The Suggestions view, the patched-file previews and the preview / apply / dismiss commands. */
export function registerSuggestionsView(context: vscode.ExtensionContext, suggestions: Suggestions): void {
  /** Suggestion commands get `{uri, id}` from code actions and the tree's node from its inline buttons. */
  const target = (arg: { uri: string; id?: string; suggestion?: AnalyzerSuggestion }) => ({ uri: arg.uri, id: arg.id ?? arg.suggestion?.id ?? '' });
  context.subscriptions.push(
    vscode.window.registerTreeDataProvider('rewardsmith.suggestions', suggestions),
    vscode.workspace.registerTextDocumentContentProvider(PATCHED_SCHEME, suggestions),
    vscode.commands.registerCommand('rewardsmith.previewSuggestion', (arg) => suggestions.preview(target(arg).uri, target(arg).id)),
    vscode.commands.registerCommand('rewardsmith.applySuggestion', (arg) => suggestions.apply(target(arg).uri, target(arg).id)),
    vscode.commands.registerCommand('rewardsmith.dismissSuggestion', (arg) => suggestions.drop(target(arg).uri, target(arg).id)),
  );
}
