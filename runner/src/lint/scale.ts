// The check behind `scale-swapped` and `scale-unscaled`: the method's scale rule says a reward combines its
// terms as Math.sign(sparse) * 1 + Math.sign(dense) * 0.1 (schema SCALE_RULE). This finds, in
// reward_function, each sum of exactly two terms whose names say which is dense and which sparse, and judges
// its weights and signs; one judgement picks which of the two rules applies.
import ts from 'typescript';
import { SCALE_RULE } from '../schema';
import { isFunctionLike, numericValue, skipParens, type LintContext } from './context';
import type { Fix } from './rule';

export interface ScaleCombination {
  node: ts.BinaryExpression;
  denseWeight: number;
  sparseWeight: number;
  /** `ok`: as the rule says; `swapped`: dense and sparse weights exchanged; `weights`: signed but other
   * weights; `unsigned`: a term without Math.sign. */
  verdict: 'ok' | 'swapped' | 'weights' | 'unsigned';
  /** Rewrites the sum as the rule says. */
  fix: Fix;
}

/** Every dense + sparse combination in reward_function (computed once per file). */
export function scaleCombinations(ctx: LintContext): ScaleCombination[] {
  return ctx.memo('scale-combinations', () => {
    const out: ScaleCombination[] = [];
    scaleRule(ctx, out);
    return out;
  });
}

/** `SCALE_RULE` in words, for both rules' messages. */
export const SCALE_RULE_TEXT = `only the signs count: reward = ${SCALE_RULE.expression}`;

function rewardFunction(ctx: LintContext): ts.FunctionLikeDeclaration | undefined {
  let found: ts.FunctionLikeDeclaration | undefined;
  const visit = (n: ts.Node) => {
    if (found) return;
    if (ts.isFunctionDeclaration(n) && n.name?.text === 'reward_function') found = n;
    else if (
      ts.isVariableDeclaration(n) &&
      ts.isIdentifier(n.name) &&
      n.name.text === 'reward_function' &&
      n.initializer &&
      (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))
    )
      found = n.initializer;
    else ts.forEachChild(n, visit);
  };
  visit(ctx.sf);
  return found;
}

function scaleRule(ctx: LintContext, out: ScaleCombination[]): void {
  const fn = rewardFunction(ctx);
  if (!fn?.body) return;
  const terms = (e: ts.Expression, sign: number, out: { node: ts.Expression; sign: number }[]) => {
    e = skipParens(e);
    if (ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.PlusToken || e.operatorToken.kind === ts.SyntaxKind.MinusToken)) {
      terms(e.left, sign, out);
      terms(e.right, e.operatorToken.kind === ts.SyntaxKind.MinusToken ? -sign : sign, out);
    } else out.push({ node: e, sign });
    return out;
  };
  const visit = (n: ts.Node) => {
    if (n !== fn && isFunctionLike(n)) return;
    if (ts.isBinaryExpression(n) && (n.operatorToken.kind === ts.SyntaxKind.PlusToken || n.operatorToken.kind === ts.SyntaxKind.MinusToken)) {
      combination(ctx, n, terms(n, 1, []), out);
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(fn.body);
}

function combination(ctx: LintContext, node: ts.BinaryExpression, parts: { node: ts.Expression; sign: number }[], out: ScaleCombination[]): void {
  if (parts.length !== 2) return;
  // A weight is a number literal or a const bound to one (`const DENSE_WEIGHT = 0.1`).
  const weightOf = (e: ts.Expression): number | undefined => {
    const n = numericValue(e);
    if (n !== undefined) return n;
    e = skipParens(e);
    const d = ts.isIdentifier(e) ? ctx.declarationOf(e) : undefined;
    return d && ts.isVariableDeclaration(d) && d.initializer && ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const ? numericValue(d.initializer) : undefined;
  };
  const parsed = parts.map(({ node: t, sign }) => {
    let weight = sign;
    let rest = skipParens(t);
    if (ts.isBinaryExpression(rest) && rest.operatorToken.kind === ts.SyntaxKind.AsteriskToken) {
      const l = weightOf(rest.left);
      const r = weightOf(rest.right);
      if (r !== undefined) (weight *= r), (rest = skipParens(rest.left));
      else if (l !== undefined) (weight *= l), (rest = skipParens(rest.right));
    } else if (ts.isBinaryExpression(rest) && rest.operatorToken.kind === ts.SyntaxKind.SlashToken && numericValue(rest.right)) {
      weight /= numericValue(rest.right)!;
      rest = skipParens(rest.left);
    }
    let signed = false;
    if (ts.isCallExpression(rest) && rest.arguments.length === 1 && /^((Math|np|numpy)\.)?sign$/.test(rest.expression.getText(ctx.sf))) {
      signed = true;
      rest = skipParens(rest.arguments[0]!);
    }
    // Names that say which is which, following `const d = dense(...)` one step.
    const names: string[] = [];
    const collect = (n: ts.Node, follow: boolean) => {
      if (ts.isIdentifier(n)) {
        names.push(n.text);
        const decl = follow ? ctx.declarationOf(n) : undefined;
        if (decl && ts.isVariableDeclaration(decl) && decl.initializer) collect(decl.initializer, false);
      }
      ts.forEachChild(n, (c) => collect(c, follow));
    };
    collect(rest, true);
    const dense = names.some((x) => /dense/i.test(x));
    const sparse = names.some((x) => /sparse/i.test(x));
    // Only a plain value (`dense`, `dense_reward`, `dense(...)`) can be judged unscaled; other shapes are unknown.
    const plain = signed || ts.isIdentifier(rest) || ts.isCallExpression(rest) || ts.isPropertyAccessExpression(rest);
    return { weight, signed, inner: rest, role: !plain || dense === sparse ? undefined : dense ? 'dense' : 'sparse' };
  });
  const dense = parsed.find((p) => p.role === 'dense');
  const sparse = parsed.find((p) => p.role === 'sparse');
  if (!dense || !sparse) return;
  const same = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const fixed = `Math.sign(${ctx.snap.userTextOf(sparse.inner)}) * ${SCALE_RULE.sparseWeight} + Math.sign(${ctx.snap.userTextOf(dense.inner)}) * ${SCALE_RULE.denseWeight}`;
  const fix: Fix = { title: `Combine as ${SCALE_RULE.expression}`, edits: [ctx.replace(node, fixed)], preferred: true };
  const verdict: ScaleCombination['verdict'] = !(dense.signed && sparse.signed)
    ? 'unsigned'
    : same(dense.weight, SCALE_RULE.denseWeight) && same(sparse.weight, SCALE_RULE.sparseWeight)
      ? 'ok'
      : same(dense.weight, SCALE_RULE.sparseWeight) && same(sparse.weight, SCALE_RULE.denseWeight)
        ? 'swapped'
        : 'weights';
  out.push({ node, denseWeight: dense.weight, sparseWeight: sparse.weight, verdict, fix });
}
