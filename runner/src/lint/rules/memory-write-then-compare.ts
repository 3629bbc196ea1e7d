// `GLOBAL_DATA[k] = x;` and then, in the same call, `x < GLOBAL_DATA[k]`: the comparison sees the value just
// stored against the expression it was stored from, so they are always equal. Only that is flagged: comparing
// the new value with anything else (`GLOBAL_DATA.steps = (GLOBAL_DATA.steps ?? 0) + 1; if (GLOBAL_DATA.steps > 300)`,
// a step counter) is what a store is for. The intended "did it change since the last step?" needs the compare first
// and the store after (the paper's `GLOBAL_DATA["health"]` pattern, done in the wrong order).
import ts from 'typescript';
import { COMPARISON_OPERATORS, isFunctionLike, skipParens, stringKey, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'memory-write-then-compare',
  severity: 'error',
  description: 'a GLOBAL_DATA key compared, right after it was stored in the same call, with the value it was stored from (always equal)',
  docs: 'GLOBAL_DATA remembers values between steps. Storing the current value (`GLOBAL_DATA.health = health`) and then comparing that key with the same value (`health < GLOBAL_DATA.health`) compares the value with itself, so "health dropped" or "moved closer" is never detected. Compare with the stored value first, then store the new one at the end of the call.',
  fixable: false,
} as const satisfies RuleMeta;

export const memoryWriteThenCompare = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isBinaryExpression(node) || !COMPARISON_OPERATORS.has(node.operatorToken.kind)) return;
    for (const [side, other] of [
      [node.left, node.right],
      [node.right, node.left],
    ] as const) {
      const key = globalKey(side, ctx);
      if (key === undefined) continue;
      const write = storedBefore(node, key, ctx);
      // Only the stored expression itself on the other side is the same value.
      if (!write || !sameText(write.expression.right, other, ctx)) continue;
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

function sameText(a: ts.Expression, b: ts.Expression, ctx: LintContext): boolean {
  return skipParens(a).getText(ctx.sf).replace(/\s+/g, '') === skipParens(b).getText(ctx.sf).replace(/\s+/g, '');
}

function globalKey(e: ts.Expression, ctx: LintContext): string | undefined {
  e = skipParens(e);
  if (ts.isElementAccessExpression(e) && ctx.isGlobalData(e.expression)) return stringKey(e.argumentExpression);
  if (ts.isPropertyAccessExpression(e) && ctx.isGlobalData(e.expression)) return e.name.text;
  return undefined;
}

/** A plain `GLOBAL_DATA[key] = value;` statement that runs before `node` on every path to it in the same function. */
function storedBefore(node: ts.Node, key: string, ctx: LintContext): (ts.ExpressionStatement & { expression: ts.BinaryExpression }) | undefined {
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
        return s as ts.ExpressionStatement & { expression: ts.BinaryExpression };
    }
  }
  return undefined;
}
