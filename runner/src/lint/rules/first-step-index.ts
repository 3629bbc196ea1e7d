// `past_agent_positions[past_agent_positions.length - 2]` (or `[1]`, or `.at(-2)`) is undefined on the first
// step of an episode, when the list holds only the current position; reading `[0]` of it then throws.
import ts from 'typescript';
import { alwaysExits, numericValue, skipParens, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'first-step-index',
  severity: 'error',
  description: 'an earlier entry of past_agent_positions read without a length guard (undefined on the first step)',
  docs: 'On the first step of an episode `past_agent_positions` holds one entry (the current position), so `past_agent_positions[past_agent_positions.length - 2]` is undefined and reading from it throws in the sandbox. Guard it: `if (past_agent_positions.length < 2) return 0;` first, or `past_agent_positions.length >= 2 && …`.',
  fixable: false,
} as const satisfies RuleMeta;

export const firstStepIndex = defineRule({
  meta,
  node(node, ctx) {
    let list: ts.Expression | undefined;
    let back: number | undefined;
    if (ts.isElementAccessExpression(node)) {
      list = node.expression;
      back = stepsBack(node.argumentExpression, list, ctx);
    } else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'at' && node.arguments[0]) {
      list = node.expression.expression;
      const i = numericValue(node.arguments[0]);
      back = i !== undefined && i < 0 ? -i : undefined;
    }
    if (!list || back === undefined || back < 2 || !isPositions(list, ctx)) return;
    if (guarded(node, ctx) || !readFromUnchecked(node as ts.Expression, ctx)) return;
    ctx.report(
      meta,
      node,
      `${ctx.snap.userTextOf(node)} is undefined on the first step of an episode (past_agent_positions then holds only the current position); check past_agent_positions.length >= ${back} first.`,
    );
  },
});

function isPositions(e: ts.Expression, ctx: LintContext): boolean {
  e = skipParens(e);
  return ts.isIdentifier(e) && e.text === 'past_agent_positions' && ctx.isParameterRef(e);
}

/** How many entries from the end an index reads (`length - 2` → 2, `1` → 2), or undefined. */
function stepsBack(index: ts.Expression, list: ts.Expression, ctx: LintContext): number | undefined {
  const literal = numericValue(index);
  if (literal !== undefined) return Number.isInteger(literal) && literal >= 1 ? literal + 1 : undefined;
  const e = skipParens(index);
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.MinusToken) {
    const k = numericValue(e.right);
    const left = skipParens(e.left);
    if (
      k !== undefined &&
      ts.isPropertyAccessExpression(left) &&
      left.name.text === 'length' &&
      skipParens(left.expression).getText(ctx.sf) === skipParens(list).getText(ctx.sf)
    )
      return k;
  }
  return undefined;
}

/** Whether something reads from the (possibly undefined) entry without checking it first. */
function readFromUnchecked(node: ts.Expression, ctx: LintContext): boolean {
  let e: ts.Node = node;
  while (e.parent && (ts.isParenthesizedExpression(e.parent) || ts.isNonNullExpression(e.parent))) e = e.parent;
  const p = e.parent;
  if (!p) return false;
  if ((ts.isElementAccessExpression(p) || ts.isPropertyAccessExpression(p)) && p.expression === e) return !p.questionDotToken;
  if (!ts.isVariableDeclaration(p) || p.initializer !== e) return false;
  if (ts.isArrayBindingPattern(p.name) || ts.isObjectBindingPattern(p.name)) return true;
  if (!ts.isIdentifier(p.name)) return false;
  // `const prev = …; prev[0]`: a read of the variable that no presence check or length check covers.
  const symbol = ctx.checker.getSymbolAtLocation(p.name);
  const scope = p.parent?.parent?.parent;
  let unchecked = false;
  const visit = (n: ts.Node) => {
    if (unchecked) return;
    if (ts.isIdentifier(n) && n !== p.name && ctx.checker.getSymbolAtLocation(n) === symbol) {
      const use = n.parent;
      if (use && (ts.isElementAccessExpression(use) || ts.isPropertyAccessExpression(use)) && use.expression === n && !use.questionDotToken) {
        if (!ctx.isGuarded(use, [ctx.refOf(n)]) && !guarded(use, ctx)) unchecked = true;
      }
    }
    ts.forEachChild(n, visit);
  };
  if (scope && symbol) visit(scope);
  return unchecked;
}

const mentionsLength = (n: ts.Node, ctx: LintContext): boolean => /past_agent_positions\s*\.\s*length/.test(n.getText(ctx.sf));

/** A condition on past_agent_positions.length decides whether `node` runs: around it, or as an early exit before it. */
function guarded(node: ts.Node, ctx: LintContext): boolean {
  let child: ts.Node = node;
  for (let p: ts.Node | undefined = node.parent; p; child = p, p = p.parent) {
    if ((ts.isIfStatement(p) || ts.isWhileStatement(p)) && child !== p.expression && mentionsLength(p.expression, ctx)) return true;
    if (ts.isConditionalExpression(p) && child !== p.condition && mentionsLength(p.condition, ctx)) return true;
    if (ts.isForStatement(p) && p.condition && mentionsLength(p.condition, ctx)) return true;
    if (
      ts.isBinaryExpression(p) &&
      (p.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken ||
        p.operatorToken.kind === ts.SyntaxKind.BarBarToken ||
        p.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken) &&
      child === p.right &&
      mentionsLength(p.left, ctx)
    )
      return true;
    if (ts.isBlock(p) || ts.isSourceFile(p)) {
      for (const s of p.statements) {
        if (s === child) break;
        if (ts.isIfStatement(s) && mentionsLength(s.expression, ctx) && alwaysExits(s.thenStatement)) return true;
      }
    }
  }
  return false;
}
