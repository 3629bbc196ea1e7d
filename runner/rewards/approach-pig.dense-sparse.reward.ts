// task: approach-pig
// Design thoughts:
// - This file exports `dense` and `sparse` instead of `reward_function`: the runtime combines them with the
//   scale rule, reward = sign(sparse) * 1 + sign(dense) * 0.1, so only their signs count.
// - Both take the reward parameters in the contract order and may stop early (they need only a prefix).
// - Success is a pig in view and closer than 2 m: sparse +1. Losing health or dying: sparse -1 (last health
//   kept in GLOBAL_DATA, written before it is read).
// - Dense: +1 for getting closer to or turning towards the pig in view, -1 for moving away or losing sight;
//   +1 when a pig comes into view.

export function dense(current_nearest_blocks, previous_nearest_blocks) {
  const now = current_nearest_blocks['pig'];
  const before = previous_nearest_blocks['pig'];
  if (now !== undefined && before === undefined) return 1; // a pig came into view
  if (now === undefined && before !== undefined) return -1; // lost sight of the pig
  if (now === undefined || before === undefined) return 0; // no pig either step
  if (now[0] < before[0] - 0.05) return 1; // closer
  if (Math.abs(now[1]) < Math.abs(before[1]) - 0.01) return 1; // turned towards it
  if (now[0] > before[0] + 0.05) return -1; // fell behind
  return 0;
}

export function sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  if (!('health' in GLOBAL_DATA)) GLOBAL_DATA.health = health;
  const lost_health = health < GLOBAL_DATA.health;
  GLOBAL_DATA.health = health;
  if (health <= 0 || lost_health) return -1;
  const pig = current_nearest_blocks['pig'];
  if (pig !== undefined && pig[0] < 2) return 1; // success: a pig in view within 2 m
  return 0;
}
