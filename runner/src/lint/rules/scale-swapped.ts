// Dense weighted 1 and sparse 0.1: the scale rule's weights exchanged, so the shaping term drowns the task's
// own signal.
import { fmt } from '../context';
import { SCALE_RULE_TEXT, scaleCombinations } from '../scale';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'scale-swapped',
  severity: 'error',
  description: 'dense weighted 1 and sparse 0.1',
  docs: "The method combines a reward as Math.sign(sparse) * 1 + Math.sign(dense) * 0.1, so the sparse task signal always outweighs the dense shaping. With the weights exchanged the agent optimises the shaping instead of the task. The fix writes the rule's combination.",
  fixable: true,
} as const satisfies RuleMeta;

export const scaleSwapped = defineRule({
  meta,
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
