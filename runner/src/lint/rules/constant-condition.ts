// A comparison with a constant outside the field's range (`pitch > 90` on radians, `health > 20`): it has the
// same result for every value the field can take, so the branch is dead or always taken. Degrees compared
// with a radian field get a conversion fix.
import ts from 'typescript';
import { fmt, numericValue, rangeText } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'constant-condition',
  severity: 'warning',
  description: "a comparison with a constant outside the field's range",
  docs: 'Every schema value has a range and unit (distance 0..64 m, yaw and pitch in radians, health 0..20). A comparison whose constant lies outside that range is always true or always false, usually because of a unit mix-up (degrees for radians).',
  fixable: true,
} as const satisfies RuleMeta;

const COMPARISONS: Partial<Record<ts.SyntaxKind, (a: number, b: number) => boolean>> = {
  [ts.SyntaxKind.LessThanToken]: (a, b) => a < b,
  [ts.SyntaxKind.LessThanEqualsToken]: (a, b) => a <= b,
  [ts.SyntaxKind.GreaterThanToken]: (a, b) => a > b,
  [ts.SyntaxKind.GreaterThanEqualsToken]: (a, b) => a >= b,
  [ts.SyntaxKind.EqualsEqualsEqualsToken]: (a, b) => a === b,
  [ts.SyntaxKind.EqualsEqualsToken]: (a, b) => a === b,
  [ts.SyntaxKind.ExclamationEqualsEqualsToken]: (a, b) => a !== b,
  [ts.SyntaxKind.ExclamationEqualsToken]: (a, b) => a !== b,
};

export const constantCondition = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isBinaryExpression(node)) return;
    const compare = COMPARISONS[node.operatorToken.kind];
    if (!compare) return;
    for (const [fieldSide, constSide, fieldLeft] of [
      [node.left, node.right, true],
      [node.right, node.left, false],
    ] as const) {
      const value = numericValue(constSide);
      if (value === undefined) continue;
      const field = ctx.fieldOf(fieldSide);
      if (!field || (value >= field.range.min && value <= field.range.max)) continue;
      // Outside the range, the comparison has the same result at both ends of it, i.e. always.
      const at = (x: number) => (fieldLeft ? compare(x, value) : compare(value, x));
      const result = at(field.range.min);
      if (result !== at(field.range.max)) continue;
      const fixes: Fix[] = [];
      let hint = '';
      if (field.range.unit === 'rad' && Math.abs(value) <= 360) {
        hint = ` ${value} looks like degrees; in radians that is ${fmt((value * Math.PI) / 180)}.`;
        fixes.push({ title: `Convert ${value}° to radians`, edits: [ctx.replace(constSide, `(${value} * Math.PI / 180)`)], preferred: true });
      }
      ctx.report(meta, node, `${field.label} is ${rangeText(field.range)}, so \`${ctx.snap.userTextOf(node)}\` is always ${result}.${hint}`, fixes);
      return;
    }
  },
});
