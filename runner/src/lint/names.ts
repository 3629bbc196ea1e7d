// The check behind `unknown-name` and `wrong-kind-name`: every Minecraft name used as a key of a schema dict
// (`cnb['lava']`, `cnb.lava`, `'lava' in cnb`, `const { lava } = cnb`, names a loop or callback variable takes
// from a literal list), judged against the names of the kind that dict holds. One decision picks which of
// the two rules applies, so both rules read this one analysis.
import ts from 'typescript';
import { suggestNames, type NameKind } from '../schema';
import { OBJECT_METHODS, PYTHON_DICT_METHODS, skipParens, stringKey, type DictKeys, type LintContext } from './context';
import type { Fix } from './rule';
import { keyUses, type PythonLintContext } from './python';
import type { PythonNode } from '../reward/python-syntax';

export interface BadName {
  keyNode: ts.Node;
  name: string;
  keys: DictKeys;
  /** The dict as the user wrote it, for the message. */
  dictText: string;
  /** The kinds the name does have (empty: not a Minecraft name at all). */
  kinds: NameKind[];
  /** ` Did you mean 'a', 'b'?` or empty. */
  didYouMean: string;
  /** One rename per suggestion; a name written in several places is renamed in all of them. */
  fixes: Fix[];
}

/** Every bad name in the file, in document order (computed once per file). */
export function badNames(ctx: LintContext): BadName[] {
  return ctx.memo('bad-names', () => {
    const out: BadName[] = [];
    const check = (keyNode: ts.Node, name: string, keys: DictKeys, dictText: string) => {
      const bad = checkName(ctx, keyNode, name, keys, dictText);
      if (bad) out.push(bad);
    };
    const keyUse = (dict: ts.Expression, keyExpr: ts.Expression, keys: DictKeys) => {
      const key = stringKey(keyExpr);
      const dictText = ctx.snap.userTextOf(dict);
      if (key !== undefined) check(keyExpr, key, keys, dictText);
      else if (ts.isIdentifier(skipParens(keyExpr)))
        for (const lit of literalValuesOf(ctx, skipParens(keyExpr) as ts.Identifier)) check(lit, stringKey(lit)!, keys, dictText);
    };
    const visit = (node: ts.Node) => {
      if (ts.isElementAccessExpression(node)) {
        const keys = ctx.dictKeys(node.expression);
        if (keys) keyUse(node.expression, node.argumentExpression, keys);
      } else if (ts.isPropertyAccessExpression(node)) {
        const method =
          ts.isCallExpression(node.parent) &&
          node.parent.expression === node &&
          (OBJECT_METHODS.has(node.name.text) || PYTHON_DICT_METHODS.has(node.name.text));
        const keys = method ? undefined : ctx.dictKeys(node.expression);
        if (keys) check(node.name, node.name.text, keys, ctx.snap.userTextOf(node.expression));
      } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword) {
        const keys = ctx.dictKeys(node.right);
        if (keys) keyUse(node.right, node.left, keys);
      } else if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
        const keys = ctx.dictKeys(node.initializer);
        if (keys) {
          for (const el of node.name.elements) {
            const prop = el.propertyName ?? el.name;
            if (ts.isIdentifier(prop) || ts.isStringLiteral(prop)) check(prop, prop.text, keys, ctx.snap.userTextOf(node.initializer));
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(ctx.sf);
    renameEverywhere(out);
    return out;
  });
}

function checkName(ctx: LintContext, keyNode: ts.Node, name: string, keys: DictKeys, dictText: string): BadName | undefined {
  const valid = ctx.schema.namesFor(keys);
  if (valid.has(name)) return undefined;
  const suggestions = suggestNames(name, valid);
  const didYouMean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
  const quote = ts.isIdentifier(keyNode) ? '' : ctx.snap.userTextOf(keyNode).charAt(0);
  const shorthand = ts.isBindingElement(keyNode.parent) && !keyNode.parent.propertyName && keyNode.parent.name === keyNode;
  const fixes: Fix[] = suggestions.map((s, i) => ({
    title: `Change '${name}' to '${s}'`,
    // `const { magma } = cnb` keeps its local name: `const { lava: magma } = cnb`.
    edits: [ctx.replace(keyNode, shorthand ? `${s}: ${name}` : ts.isIdentifier(keyNode) ? s : `${quote}${s}${quote}`)],
    preferred: i === 0,
  }));
  return { keyNode, name, keys, dictText, kinds: ctx.schema.kindsOf(name), didYouMean, fixes };
}

/** Literal names a loop variable or callback parameter takes: `for (const n of ['oak_log', …])`. */
function literalValuesOf(ctx: LintContext, id: ts.Identifier): ts.Expression[] {
  const decl = ctx.declarationOf(id);
  if (!decl) return [];
  let source: ts.Expression | undefined;
  // `const target = 'cow'; … current_nearest_blocks[target]`
  if (ts.isVariableDeclaration(decl) && decl.initializer && stringKey(decl.initializer) !== undefined && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const)
    return [decl.initializer];
  if (ts.isVariableDeclaration(decl) && ts.isVariableDeclarationList(decl.parent) && ts.isForOfStatement(decl.parent.parent))
    source = decl.parent.parent.expression;
  else if (ts.isParameter(decl) && (ts.isArrowFunction(decl.parent) || ts.isFunctionExpression(decl.parent)) && decl.parent.parameters[0] === decl) {
    const call = decl.parent.parent;
    if (ts.isCallExpression(call) && ts.isPropertyAccessExpression(call.expression) && call.arguments[0] === decl.parent) source = call.expression.expression;
  }
  if (!source) return [];
  source = skipParens(source);
  if (ts.isIdentifier(source)) {
    const d = ctx.declarationOf(source);
    if (d && ts.isVariableDeclaration(d) && d.initializer && ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const) source = skipParens(d.initializer);
  }
  return ts.isArrayLiteralExpression(source) ? source.elements.filter((e) => stringKey(e) !== undefined) : [];
}

/** A bad name in a Python file: the same judgement, at a string literal of the tree-sitter tree. */
export interface PythonBadName extends Omit<BadName, 'keyNode'> {
  keyNode: PythonNode;
}

/** Every bad name used as a key of an observation dict in a Python file (`d["magma"]`, `d.get(…)`, `… in d`). */
export function pythonBadNames(ctx: PythonLintContext): PythonBadName[] {
  return ctx.memo('bad-names', () => {
    const out: PythonBadName[] = [];
    for (const u of keyUses(ctx)) {
      const keys = ctx.dictKeys(u.dict);
      if (!keys) continue;
      const valid = ctx.schema.namesFor(keys);
      if (valid.has(u.key)) continue;
      const suggestions = suggestNames(u.key, valid);
      const didYouMean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
      const quote = u.keyNode.text.slice(-1);
      const fixes: Fix[] = suggestions.map((s, i) => ({
        title: `Change '${u.key}' to '${s}'`,
        edits: [ctx.replace(u.keyNode, `${quote}${s}${quote}`)],
        preferred: i === 0,
      }));
      out.push({ keyNode: u.keyNode, name: u.key, keys, dictText: u.dict.text, kinds: ctx.schema.kindsOf(u.key), didYouMean, fixes });
    }
    renameEverywhere(out);
    return out;
  });
}

/** A wrong name is usually written more than once: each rename fix renames every occurrence. */
function renameEverywhere(bad: Pick<BadName, 'keys' | 'name' | 'fixes'>[]): void {
  const groups = new Map<string, Fix[][]>();
  for (const b of bad) {
    const key = `${b.keys}:${b.name}`;
    groups.set(key, [...(groups.get(key) ?? []), b.fixes]);
  }
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const combined = members[0]!.map((_f, i) => {
      const edits = members.flatMap((m) => m[i]?.edits ?? []);
      return edits.filter((e, k) => edits.findIndex((o) => JSON.stringify(o.range) === JSON.stringify(e.range)) === k);
    });
    for (const fixes of members) fixes.forEach((f, i) => ((f.edits = combined[i]!), (f.title += ` (${members.length} places)`)));
  }
}
