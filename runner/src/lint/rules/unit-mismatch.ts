// Nearest-block yaw and pitch are radians relative to the agent's facing; past_agent_positions yaw and pitch
// are degrees relative to the initial facing. Comparing one with a constant in the other unit is a silent bug:
// `|yaw| < 30` on radians is always true, `pitch > Math.PI / 4` on degrees is true at one degree.
import ts from 'typescript';
import { COMPARISON_OPERATORS, skipParens, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'unit-mismatch',
  severity: 'error',
  description: 'a past_agent_positions angle (degrees) compared with a constant in radians (Math.PI …)',
  docs: "current_nearest_blocks/previous_nearest_blocks give [distance m, yaw rad, pitch rad] relative to the agent's facing; past_agent_positions gives [x, y, z, yaw°, pitch°] relative to the initial facing. Compare radians with radians (`Math.PI / 6`, `0.52`) and degrees with degrees (`30`).",
  fixable: true,
} as const satisfies RuleMeta;

export const unitMismatch = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isBinaryExpression(node) || !COMPARISON_OPERATORS.has(node.operatorToken.kind)) return;
    for (const [angle, constant] of [
      [node.left, node.right],
      [node.right, node.left],
    ] as const) {
      // Only a constant in radians (Math.PI …) can be in the wrong unit here; ask for the angle's field after.
      if (!usesPi(skipParens(constant), ctx)) continue;
      const field = ctx.fieldOf(angle);
      if (!field || !/yaw|pitch/.test(field.label)) continue;
      const c = skipParens(constant);
      // Radians compared with degrees-looking constants are the constant-condition rule's (always true/false).
      if (field.range.unit === '°') {
        ctx.report(
          meta,
          constant,
          `${field.label} from past_agent_positions is in degrees (relative to the initial facing) but ${c.getText(ctx.sf)} is in radians; convert it: (${c.getText(ctx.sf)}) * 180 / Math.PI.`,
          [{ title: 'Convert to degrees', edits: [ctx.replace(constant, `(${c.getText(ctx.sf)}) * 180 / Math.PI`)], preferred: true }],
        );
        return;
      }
    }
  },
});

function usesPi(e: ts.Node, ctx: LintContext): boolean {
  return /\bMath\.PI\b/.test(e.getText(ctx.sf)) && !/180/.test(e.getText(ctx.sf));
}
