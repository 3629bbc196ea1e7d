// Python only. `kill_entity["cow"]`, `inventory_change["log"]`, `current_nearest_blocks["cow"]`: the dicts
// hold only what happened or is in view this step, so indexing a name that is absent raises KeyError, which
// ends the training run on the first step without a kill. Read with .get, or test `in` first.
import { isAssignmentTarget, keyUses } from '../python';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'key-error',
  severity: 'error',
  description: 'an observation dict indexed with a name it may not hold (kill_entity["cow"] before any kill): KeyError',
  docs: "`current_nearest_blocks`, `previous_nearest_blocks`, `inventory_change` and `kill_entity` hold only the names seen, changed or killed this step; `d['name']` raises KeyError on every step where the name is absent. Use `kill_entity.get('cow', 0)` (the fix), or test `'cow' in current_nearest_blocks` before indexing.",
  fixable: true,
} as const satisfies RuleMeta;

export const keyError = defineRule({
  meta,
  python(ctx) {
    const uses = keyUses(ctx);
    for (const [i, u] of uses.entries()) {
      const keys = ctx.dictKeys(u.dict);
      if (!keys || u.how !== 'subscript' || isAssignmentTarget(u.node)) continue;
      // Tested or read with .get before, anywhere earlier in the file: the author knows it may be absent.
      const checked = uses.slice(0, i).some((e) => e.how !== 'subscript' && e.key === u.key && e.dict.text === u.dict.text);
      if (checked) continue;
      const dict = u.dict.text;
      const counts = keys !== 'nearby';
      const fixes = counts
        ? [{ title: `Read it with ${dict}.get(${u.keyNode.text}, 0)`, edits: [ctx.replace(u.node, `${dict}.get(${u.keyNode.text}, 0)`)], preferred: true }]
        : [];
      const why = keys === 'mob' ? 'no such mob was killed' : keys === 'item' ? 'that item did not change' : 'it is not in view';
      const advice = counts ? `use ${dict}.get(${u.keyNode.text}, 0)` : `test ${u.keyNode.text} in ${dict} first`;
      ctx.report(
        meta,
        u.node,
        `${dict}[${u.keyNode.text}] raises KeyError on every step where ${why} (the dict holds only this step's names); ${advice}.`,
        fixes,
      );
    }
  },
});
