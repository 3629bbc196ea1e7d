// An index past the end of a nearest-blocks entry `[distance, yaw, pitch]` or a position
// `[x, y, z, yaw, pitch]`: undefined, so the term becomes NaN. (TypeScript's own tuple error, ts2493, is
// reported under this id too.)
import ts from 'typescript';
import { NEAREST_ENTRY, POSITION_ENTRY } from '../../schema';
import { numericValue } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'index-out-of-range',
  severity: 'error',
  description: 'an index past the end of a nearest-blocks or position entry',
  docs: 'A nearest-blocks entry has exactly 3 elements [distance, yaw, pitch] and a position 5 [x, y, z, yaw, pitch]; any other index reads undefined.',
  fixable: false,
} as const satisfies RuleMeta;

export const indexOutOfRange = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isElementAccessExpression(node)) return;
    const index = numericValue(node.argumentExpression);
    if (index === undefined || (index < 0 && Number.isInteger(index))) return;
    for (const [alias, layout, what] of [
      ['NearestEntry', NEAREST_ENTRY, 'nearest-blocks entries'],
      ['AgentPosition', POSITION_ENTRY, 'past_agent_positions entries'],
    ] as const) {
      if (index >= layout.length && ctx.isType(node.expression, alias)) {
        ctx.report(
          meta,
          node.argumentExpression,
          `${what} have exactly ${layout.length} elements [${layout.map((f) => f.name).join(', ')}]: index ${index} is undefined.`,
        );
      }
    }
  },
});
