// Code actions on a reward document: the schema rules' fixes (each finding's best one preferred, which VS Code
// applies with "Auto Fix"), then for each analyzer suggestion "Apply suggested patch" (a WorkspaceEdit whose
// change annotation needs confirmation, so the client previews it as a diff) and "Dismiss".
import { CodeActionKind, type CodeAction, type Diagnostic } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { diffTextEdits } from '../../runner/src/diff';
import type { RewardDiagnostic } from '../../runner/src/lint/rules';
import { DIAGNOSTIC_SOURCE, SERVER_COMMANDS, type AnalyzerSuggestion } from '../../protocol/src/lsp';

/** The actions for the client's `diagnostics` of `doc`, given the lint findings (`current`) and the document's suggestions. */
export function codeActions(
  doc: TextDocument,
  diagnostics: Diagnostic[],
  current: RewardDiagnostic[],
  suggestions: ReadonlyMap<string, AnalyzerSuggestion> | undefined,
): CodeAction[] {
  const uri = doc.uri;
  // The schema's fixes come first and each finding's best fix is marked preferred (VS Code lists preferred
  // actions first and applies them with "Auto Fix"); the analyzer's actions follow.
  const schemaFixes: CodeAction[] = [];
  const actions: CodeAction[] = [];
  const sameRange = (a: Diagnostic['range'], b: Diagnostic['range']) =>
    a.start.line === b.start.line && a.start.character === b.start.character && a.end.line === b.end.line && a.end.character === b.end.character;
  for (const diag of diagnostics) {
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
      const suggestion = id ? suggestions?.get(id) : undefined;
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
}
