// A GLOBAL_DATA key read before anything can have stored it: on the first step of every episode it is
// undefined, so comparisons with it are silently false and arithmetic gives NaN. A write counts if it runs
// earlier (helpers are placed at their earliest call site); reads that test for the key themselves, and
// variables whose every use checks them, are fine.
import ts from 'typescript';
import { schemaParameter } from '../analysis';
import { OBJECT_METHODS, PYTHON_DICT_METHODS, isFunctionLike, parentSkippingParens, skipParens, stringKey, type LintContext } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';
import { isAssignmentTarget, keyUses, type PythonLintContext } from '../python';

const meta = {
  id: 'global-data-uninitialised',
  severity: 'error',
  description: 'a GLOBAL_DATA key read before anything can have stored it',
  docs: 'GLOBAL_DATA starts empty in every episode. A key read (or updated with `+=`, `++`, `.push`) before the first write is undefined on the first step: the reward is NaN or a TypeError. Initialise it first (`GLOBAL_DATA.k ??= 0`) or read it with a default (`GLOBAL_DATA.k ?? 0`).',
  fixable: true,
} as const satisfies RuleMeta;

/** This file's GLOBAL_DATA accesses, collected during the walk. */
const accessesOf = (ctx: LintContext) => ctx.memo('global-data-accesses', () => [] as ts.Expression[]);

export const globalDataUninitialised = defineRule({
  meta,
  node(node, ctx) {
    if ((ts.isElementAccessExpression(node) || ts.isPropertyAccessExpression(node)) && ctx.isGlobalData(node.expression)) accessesOf(ctx).push(node);
  },
  end: (ctx) => globalData(ctx, accessesOf(ctx)),
  python: pythonGlobalData,
});

function globalKey(access: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(access)) return access.name.text;
  if (ts.isElementAccessExpression(access)) return stringKey(access.argumentExpression);
  return undefined;
}

/** The function whose body a node runs in, if it is a named helper (its call sites say when it runs). */
function helperOf(node: ts.Node): { fn: ts.Node; name: string } | undefined {
  const fn = ts.findAncestor(node.parent, isFunctionLike);
  if (!fn) return undefined;
  if (ts.isFunctionDeclaration(fn) && fn.name) return { fn, name: fn.name.text };
  if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isVariableDeclaration(fn.parent) && ts.isIdentifier(fn.parent.name))
    return { fn, name: fn.parent.name.text };
  return undefined;
}

function callsOf(ctx: LintContext, name: string): ts.CallExpression[] {
  const callSites = ctx.memo('global-data-call-sites', () => new Map<string, ts.CallExpression[]>());
  let sites = callSites.get(name);
  if (!sites) {
    sites = [];
    const list = sites;
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === name) list.push(n);
      ts.forEachChild(n, visit);
    };
    visit(ctx.sf);
    callSites.set(name, sites);
  }
  return sites;
}

/** When `node` (at position `pos`) runs, in terms of a position in the code that contains `other`. */
function anchor(ctx: LintContext, node: ts.Node, pos: number, other: ts.Node): number {
  let current = node;
  for (let depth = 0; depth < 6; depth++) {
    const helper = helperOf(current);
    if (!helper || (other.pos >= helper.fn.pos && other.end <= helper.fn.end)) return pos;
    const calls = callsOf(ctx, helper.name);
    if (calls.length === 0) return pos;
    const earliest = calls.reduce((a, b) => (a.getStart(ctx.sf) <= b.getStart(ctx.sf) ? a : b));
    pos = earliest.getStart(ctx.sf);
    current = earliest;
  }
  return pos;
}

