// Statements after a `return` or `throw` never run. In LLM-written rewards this hides real code: the paper's
// printed approach-cow reward ends `dense` with `return dense_reward;` and then, inside `dense`, the final
// `Math.sign(sparse) + Math.sign(dense) * 0.1` combination, so reward_function itself returns undefined.
import ts from 'typescript';
import { alwaysExits, isFunctionLike, type LintContext } from '../context';
import type { PythonLintContext } from '../python';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'unreachable-code',
  severity: 'error',
  description: 'code after a return or throw, which never runs',
  docs: "A statement after `return` or `throw` in the same block never runs. When it is the reward's final combination (nested by mistake inside `dense` after its return), the reward function returns undefined on every step. Move the code where it belongs, usually after the helper's closing brace.",
  fixable: false,
} as const satisfies RuleMeta;

export const unreachableCode = defineRule({
  meta,
  python: pythonUnreachable,
  node(node, ctx) {
    if (!ts.isBlock(node) && !ts.isSourceFile(node) && !ts.isCaseClause(node) && !ts.isDefaultClause(node)) return;
    const statements = node.statements;
    for (let i = 0; i < statements.length - 1; i++) {
      if (!alwaysExits(statements[i]!)) continue;
      // Function declarations are hoisted: one after a return still serves the code before it.
      const dead = statements
        .slice(i + 1)
        .filter(
          (s) =>
            !ts.isFunctionDeclaration(s) &&
            !ts.isEmptyStatement(s) &&
            !(
              ts.isVariableStatement(s) &&
              !(s.declarationList.flags & ts.NodeFlags.BlockScoped) &&
              s.declarationList.declarations.every((d) => !d.initializer)
            ),
        );
      if (dead.length === 0) return;
      const first = dead[0]!;
      const owner = enclosingFunctionName(node);
      const combination = dead.some((s) => ts.isReturnStatement(s) && s.expression && /Math\.sign/.test(s.expression.getText(ctx.sf)));
      const where = owner ? ` in \`${owner}\`` : '';
      const message = combination
        ? `Unreachable: this return${where} comes after the \`return\` on line ${line(ctx, statements[i]!)}, so the combination never runs${owner && owner !== 'reward_function' ? ' and reward_function returns undefined unless it returns something itself; move it after the closing brace of ' + owner : ''}.`
        : `Unreachable code${where}: it comes after the \`${exitKeyword(statements[i]!)}\` on line ${line(ctx, statements[i]!)} and never runs.`;
      ctx.report(meta, first, message);
      return;
    }
  },
});

function line(ctx: LintContext, node: ts.Node): number {
  return ctx.snap.range(node.getStart(ctx.sf), node.getEnd()).start.line + 1;
}

function enclosingFunctionName(node: ts.Node): string | undefined {
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (isFunctionLike(n)) {
      if (n.name && ts.isIdentifier(n.name)) return n.name.text;
      if (ts.isVariableDeclaration(n.parent) && ts.isIdentifier(n.parent.name)) return n.parent.name.text;
      return undefined;
    }
  }
  return undefined;
}

function exitKeyword(s: ts.Statement): string {
  if (ts.isThrowStatement(s)) return 'throw';
  if (ts.isBreakStatement(s)) return 'break';
  if (ts.isContinueStatement(s)) return 'continue';
  return 'return';
}

/** Python: the first statement after a return, raise, continue or break in the same block. */
function pythonUnreachable(ctx: PythonLintContext): void {
  for (const block of ctx.ofType('block', 'module')) {
    const statements = block.namedChildren.filter((s) => s && s.type !== 'comment');
    const end = statements.findIndex((s) => ['return_statement', 'raise_statement', 'continue_statement', 'break_statement'].includes(s!.type));
    const first = end >= 0 ? statements[end + 1] : undefined;
    if (first) ctx.report(meta, first, `Unreachable: this comes after a ${statements[end]!.type.replace('_statement', '')} and never runs.`);
  }
}
