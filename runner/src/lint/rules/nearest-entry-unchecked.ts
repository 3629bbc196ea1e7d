// A nearest-blocks entry used without checking it is there (`cnb.lava[0] < 3`): when nothing of that name is
// visible the entry is absent, and reading it throws a TypeError that ends the episode's reward. Follows
// aliases (`const e = cnb.lava; e[0]`) and recognises the usual guards (`in`, `!== undefined`, `?.`,
// early returns, keys from iterating the dict).
import ts from 'typescript';
import { OBJECT_METHODS, PYTHON_DICT_METHODS, isFunctionLike, parentSkippingParens, skipParens, stringKey, type LintContext } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'nearest-entry-unchecked',
  severity: 'error',
  description: 'a nearest-blocks entry used without checking it is present',
  docs: "`current_nearest_blocks` only has entries for what is visible this step. `cnb.lava[0]` throws when no lava is in view; check `'lava' in cnb` first, use optional chaining, or return early. The fixes offer all three where they fit.",
  fixable: true,
} as const satisfies RuleMeta;

export const nearestEntryUnchecked = defineRule({
  meta,
  node(node, ctx) {
    if (ts.isElementAccessExpression(node)) {
      if (ctx.dictKeys(node.expression) === 'nearby') entryUse(ctx, node);
    } else if (ts.isPropertyAccessExpression(node)) {
      if (
        ts.isCallExpression(node.parent) &&
        node.parent.expression === node &&
        (OBJECT_METHODS.has(node.name.text) || PYTHON_DICT_METHODS.has(node.name.text))
      )
        return;
      if (ctx.dictKeys(node.expression) === 'nearby') entryUse(ctx, node);
    }
  },
});

/** Is the key of `D[key]` one that iterating D produced (`for (const k in D)`, `Object.keys(D)`)? */
function keyFromDict(ctx: LintContext, access: ts.ElementAccessExpression): boolean {
  const key = skipParens(access.argumentExpression);
  if (!ts.isIdentifier(key)) return false;
  const decl = ctx.declarationOf(key);
  const dictRef = ctx.refOf(access.expression);
  if (!decl || !dictRef) return false;
  const isKeysOf = (e: ts.Expression) => {
    e = skipParens(e);
    return (
      ts.isCallExpression(e) &&
      ts.isPropertyAccessExpression(e.expression) &&
      e.expression.name.text === 'keys' &&
      !!e.arguments[0] &&
      ctx.refOf(e.arguments[0]) === dictRef
    );
  };
  if (ts.isVariableDeclaration(decl) && ts.isVariableDeclarationList(decl.parent)) {
    const loop = decl.parent.parent;
    if (ts.isForInStatement(loop)) return ctx.refOf(loop.expression) === dictRef;
    if (ts.isForOfStatement(loop)) return isKeysOf(loop.expression);
  }
  if (ts.isParameter(decl) && (ts.isArrowFunction(decl.parent) || ts.isFunctionExpression(decl.parent)) && decl.parent.parameters[0] === decl) {
    const call = decl.parent.parent;
    if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) return false;
    const receiver = skipParens(call.expression.expression);
    if (isKeysOf(receiver)) return true;
    // NAMES.filter((n) => n in D).map((n) => D[n][0]): the filter kept only present keys.
    if (ts.isCallExpression(receiver) && ts.isPropertyAccessExpression(receiver.expression) && receiver.expression.name.text === 'filter') {
      const test = receiver.arguments[0];
      if (test && (ts.isArrowFunction(test) || ts.isFunctionExpression(test)) && test.parameters[0] && ts.isIdentifier(test.parameters[0].name)) {
        const body = ts.isBlock(test.body) ? test.body.statements.find(ts.isReturnStatement)?.expression : test.body;
        return !!body && ctx.implies(body, true).has(`${dictRef}|#${test.parameters[0].name.text}`);
      }
    }
  }
  return false;
}

/** Where an entry value is used in a way that throws when it is undefined. */
function unsafeUse(value: ts.Expression): boolean {
  const p = parentSkippingParens(value);
  if ((ts.isElementAccessExpression(p) || ts.isPropertyAccessExpression(p)) && skipParens(p.expression) === value) return !p.questionDotToken;
  if (ts.isVariableDeclaration(p) && p.initializer && skipParens(p.initializer) === value)
    return ts.isArrayBindingPattern(p.name) || ts.isObjectBindingPattern(p.name);
  if (ts.isSpreadElement(p) || (ts.isForOfStatement(p) && skipParens(p.expression) === value)) return true;
  if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken && skipParens(p.right) === value)
    return ts.isArrayLiteralExpression(p.left);
  return false;
}

