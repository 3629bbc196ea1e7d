// Dense and sparse combined without Math.sign, or signed with other weights than the scale rule's: the
// reward's scale depends on the terms' magnitudes, which the method's PPO setup does not expect.
import { fmt } from '../context';
import { SCALE_RULE_TEXT, scaleCombinations } from '../scale';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'scale-unscaled',
  severity: 'error',
  description: 'dense and sparse combined without Math.sign or with other weights',
  docs: "The method combines a reward as Math.sign(sparse) * 1 + Math.sign(dense) * 0.1: only the signs of the terms count, so every reward has the same scale. Raw sums or other weights make the scale unbounded or unbalanced. The fix writes the rule's combination.",
  fixable: true,
} as const satisfies RuleMeta;

export const scaleUnscaled = defineRule({
  meta,
  end(ctx) {
    for (const c of scaleCombinations(ctx)) {
      if (c.verdict === 'weights')
        ctx.report(meta, c.node, `dense is weighted ${fmt(c.denseWeight)} and sparse ${fmt(c.sparseWeight)}, but ${SCALE_RULE_TEXT}.`, [c.fix]);
      if (c.verdict === 'unsigned')
        ctx.report(meta, c.node, `dense and sparse are combined without Math.sign, so the reward's scale is unbounded; ${SCALE_RULE_TEXT}.`, [c.fix]);
    }
  },
});
