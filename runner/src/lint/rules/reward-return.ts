// What the exported reward functions return, read from TypeScript's checker: a reward that returns nothing
// (undefined), a boolean, a string, an object or an array, or a Promise (an `async` reward) fails in the
// sandbox on the first step or, worse, coerces to a number nobody meant.
import ts from 'typescript';
import { alwaysExits, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';
import type { PythonLintContext } from '../python';
import type { PythonNode } from '../../reward/python-syntax';

const meta = {
  id: 'reward-return',
  severity: 'error',
  description: 'reward_function, dense or sparse that returns something other than a number (nothing, a boolean, a string, an object, a Promise)',
  docs: 'The runtime needs a finite number from reward_function (or from dense and sparse) on every step. A function that never returns a value gives undefined; `return health > 5` gives a boolean; an `async` function gives a Promise. The sandbox stops training at the first such step. Return a number on every path (`return cond ? 1 : 0`), and do not make the reward async.',
  fixable: true,
} as const satisfies RuleMeta;

const ENTRY_NAMES = new Set(['reward_function', 'dense', 'sparse']);

export const rewardReturn = defineRule({
  meta,
  python: pythonReturns,
  end(ctx) {
    for (const stmt of ctx.sf.statements) {
      const fn = exportedFunction(stmt);
      if (fn) check(ctx, fn.name, fn.node);
    }
  },
});

function exportedFunction(stmt: ts.Statement): { name: string; node: ts.FunctionLikeDeclaration } | undefined {
  const exported = ts.canHaveModifiers(stmt) && (ts.getModifiers(stmt) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  if (!exported) return undefined;
  if (ts.isFunctionDeclaration(stmt) && stmt.name && ENTRY_NAMES.has(stmt.name.text)) return { name: stmt.name.text, node: stmt };
  if (ts.isVariableStatement(stmt)) {
    for (const d of stmt.declarationList.declarations) {
      if (
        ts.isIdentifier(d.name) &&
        ENTRY_NAMES.has(d.name.text) &&
        d.initializer &&
        (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))
      )
        return { name: d.name.text, node: d.initializer };
    }
  }
  return undefined;
}

function check(ctx: LintContext, name: string, fn: ts.FunctionLikeDeclaration): void {
  const at: ts.Node = fn.name ?? fn;
  const asyncModifier = (ts.getModifiers(fn) ?? []).find((m) => m.kind === ts.SyntaxKind.AsyncKeyword);
  if (asyncModifier) {
    const awaits = containsAwait(fn.body);
    ctx.report(
      meta,
      asyncModifier,
      `${name} is async, so it returns a Promise, not a number: the sandbox rejects it on the first step (and has no timers or I/O to await).`,
      awaits
        ? []
        : [
            {
              title: 'Remove async',
              edits: [{ range: ctx.snap.range(asyncModifier.getStart(ctx.sf), asyncModifier.getEnd() + 1), newText: '' }],
              preferred: true,
            },
          ],
    );
    return;
  }
  if (!fn.body) return;
  const signature = ctx.checker.getSignatureFromDeclaration(fn);
  if (!signature) return;
  const returned = ctx.checker.getReturnTypeOfSignature(signature);
  if (returned.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  const parts = returned.isUnion() ? returned.types : [returned];
  // Partly-undefined returns are the undefined-return rule's; here every path gives a non-number.
  if (parts.some((t) => t.flags & (ts.TypeFlags.NumberLike | ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter))) return;
  if (parts.every((t) => t.flags & (ts.TypeFlags.Void | ts.TypeFlags.Undefined | ts.TypeFlags.Never))) {
    // Always throws: the throw is the message (TypeScript infers void, not never, for a declaration).
    if (parts.some((t) => t.flags & ts.TypeFlags.Never) || (ts.isBlock(fn.body) && alwaysExits(fn.body))) return;
    ctx.report(
      meta,
      at,
      `${name} never returns a value, so every step's reward is undefined${hasNestedReturn(fn) ? ' (the returns in it belong to nested helper functions)' : ''}: end it with \`return <number>;\`.`,
    );
    return;
  }
  const what = describe(ctx, parts);
  ctx.report(
    meta,
    at,
    `${name} returns ${what}, not a number: the sandbox stops training on the first step. Return a number${what.startsWith('a boolean') ? ' (`cond ? 1 : 0`)' : ''}.`,
  );
}

function describe(ctx: LintContext, parts: ts.Type[]): string {
  const kinds = new Set<string>();
  for (const t of parts) {
    if (t.flags & ts.TypeFlags.BooleanLike) kinds.add('a boolean');
    else if (t.flags & ts.TypeFlags.StringLike) kinds.add('a string');
    else if (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) kinds.add('undefined');
    else if (t.flags & ts.TypeFlags.Null) kinds.add('null');
    else if (ctx.checker.isArrayType(t) || ctx.checker.isTupleType(t)) kinds.add('an array');
    else if (t.flags & ts.TypeFlags.Object) kinds.add('an object');
    else kinds.add(ctx.checker.typeToString(t));
  }
  return [...kinds].join(' or ');
}

function containsAwait(node: ts.Node | undefined): boolean {
  if (!node) return false;
  if (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier !== undefined)) return true;
  return ts.forEachChild(node, (c) => (ts.isFunctionLike(c) ? undefined : containsAwait(c) || undefined)) ?? false;
}

function hasNestedReturn(fn: ts.FunctionLikeDeclaration): boolean {
  let found = false;
  const visit = (n: ts.Node, nested: boolean) => {
    if (ts.isReturnStatement(n) && nested) found = true;
    ts.forEachChild(n, (c) => visit(c, nested || ts.isFunctionLike(c)));
  };
  if (fn.body) ts.forEachChild(fn.body, (c) => visit(c, ts.isFunctionLike(c)));
  return found;
}

/** Whether a Python block cannot fall off its end (every path returns or raises). */
function pythonAlwaysExits(block: PythonNode | null | undefined): boolean {
  const last = block?.namedChildren.filter((s) => s && s.type !== 'comment').at(-1);
  if (!last) return false;
  if (last.type === 'return_statement' || last.type === 'raise_statement') return true;
  if (last.type === 'if_statement') {
    const branches = [
      last.childForFieldName('consequence'),
      ...last.childrenForFieldName('alternative').map((a) => a?.childForFieldName('consequence') ?? a?.childForFieldName('body')),
    ];
    const hasElse = last.childrenForFieldName('alternative').some((a) => a?.type === 'else_clause');
    return hasElse && branches.every((b) => pythonAlwaysExits(b));
  }
  if (last.type === 'while_statement') return last.childForFieldName('condition')?.text === 'True' && !last.descendantsOfType('break_statement').length;
  if (last.type === 'try_statement') {
    const handlers = last.namedChildren.filter((c) => c?.type === 'except_clause');
    return (
      pythonAlwaysExits(last.childForFieldName('body')) && handlers.every((h) => pythonAlwaysExits(h!.namedChildren.filter((c) => c?.type === 'block').at(-1)))
    );
  }
  return false;
}

/** Python: reward_function, dense or sparse (top level or nested) that can return None or a bool. */
function pythonReturns(ctx: PythonLintContext): void {
  for (const fn of ctx.ofType('function_definition')) {
    const name = fn.childForFieldName('name');
    if (!name || !ENTRY_NAMES.has(name.text)) continue;
    const body = fn.childForFieldName('body');
    // Returns of this function, not of functions nested in it.
    const returns =
      body?.descendantsOfType('return_statement').filter((r) => {
        for (let p = r?.parent; p; p = p.parent) if (p.type === 'function_definition' || p.type === 'lambda') return p.id === fn.id;
        return false;
      }) ?? [];
    for (const r of returns) {
      const value = r!.namedChildren[0];
      if (!value) ctx.report(meta, r!, `This bare return makes ${name.text} return None; the runtime needs a number on every step.`);
      else if (
        value.type === 'comparison_operator' ||
        value.type === 'boolean_operator' ||
        value.type === 'not_operator' ||
        value.type === 'true' ||
        value.type === 'false'
      )
        ctx.report(meta, value, `${name.text} returns a bool here; the runtime needs a number (write float(...) or 1 if ... else 0).`, [
          { title: 'Return it as a number', edits: [ctx.replace(value, `float(${value.text})`)], preferred: true },
        ]);
    }
    if (!pythonAlwaysExits(body))
      ctx.report(meta, name, `${name.text} can reach its end without a return: Python returns None there, which the runtime refuses (the run stops).`);
  }
}