function entryUse(ctx: LintContext, access: ts.ElementAccessExpression | ts.PropertyAccessExpression): void {
  if (ts.isElementAccessExpression(access) && keyFromDict(ctx, access)) return;
  const p = parentSkippingParens(access);
  if (
    ts.isBinaryExpression(p) &&
    p.left === access &&
    p.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    p.operatorToken.kind <= ts.SyntaxKind.LastAssignment
  )
    return;
  const ref = ctx.refOf(access);
  const key = ts.isElementAccessExpression(access) ? stringKey(access.argumentExpression) : access.name.text;
  const dictText = ctx.snap.userTextOf(access.expression);
  const check = key !== undefined ? `'${key}' in ${dictText}` : `${ctx.snap.userTextOf(access)} !== undefined`;
  const what = key !== undefined ? `no ${key} is visible` : 'that name is not visible';
  if (unsafeUse(access)) {
    if (!ctx.isGuarded(access, [ref]))
      reportEntry(ctx, access, check, `${ctx.snap.userTextOf(access)} is absent when ${what}; check ${check} first (reading it throws a TypeError).`);
    return;
  }
  // `const e = cnb.lava;` then `e[0]`: follow the alias unless it is reassigned.
  if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name) && p.initializer && skipParens(p.initializer) === access) {
    const sym = ctx.checker.getSymbolAtLocation(p.name);
    const scope = ts.findAncestor(p, (n) => ts.isBlock(n) || ts.isSourceFile(n) || isFunctionLike(n)) ?? ctx.sf;
    const uses: ts.Identifier[] = [];
    let reassigned = false;
    const find = (n: ts.Node) => {
      if (ts.isIdentifier(n) && n !== p.name && n.text === (p.name as ts.Identifier).text && ctx.checker.getSymbolAtLocation(n) === sym) {
        const up = parentSkippingParens(n);
        if (ts.isBinaryExpression(up) && up.left === n && up.operatorToken.kind === ts.SyntaxKind.EqualsToken) reassigned = true;
        else uses.push(n);
      }
      ts.forEachChild(n, find);
    };
    find(scope);
    if (reassigned || ctx.isGuarded(p, [ref])) return;
    for (const use of uses) {
      if (unsafeUse(use) && !ctx.isGuarded(use, [`v:${use.text}`, ref])) {
        reportEntry(
          ctx,
          use,
          `${use.text} !== undefined`,
          `${use.text} (= ${ctx.snap.userTextOf(access)}) is undefined when ${what}; check it before use (reading it throws a TypeError).`,
        );
      }
    }
  }
}

function reportEntry(ctx: LintContext, use: ts.Expression, check: string, message: string): void {
  const fixes: Fix[] = [];
  const p = parentSkippingParens(use);
  // In a condition: guard it (`if ('lava' in cnb && cnb.lava[0] < 3)`).
  const condition = ts.findAncestor(use, (n) => {
    const up = n.parent;
    return up && (ts.isIfStatement(up) || ts.isWhileStatement(up)) && up.expression === n ? true : isFunctionLike(n) || ts.isStatement(n) ? 'quit' : false;
  }) as ts.Expression | undefined;
  if (condition) {
    const cond = ctx.snap.userTextOf(condition);
    const wrapped = /\|\||\?/.test(cond) ? `(${cond})` : cond;
    fixes.push({ title: `Check first: if (${check} && …)`, edits: [ctx.replace(condition, `${check} && ${wrapped}`)], preferred: true });
  }
  if ((ts.isElementAccessExpression(p) || ts.isPropertyAccessExpression(p)) && !p.questionDotToken) {
    const text = ctx.snap.userTextOf(p);
    const base = ctx.snap.userTextOf(use);
    const rest = text.slice(base.length);
    const replaced = ts.isElementAccessExpression(p) ? `${base}?.${rest}` : `${base}?${rest}`;
    fixes.push({ title: `Use optional chaining: ${replaced}`, edits: [ctx.replace(p, replaced)], preferred: !condition });
  }
  // A statement in a helper or the reward function: leave early with no reward when the entry is absent.
  const statement = ts.findAncestor(use, (n) => ts.isStatement(n) && ts.isBlock(n.parent));
  if (!condition && statement && ts.findAncestor(statement, isFunctionLike)) {
    const start = ctx.snap.position(ctx.snap.toUser(statement.getStart(ctx.sf)));
    const indent = /^\s*/.exec(ctx.snap.lineText(start.line))![0];
    const negated = check.includes(' in ') ? `!(${check})` : check.replace('!==', '===');
    fixes.push({
      title: `Return 0 when it is absent: if (${negated}) return 0;`,
      edits: [
        { range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: `${indent}if (${negated}) return 0;\n` },
      ],
      preferred: fixes.length === 0,
    });
  }
  ctx.report(meta, use, message, fixes);
}
