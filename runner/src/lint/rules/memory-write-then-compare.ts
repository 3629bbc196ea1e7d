// `GLOBAL_DATA[k] = x;` and then, in the same call, `x < GLOBAL_DATA[k]`: the comparison sees the value just
// stored, so it is always equal. The intended "did it change since the last step?" needs the compare first
// and the store after (the paper's `GLOBAL_DATA["health"]` pattern, done in the wrong order).
import ts from 'typescript';
import { COMPARISON_OPERATORS, isFunctionLike, skipParens, stringKey, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'memory-write-then-compare',
  severity: 'error',
  description: 'a GLOBAL_DATA key compared right after it was stored in the same call (always equal)',
  docs: 'GLOBAL_DATA remembers values between steps. Storing the current value and then comparing against the same key compares the value with itself, so "health dropped" or "moved closer" is never detected. Compare with the stored value first, then store the new one at the end of the call.',
  fixable: false,
} as const satisfies RuleMeta;

export const memoryWriteThenCompare = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isBinaryExpression(node) || !COMPARISON_OPERATORS.has(node.operatorToken.kind)) return;
    for (const side of [node.left, node.right]) {
      const key = globalKey(side, ctx);
      if (key === undefined) continue;
      const write = storedBefore(node, key, ctx);
      if (!write) continue;
      const line = ctx.snap.range(write.getStart(ctx.sf), write.getEnd()).start.line + 1;
      ctx.report(
        meta,
        node,
        `GLOBAL_DATA['${key}'] was stored on line ${line} earlier in this call, so this compares the new value with itself (always ${node.operatorToken.kind === ts.SyntaxKind.ExclamationEqualsEqualsToken || node.operatorToken.kind === ts.SyntaxKind.ExclamationEqualsToken || node.operatorToken.kind === ts.SyntaxKind.LessThanToken || node.operatorToken.kind === ts.SyntaxKind.GreaterThanToken ? 'false' : 'true'}); compare first, store after.`,
      );
      return;
    }
  },
});

function globalKey(e: ts.Expression, ctx: LintContext): string | undefined {
  e = skipParens(e);
  if (ts.isElementAccessExpression(e) && ctx.isGlobalData(e.expression)) return stringKey(e.argumentExpression);
  if (ts.isPropertyAccessExpression(e) && ctx.isGlobalData(e.expression)) return e.name.text;
  return undefined;
}

/** A plain `GLOBAL_DATA[key] = value;` statement that runs before `node` on every path to it in the same function. */
function storedBefore(node: ts.Node, key: string, ctx: LintContext): ts.Statement | undefined {
  let child: ts.Node = node;
  for (let p: ts.Node | undefined = node.parent; p && !isFunctionLike(p) && !ts.isSourceFile(p); child = p, p = p.parent) {
    if (ts.isIterationStatement(p, false)) return undefined; // in a loop, a later iteration may see an earlier step's value
    if (!ts.isBlock(p)) continue;
    for (const s of p.statements) {
      if (s === child) break;
      if (
        ts.isExpressionStatement(s) &&
        ts.isBinaryExpression(s.expression) &&
        s.expression.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        globalKey(s.expression.left, ctx) === key
      )
        return s;
    }
  }
  return undefined;
}
