// Dense weighted 1 and sparse 0.1: the scale rule's weights exchanged, so the shaping term drowns the task's
// own signal.
import { fmt } from '../context';
import { SCALE_RULE_TEXT, scaleCombinations } from '../scale';
import { defineRule, type RuleMeta } from '../rule';
import { pythonNumber, type PythonLintContext } from '../python';
import type { PythonNode } from '../../reward/python-syntax';

const meta = {
  id: 'scale-swapped',
  severity: 'error',
  description: 'dense weighted 1 and sparse 0.1',
  docs: "The method combines a reward as Math.sign(sparse) * 1 + Math.sign(dense) * 0.1, so the sparse task signal always outweighs the dense shaping. With the weights exchanged the agent optimises the shaping instead of the task. The fix writes the rule's combination.",
  fixable: true,
} as const satisfies RuleMeta;

export const scaleSwapped = defineRule({
  meta,
  python: pythonSwapped,
  end(ctx) {
    for (const c of scaleCombinations(ctx)) {
      if (c.verdict === 'swapped')
        ctx.report(
          meta,
          c.node,
          `The weights are swapped: dense is weighted ${fmt(c.denseWeight)} and sparse ${fmt(c.sparseWeight)}, but ${SCALE_RULE_TEXT}.`,
          [c.fix],
        );
    }
  },
});

/** `term * weight` or `weight * term`: the weight and the term, else undefined. */
function weighted(n: PythonNode | null): { weight: number; weightNode: PythonNode; term: PythonNode } | undefined {
  if (n?.type === 'parenthesized_expression') return weighted(n.namedChildren[0]);
  if (n?.type !== 'binary_operator' || n.childForFieldName('operator')?.type !== '*') return undefined;
  const [l, r] = [n.childForFieldName('left'), n.childForFieldName('right')];
  const lw = pythonNumber(l);
  const rw = pythonNumber(r);
  if (rw !== undefined && l) return { weight: rw, weightNode: r!, term: l };
  if (lw !== undefined && r) return { weight: lw, weightNode: l!, term: r };
  return undefined;
}

/** Python: `sign(dense) * 1 + sign(sparse) * 0.1` (the paper's own printed example); the fix exchanges the weights. */
function pythonSwapped(ctx: PythonLintContext): void {
  for (const sum of ctx.ofType('binary_operator')) {
    if (sum.childForFieldName('operator')?.type !== '+') continue;
    const a = weighted(sum.childForFieldName('left'));
    const b = weighted(sum.childForFieldName('right'));
    if (!a || !b) continue;
    const role = (t: PythonNode) =>
      /dense/i.test(t.text) && !/sparse/i.test(t.text) ? 'dense' : /sparse/i.test(t.text) && !/dense/i.test(t.text) ? 'sparse' : null;
    const [dense, sparse] =
      role(a.term) === 'dense' && role(b.term) === 'sparse' ? [a, b] : role(a.term) === 'sparse' && role(b.term) === 'dense' ? [b, a] : [];
    if (!dense || !sparse || dense.weight <= sparse.weight) continue;
    ctx.report(meta, sum, `The weights are swapped: dense is weighted ${fmt(dense.weight)} and sparse ${fmt(sparse.weight)}, but ${SCALE_RULE_TEXT}.`, [
      {
        title: 'Exchange the weights',
        edits: [ctx.replace(dense.weightNode, sparse.weightNode.text), ctx.replace(sparse.weightNode, dense.weightNode.text)],
        preferred: true,
      },
    ]);
  }
}
