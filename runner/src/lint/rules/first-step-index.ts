// `past_agent_positions[past_agent_positions.length - 3]` (or `[2]`, or `.at(-3)`) is undefined on the first
// call of an episode, when the list holds the start and the current position only (FIRST_CALL_HISTORY); reading
// `[0]` of it then throws. The length may come through a name (`const n = past_agent_positions.length`).
import ts from 'typescript';
import { FIRST_CALL_HISTORY } from '../../schema';
import { alwaysExits, numericValue, skipParens, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'first-step-index',
  severity: 'error',
  description: `an entry of past_agent_positions older than the start position read without a length guard (undefined on the first step)`,
  docs: `On the first step of an episode \`past_agent_positions\` holds ${FIRST_CALL_HISTORY} entries (the start position and the current one), so \`past_agent_positions[past_agent_positions.length - 3]\` (or \`[2]\`, \`.at(-3)\`) is undefined and reading from it throws in the sandbox; \`length - 2\` is the start position and always there. Guard deeper reads: \`if (past_agent_positions.length < 3) return 0;\` first, or \`past_agent_positions.length >= 3 && …\`.`,
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
    if (!list || back === undefined || back <= FIRST_CALL_HISTORY || !isPositions(list, ctx)) return;
    if (guarded(node, ctx) || !readFromUnchecked(node as ts.Expression, ctx)) return;
    ctx.report(
      meta,
      node,
      `${ctx.snap.userTextOf(node)} is undefined on the first step of an episode (past_agent_positions then holds ${FIRST_CALL_HISTORY} entries: the start position and the current one); check past_agent_positions.length >= ${back} first.`,
    );
  },
});

function isPositions(e: ts.Expression, ctx: LintContext): boolean {
  e = skipParens(e);
  return ts.isIdentifier(e) && e.text === 'past_agent_positions' && ctx.isParameterRef(e);
}

/** `past_agent_positions.length`, written out or through a const that holds it. */
function isLength(e: ts.Expression, list: ts.Expression, ctx: LintContext): boolean {
  e = skipParens(e);
  if (ts.isPropertyAccessExpression(e)) return e.name.text === 'length' && skipParens(e.expression).getText(ctx.sf) === skipParens(list).getText(ctx.sf);
  const init = ts.isIdentifier(e) ? constInitializer(e, ctx) : undefined;
  return init !== undefined && isLength(init, list, ctx);
}

/** The initializer of the `const` an identifier names, if it is one. */
function constInitializer(id: ts.Identifier, ctx: LintContext): ts.Expression | undefined {
  const decl = ctx.checker.getSymbolAtLocation(id)?.valueDeclaration;
  if (!decl || !ts.isVariableDeclaration(decl) || !decl.initializer) return undefined;
  const list = decl.parent;
  return ts.isVariableDeclarationList(list) && list.flags & ts.NodeFlags.Const ? decl.initializer : undefined;
}

/** How many entries from the end an index reads (`length - 3` → 3, `n - 3` with n the length → 3, `2` → 3), or undefined. */
function stepsBack(index: ts.Expression, list: ts.Expression, ctx: LintContext): number | undefined {
  const literal = numericValue(index);
  if (literal !== undefined) return Number.isInteger(literal) && literal >= 1 ? literal + 1 : undefined;
  const e = skipParens(index);
  if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.MinusToken) {
    const k = numericValue(e.right);
    if (k !== undefined && isLength(e.left, list, ctx)) return k;
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

/** Whether a condition mentions the history's length: `past_agent_positions.length`, or a const holding it. */
function mentionsLength(n: ts.Node, ctx: LintContext): boolean {
  let found = false;
  const visit = (c: ts.Node) => {
    if (found) return;
    if (ts.isPropertyAccessExpression(c) && c.name.text === 'length' && /^past_agent_positions$/.test(skipParens(c.expression).getText(ctx.sf))) found = true;
    else if (ts.isIdentifier(c) && !(ts.isPropertyAccessExpression(c.parent) && c.parent.name === c)) {
      const init = constInitializer(c, ctx);
      if (init && ts.isPropertyAccessExpression(skipParens(init)) && mentionsLength(init, ctx)) found = true;
    }
    if (!found) ts.forEachChild(c, visit);
  };
  visit(n);
  return found;
}

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