function globalData(ctx: LintContext, accesses: ts.Expression[]): void {
  const writes = new Map<string, { node: ts.Node; at: number; value?: ts.Expression }[]>();
  const reads: { node: ts.Expression; key: string; compound: boolean }[] = [];
  const addWrite = (key: string, node: ts.Node, at: number, value?: ts.Expression) => {
    const list = writes.get(key) ?? [];
    list.push({ node, at, value });
    writes.set(key, list);
  };
  for (const access of accesses) {
    const key = globalKey(access);
    if (key === undefined) continue;
    const p = parentSkippingParens(access);
    if (OBJECT_METHODS.has(key) || (ts.isCallExpression(p) && p.expression === access && PYTHON_DICT_METHODS.has(key))) continue;
    if (ts.isDeleteExpression(p)) continue;
    if (ts.isBinaryExpression(p) && p.left === access) {
      const op = p.operatorToken.kind;
      if (op === ts.SyntaxKind.EqualsToken) {
        addWrite(key, p, p.getEnd(), p.right);
        continue;
      }
      if (op === ts.SyntaxKind.QuestionQuestionEqualsToken || op === ts.SyntaxKind.BarBarEqualsToken) {
        addWrite(key, p, p.getEnd(), p.right);
        continue;
      }
      if (op >= ts.SyntaxKind.FirstCompoundAssignment && op <= ts.SyntaxKind.LastCompoundAssignment) {
        reads.push({ node: access, key, compound: true });
        addWrite(key, p, p.getEnd());
        continue;
      }
    }
    if (
      (ts.isPrefixUnaryExpression(p) || ts.isPostfixUnaryExpression(p)) &&
      (p.operator === ts.SyntaxKind.PlusPlusToken || p.operator === ts.SyntaxKind.MinusMinusToken)
    ) {
      reads.push({ node: access, key, compound: true });
      addWrite(key, p, p.getEnd());
      continue;
    }
    reads.push({ node: access, key, compound: false });
  }
  // Object.assign(GLOBAL_DATA, { key: value, … }) initialises keys too.
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n) && n.expression.getText(ctx.sf) === 'Object.assign' && n.arguments[0] && ctx.isGlobalData(n.arguments[0])) {
      for (const arg of n.arguments.slice(1)) {
        if (!ts.isObjectLiteralExpression(arg)) continue;
        for (const prop of arg.properties)
          if (prop.name && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name)))
            addWrite(prop.name.text, n, n.getEnd(), ts.isPropertyAssignment(prop) ? prop.initializer : undefined);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(ctx.sf);

  for (const read of reads) {
    if (!read.compound && selfGuarding(read.node)) continue;
    const ref = ctx.refOf(read.node);
    if (ctx.isGuarded(read.node, [ref])) continue;
    const readAt = read.node.getStart(ctx.sf);
    const earlier = (writes.get(read.key) ?? []).some((w) => anchor(ctx, w.node, w.at, read.node) <= anchor(ctx, read.node, readAt, w.node));
    if (earlier) continue;
    if (!read.compound && checkedLater(ctx, read.node)) continue;
    reportGlobal(ctx, read.node, read.compound, writes.get(read.key)?.[0]?.value);
  }
}

/** `const prev = GLOBAL_DATA.k;` is harmless when every use of `prev` checks it (`prev !== undefined && …`). */
function checkedLater(ctx: LintContext, read: ts.Expression): boolean {
  const decl = parentSkippingParens(read);
  if (!ts.isVariableDeclaration(decl) || !ts.isIdentifier(decl.name) || !decl.initializer || skipParens(decl.initializer) !== read) return false;
  const name = decl.name;
  const sym = ctx.checker.getSymbolAtLocation(name);
  const scope = ts.findAncestor(decl, (n) => ts.isBlock(n) || ts.isSourceFile(n) || isFunctionLike(n)) ?? ctx.sf;
  let safe = true;
  const visit = (n: ts.Node) => {
    if (!safe) return;
    if (ts.isIdentifier(n) && n !== name && n.text === name.text && ctx.checker.getSymbolAtLocation(n) === sym) {
      const up = parentSkippingParens(n);
      const assigned = ts.isBinaryExpression(up) && up.left === n && up.operatorToken.kind === ts.SyntaxKind.EqualsToken;
      if (!assigned && !selfGuarding(n) && !ctx.isGuarded(n, [`v:${name.text}`])) safe = false;
    }
    ts.forEachChild(n, visit);
  };
  visit(scope);
  return safe;
}

/** Reads that test for the key themselves: `if (G.k)`, `G.k ?? 0`, `G.k === undefined`, `G.k?.add(…)`. */
function selfGuarding(read: ts.Expression): boolean {
  const p = parentSkippingParens(read);
  if ((ts.isIfStatement(p) || ts.isWhileStatement(p)) && skipParens(p.expression) === read) return true;
  if (ts.isConditionalExpression(p) && skipParens(p.condition) === read) return true;
  if (ts.isPrefixUnaryExpression(p) && p.operator === ts.SyntaxKind.ExclamationToken) return true;
  if (ts.isTypeOfExpression(p)) return true;
  if (
    (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p) || ts.isCallExpression(p)) &&
    p.questionDotToken &&
    skipParens(p.expression) === read
  )
    return true;
  if (ts.isBinaryExpression(p)) {
    const op = p.operatorToken.kind;
    if (
      op === ts.SyntaxKind.QuestionQuestionToken ||
      ((op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.AmpersandAmpersandToken) && skipParens(p.left) === read)
    )
      return true;
    const other = skipParens(p.left) === read ? skipParens(p.right) : skipParens(p.left);
    const equality = [
      ts.SyntaxKind.EqualsEqualsEqualsToken,
      ts.SyntaxKind.EqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsToken,
    ].includes(op);
    if (equality && (other.kind === ts.SyntaxKind.NullKeyword || (ts.isIdentifier(other) && other.text === 'undefined'))) return true;
  }
  return false;
}

