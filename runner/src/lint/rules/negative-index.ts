// `arr[-1]` in JavaScript is `undefined`, not the last element (a Python habit); `.at(-1)` is.
import ts from 'typescript';
import { numericValue } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'negative-index',
  severity: 'error',
  description: '`arr[-1]` (undefined in JavaScript)',
  docs: 'Negative indices do not count from the end in JavaScript: `positions[-1]` is undefined, and arithmetic with it gives NaN. Use `.at(-1)`.',
  fixable: true,
} as const satisfies RuleMeta;

export const negativeIndex = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isElementAccessExpression(node)) return;
    const index = numericValue(node.argumentExpression);
    if (index === undefined || index >= 0 || !Number.isInteger(index)) return;
    const bracketStart = node.questionDotToken ? node.questionDotToken.getStart(ctx.sf) : node.expression.getEnd();
    const fix: Fix = {
      title: `Use .at(${index})`,
      edits: [{ range: ctx.snap.range(bracketStart, node.getEnd()), newText: `${node.questionDotToken ? '?.' : '.'}at(${index})` }],
      preferred: true,
    };
    ctx.report(
      meta,
      node.argumentExpression,
      `${ctx.snap.userTextOf(node)} is undefined in JavaScript (negative indices do not count from the end); use .at(${index}).`,
      [fix],
    );
  },
});
