// What the server publishes for a document: its diagnostics from every source, each source named (lint,
// probes, the critic, the analyzer's suggestions) so that a client can filter or style them.
import { DiagnosticSeverity, type Diagnostic } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { RewardDiagnostic, Severity } from '../../runner/src/lint/rules';
import { DIAGNOSTIC_SOURCE, type AnalyzerSuggestion, type CritiqueFinding } from '../../protocol/src/lsp';
import { probeEpisodeData } from './probes';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

export function documentDiagnostics(
  doc: TextDocument | undefined,
  found: { lint: RewardDiagnostic[]; probe: RewardDiagnostic[]; critic: CritiqueFinding[]; suggestions: AnalyzerSuggestion[] },
): Diagnostic[] {
  const diagnostics: Diagnostic[] = found.lint.map((d) => ({
    range: d.range,
    severity: SEVERITY[d.severity],
    code: d.code,
    source: DIAGNOSTIC_SOURCE.lint,
    message: d.message,
  }));
  for (const d of found.probe)
    diagnostics.push({
      range: d.range,
      severity: SEVERITY[d.severity],
      code: d.code,
      source: DIAGNOSTIC_SOURCE.probe,
      message: d.message,
      ...probeEpisodeData(d),
    });
  for (const finding of found.critic) {
    diagnostics.push({ range: finding.range, severity: SEVERITY[finding.severity], source: DIAGNOSTIC_SOURCE.critic, message: finding.message });
  }
  for (const s of found.suggestions) {
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
  return diagnostics;
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
