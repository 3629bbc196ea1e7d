// A helper called with schema arguments in the wrong order (`helper(previous_nearest_blocks,
// current_nearest_blocks)` for `helper(current_nearest_blocks, previous_nearest_blocks)`): it type-checks,
// since both have the same type, and silently computes the opposite.
import ts from 'typescript';
import { schemaParameter } from '../analysis';
import { skipParens, type LintContext } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'swapped-arguments',
  severity: 'error',
  description: 'a helper call whose schema arguments are in the wrong order',
  docs: "When a helper's parameters are named after schema parameters and a call passes them in another order, the types still match (both are NearestBlocks, say), so only the names show the mistake. The fix reorders the arguments to the parameter order.",
  fixable: true,
} as const satisfies RuleMeta;

export const swappedArguments = defineRule({
  meta,
  node(node, ctx) {
    if (ts.isCallExpression(node)) checkCall(ctx, node);
  },
});

function checkCall(ctx: LintContext, node: ts.CallExpression): void {
  const callee = skipParens(node.expression);
  if (!ts.isIdentifier(callee)) return;
  const decl = ctx.declarationOf(callee);
  let fn: ts.SignatureDeclaration | undefined;
  if (decl && ts.isFunctionDeclaration(decl)) fn = decl;
  else if (decl && ts.isVariableDeclaration(decl) && decl.initializer && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer)))
    fn = decl.initializer;
  if (!fn) return;
  const paramNames = fn.parameters.map((p) => (ts.isIdentifier(p.name) ? p.name.text : ''));
  const args = node.arguments;
  const argNames = args.map((a) => (ts.isIdentifier(skipParens(a)) ? (skipParens(a) as ts.Identifier).text : ''));
  const swapped = args
    .map((_a, i) => i)
    .filter((i) => {
      const arg = argNames[i]!;
      const param = paramNames[i];
      return !!param && schemaParameter(arg) && schemaParameter(param) && arg !== param && paramNames.includes(arg);
    });
  if (swapped.length === 0) return;
  // Reorder so each schema argument goes to the parameter of its name, if that is a permutation.
  const texts = args.map((a) => ctx.snap.userTextOf(a));
  const reordered = paramNames.slice(0, args.length).map((p, j) => {
    const from = argNames.indexOf(p);
    return schemaParameter(p) && from >= 0 ? texts[from]! : texts[j]!;
  });
  const isPermutation = [...reordered].sort().join('\u0000') === [...texts].sort().join('\u0000');
  const first = args[swapped[0]!]!;
  const last = args[swapped[swapped.length - 1]!]!;
  const fnName = callee.text;
  const pairs = swapped.map((i) => `${argNames[i]} is passed as ${paramNames[i]}`).join('; ');
  const fixes: Fix[] = isPermutation
    ? [
        {
          title: `Pass the arguments in ${fnName}'s parameter order`,
          edits: [{ range: ctx.snap.range(args[0]!.getStart(ctx.sf), args[args.length - 1]!.getEnd()), newText: reordered.join(', ') }],
          preferred: true,
        },
      ]
    : [];
  ctx.report(meta, [first.getStart(ctx.sf), last.getEnd()], `Arguments of ${fnName}() are swapped: ${pairs}.`, fixes);
}