function reportGlobal(ctx: LintContext, read: ts.Expression, compound: boolean, firstWrite: ts.Expression | undefined): void {
  const access = ctx.snap.userTextOf(read);
  const p = parentSkippingParens(read);
  const member = (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && skipParens(p.expression) === read ? p : undefined;
  const method = member && ts.isPropertyAccessExpression(member) ? member.name.text : undefined;
  const init = initialValue(ctx, read, method, firstWrite);
  const message = compound
    ? `${access} is updated before anything stores it: on the first step of an episode it is undefined, so this stores NaN. Initialise it first.`
    : member
      ? `${access}${method ? `.${method}` : '[…]'} throws a TypeError on the first step of an episode: nothing has stored ${access} yet.`
      : `${access} is read before anything stores it: on the first step of an episode it is undefined (comparisons with it are silently false, arithmetic gives NaN).`;
  const statement = ts.findAncestor(read, (n) => ts.isStatement(n) && (ts.isBlock(n.parent) || ts.isSourceFile(n.parent) || ts.isCaseClause(n.parent)));
  const fixes: Fix[] = [];
  if (statement) {
    const start = ctx.snap.position(ctx.snap.toUser(statement.getStart(ctx.sf)));
    const indent = /^\s*/.exec(ctx.snap.lineText(start.line))![0];
    fixes.push({
      title: `Initialise ${access} before use (${access} ??= ${init})`,
      edits: [{ range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: `${indent}${access} ??= ${init};\n` }],
      preferred: true,
    });
  }
  if (!compound && !member) fixes.push({ title: `Use a default: (${access} ?? ${init})`, edits: [ctx.replace(read, `(${access} ?? ${init})`)] });
  ctx.report(meta, read, message, fixes);
}

function initialValue(ctx: LintContext, read: ts.Expression, method: string | undefined, firstWrite: ts.Expression | undefined): string {
  if (firstWrite) {
    const w = skipParens(firstWrite);
    const simple =
      ts.isNumericLiteral(w) ||
      ts.isStringLiteral(w) ||
      w.kind === ts.SyntaxKind.TrueKeyword ||
      w.kind === ts.SyntaxKind.FalseKeyword ||
      (ts.isArrayLiteralExpression(w) && w.elements.length === 0) ||
      (ts.isObjectLiteralExpression(w) && w.properties.length === 0) ||
      (ts.isNewExpression(w) && (w.arguments?.length ?? 0) === 0) ||
      (ts.isIdentifier(w) && !!schemaParameter(w.text)) ||
      (ts.isPrefixUnaryExpression(w) && ts.isNumericLiteral(w.operand));
    if (simple) return ctx.snap.userTextOf(w);
  }
  if (method && ['add', 'has', 'delete'].includes(method)) return 'new Set()';
  if (method && ['get', 'set'].includes(method)) return 'new Map()';
  if (
    method &&
    ['push', 'pop', 'length', 'includes', 'indexOf', 'slice', 'at', 'map', 'filter', 'some', 'every', 'forEach', 'shift', 'unshift'].includes(method)
  )
    return '[]';
  const p = parentSkippingParens(read);
  if (ts.isElementAccessExpression(p) && skipParens(p.expression) === read) return '{}';
  return '0';
}

/**
 * Python: `GLOBAL_DATA["k"]` read (or `+=`) before any `GLOBAL_DATA["k"] = …` earlier in the file, with no
 * `"k" in GLOBAL_DATA` test or `.get`/`.setdefault` of it before: a KeyError on the first step of every episode.
 */
function pythonGlobalData(ctx: PythonLintContext): void {
  const seen = new Set<string>();
  for (const u of keyUses(ctx)) {
    if (u.dict.type !== 'identifier' || u.dict.text !== 'GLOBAL_DATA') continue;
    if (u.how !== 'subscript' || isAssignmentTarget(u.node)) {
      seen.add(u.key);
      continue;
    }
    if (seen.has(u.key)) continue;
    seen.add(u.key); // one report per key: the first read
    const compound = u.node.parent?.type === 'augmented_assignment' && u.node.parent.childForFieldName('left')?.id === u.node.id;
    const fixes: Fix[] = compound
      ? []
      : [
          {
            title: `Read it with GLOBAL_DATA.get(${u.keyNode.text}, 0)`,
            edits: [ctx.replace(u.node, `GLOBAL_DATA.get(${u.keyNode.text}, 0)`)],
            preferred: true,
          },
        ];
    ctx.report(
      meta,
      u.node,
      `GLOBAL_DATA[${u.keyNode.text}] is ${compound ? 'updated' : 'read'} before anything stores it: GLOBAL_DATA starts empty every episode, so the first step raises KeyError. Store it first (GLOBAL_DATA.setdefault(${u.keyNode.text}, 0)) or read it with a default.`,
      fixes,
    );
  }
}
