// `damage_dealt` and `kill_entity` exist only in attack tasks. A reward whose `// task:` header names another
// task and still takes them is refused by the sandbox; read anyway they would always be 0 and {}.
import ts from 'typescript';
import { PARAMETERS, STEP_OBSERVATION_FIELDS } from '../../schema';
import { BUILTIN_TASKS, taskFromHeader } from '../../tasks';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'attack-parameters',
  severity: 'error',
  description: 'damage_dealt / kill_entity in a reward for a task that is not an attack task',
  docs: 'Only attack tasks (attack-cow) pass damage_dealt and kill_entity. In any other task the sandbox refuses a reward that declares them, and they would carry nothing (0 and {}). Reward approaching or seeing the mob instead, or change the `// task:` header if this is an attack reward.',
  fixable: false,
} as const satisfies RuleMeta;

/** The attack-only parameters, each with the value it would carry outside attack tasks (its field's unobserved value). */
const ATTACK_ONLY = new Map(
  PARAMETERS.filter((p) => p.attackOnly).map((p) => {
    const field = 'field' in p.source ? (STEP_OBSERVATION_FIELDS[p.source.field] as { unobserved?: unknown }) : {};
    return [p.name as string, JSON.stringify(field.unobserved)];
  }),
);

export const attackParameters = defineRule({
  meta,
  node(node, ctx) {
    if (!ts.isParameter(node) || !ts.isIdentifier(node.name) || !ATTACK_ONLY.has(node.name.text)) return;
    const id = ctx.memo('task-header', () => taskFromHeader(ctx.snap.project.userText));
    const task = id ? BUILTIN_TASKS[id] : undefined;
    if (!task || task.attack) return;
    ctx.report(
      meta,
      node.name,
      `${node.name.text} exists only in attack tasks, and this file's task ${task.id} is not one: the sandbox refuses a reward that takes it (it would always be ${ATTACK_ONLY.get(node.name.text)}).`,
    );
  },
});
