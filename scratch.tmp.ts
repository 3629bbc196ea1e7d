import { lintText } from './runner/src/lint/rules';
import { reward, applyEdits } from './runner/test/helpers/rule-tester';
const cases: Record<string, string> = {
  unknown: reward(`  const m = current_nearest_blocks['magma'];\n  return m ? 1 : 0;`),
  wrongkind: reward(`  return inventory_change['diamond_ore'] ?? 0;`),
  nearest: reward(`  if (current_nearest_blocks.lava[0] < 3) return -1;\n  return 0;`),
  neg: reward(`  const last = past_agent_positions[-1];\n  return last ? 1 : 0;`),
  oor: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[3];`),
  cc: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[1] > 90 ? 1 : 0;`),
  py: reward(`  return len(past_agent_positions) > 3 ? 1 : 0;`),
  swap: `function closer(current_nearest_blocks, previous_nearest_blocks) {\n  return 0;\n}\n` + reward(`  return closer(previous_nearest_blocks, current_nearest_blocks);`),
  gd: reward(`  GLOBAL_DATA.steps += 1;\n  return 0;`),
  ur: reward(`  if (health < 5) return;\n  return 1;`),
  ssw: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 0.1 + Math.sign(dense()) * 1;`),
  sun: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return sparse() + dense();`),
  contract: `export function reward(current_nearest_blocks) {\n  return 0;\n}\n`,
  ts: reward(`  const x: number = 'a';\n  return x;`),
};
for (const [k, code] of Object.entries(cases)) {
  const ds = lintText(`${k}.reward.ts`, code);
  console.log('==', k);
  for (const d of ds) {
    console.log(`  ${d.range.start.line + 1} ${d.code} ${d.severity}: ${d.message}`);
    const f = d.fixes.find((x) => x.preferred) ?? d.fixes[0];
    if (f) console.log('   FIX ->', JSON.stringify(applyEdits(code, f.edits)));
  }
}
