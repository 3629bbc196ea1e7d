// The reward contract as the runtime checks it: the file exports `reward_function` (or `dense` and `sparse`)
// with the contract's parameters and imports no modules. Lint and training agree because this is the
// runtime's own check.
import ts from 'typescript';
import { RewardError, compileRewardFile } from '../../reward/compile';
import { skipParens, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'reward-contract',
  severity: 'error',
  description: "the file does not export reward_function (or dense and sparse) with the contract's parameters, or imports modules",
  docs: "Training loads the file in a sandbox that has no modules and calls `reward_function` (or combines `dense` and `sparse`) with the schema's parameters in the schema's order. A file that does not fit is rejected when training starts; this says so while you type.",
  fixable: false,
} as const satisfies RuleMeta;

/** Contract results by file, keyed by what the contract depends on (imports and exported signatures). */
const contractCache = new Map<string, { key: string; error: { line: number; column: number; message: string } | null }>();

export const rewardContract = defineRule({
  meta,
  end: (ctx) => contract(ctx),
});

/**
 * The runtime's own contract check (reward/compile.ts), so that lint and training agree. It
 * transpiles the file, which is too slow for every keystroke, so it runs again only when the imports or
 * the exported functions' signatures change. Syntax errors are left to TypeScript's diagnostics.
 */
function contract(ctx: LintContext): void {
  const parts: string[] = [];
  for (const st of ctx.sf.statements) {
    if (ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st)) parts.push(ctx.snap.userTextOf(st));
    else if (ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isFunctionDeclaration(st)) parts.push(`${st.name?.text}(${st.parameters.map((p) => ctx.snap.userTextOf(p.name)).join(',')})`);
      else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          const init = d.initializer && skipParens(d.initializer);
          const params =
            init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init.parameters.map((p) => ctx.snap.userTextOf(p.name)).join(',') : '';
          parts.push(`${ctx.snap.userTextOf(d.name)}(${params})`);
        }
      }
    }
  }
  const file = ctx.sf.fileName;
  // Where the statements are matters only for placing an error.
  const signatures = parts.join('\n');
  let cached = contractCache.get(file);
  const key = cached?.error ? `${signatures}\n@${ctx.sf.statements.map((st) => st.getStart(ctx.sf)).join(',')}` : signatures;
  if (!cached || cached.key !== key) {
    let error: { line: number; column: number; message: string } | null = null;
    try {
      compileRewardFile(file, ctx.snap.text);
    } catch (err) {
      if (!(err instanceof RewardError)) throw err;
      if (err.kind === 'compile') return; // a syntax error: TypeScript reports it; check the contract once it parses
      error = { line: err.line, column: err.column, message: err.detail };
    }
    cached = { key: error ? `${signatures}\n@${ctx.sf.statements.map((st) => st.getStart(ctx.sf)).join(',')}` : signatures, error };
    contractCache.set(file, cached);
  }
  if (!cached.error) return;
  const start = { line: cached.error.line - 1, character: cached.error.column - 1 };
  const word = /^[\w$]+/.exec(ctx.snap.lineText(start.line).slice(start.character))?.[0] ?? '';
  const range = { start, end: { line: start.line, character: start.character + Math.max(word.length, 1) } };
  ctx.push({ range, severity: meta.severity, code: meta.id, source: 'rewardsmith', message: cached.error.message, fixes: [] });
}
