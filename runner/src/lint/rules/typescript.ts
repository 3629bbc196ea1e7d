// TypeScript's own errors in a reward file (type errors, misspelt names, syntax), checked against the
// schema's declarations. Runs after every other rule: where a rule already explains a spot, or a line holds
// a Python-ism, TypeScript's message there is noise and is dropped. A few codes are said in the reward's
// terms (ts7030 → undefined-return, ts2493 → index-out-of-range, missing Node globals → the sandbox).
import ts from 'typescript';
import { IMPLICIT_ANY_CODES } from '../analysis';
import type { LintContext } from '../context';
import { defineRule, type RuleMeta, type Severity } from '../rule';
import { indexOutOfRange } from './index-out-of-range';
import { undefinedReturn } from './undefined-return';

const meta = {
  id: 'typescript',
  severity: 'error',
  description: "TypeScript's own errors (reported as ts<code>, with the severity TypeScript gives them)",
  docs: 'Reward files are type-checked against the observation schema\'s declarations, so a misspelt parameter, a wrong type or a syntax error shows up before training. Implicit-any and "cannot find module" errors are left out (the contract rule covers imports).',
  fixable: false,
} as const satisfies RuleMeta;

export const typescriptErrors = defineRule({
  meta,
  end: (ctx) => typescript(ctx),
});

function typescript(ctx: LintContext): void {
  const service = ctx.snap.project.languageService();
  const fileName = ctx.sf.fileName;
  const diagnostics = [...service.getSyntacticDiagnostics(fileName), ...service.getSemanticDiagnostics(fileName)];
  const mine = [...ctx.out];
  for (const d of diagnostics) {
    if (d.start === undefined || d.length === undefined || IMPLICIT_ANY_CODES.has(d.code)) continue;
    // "Cannot find module": the contract rule says why imports cannot work in the sandbox.
    if (d.code === 2307 || d.code === 2792) continue;
    const range = ctx.snap.range(d.start, d.start + d.length);
    if (ctx.pythonLines.has(range.start.line)) continue;
    // A rule already explains this spot (e.g. TypeScript's "not callable" under `cnb.get(…)`).
    const overlaps = mine.some(
      (m) =>
        !(
          m.range.end.line < range.start.line ||
          (m.range.end.line === range.start.line && m.range.end.character <= range.start.character) ||
          m.range.start.line > range.end.line ||
          (m.range.start.line === range.end.line && m.range.start.character >= range.end.character)
        ),
    );
    if (overlaps) continue;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    let code = `ts${d.code}`;
    let message = text;
    if (d.code === 7030) {
      code = undefinedReturn.meta.id;
      message = 'Not all code paths return a value: on the others this function returns undefined, which makes the reward NaN.';
    } else if (d.code === 2493) {
      code = indexOutOfRange.meta.id;
    } else if (d.code === 2580 || d.code === 2591) {
      // TypeScript suggests installing @types/node; the sandbox has no Node.js globals at all.
      const name = /Cannot find name '([^']+)'/.exec(text)?.[1] ?? 'it';
      message = `Cannot find name '${name}': reward code runs in a sandbox without Node.js globals (no require, process, file system, network or timers).`;
    }
    const severity: Severity =
      d.category === ts.DiagnosticCategory.Error
        ? 'error'
        : d.category === ts.DiagnosticCategory.Warning
          ? 'warning'
          : d.category === ts.DiagnosticCategory.Suggestion
            ? 'hint'
            : 'information';
    ctx.push({ range, severity, code, message, source: 'rewardsmith', fixes: [] });
  }
}
