// task: approach-cow
// Design thoughts:
// - Success is a cow in view and closer than 2 m, so the sparse reward pays +1 exactly then.
// - Dying or losing health is the worst outcome: sparse is -1 when health drops (last health kept in
//   GLOBAL_DATA, written before it is read).
// - Cows wander, so the dense reward follows the nearest cow step by step while it is in view: +1 for
//   getting closer, -1 for falling behind; at the same distance +1 for turning towards it and -1 for
//   turning away, so no back-and-forth earns anything.
// - +1 when a cow comes into view, -1 when the agent loses sight of it.
// - With no cow in view, +1 the first time the agent enters a 4 m cell (search the plains), 0 otherwise:
//   no per-step penalty, which would make giving up the search look as good as searching.
// - Only the signs count: reward = sign(sparse) * 1 + sign(dense) * 0.1.

export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  function dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA) {
    const now = current_nearest_blocks['cow'];
    const before = previous_nearest_blocks['cow'];
    if (now !== undefined && before === undefined) return 1; // a cow came into view
    if (now === undefined && before !== undefined) return -1; // lost sight of the cow
    if (now !== undefined && before !== undefined) {
      if (now[0] < before[0] - 0.05) return 1; // closer
      if (now[0] > before[0] + 0.05) return -1; // fell behind
      const turned = Math.abs(before[1]) - Math.abs(now[1]);
      if (turned > 0.01) return 1; // turned towards it
      if (turned < -0.01) return -1; // turned away
      return 0;
    }
    // No cow in view: reward entering a new 4 m cell.
    if (!('visited' in GLOBAL_DATA)) GLOBAL_DATA.visited = new Set();
    const [x, , z] = past_agent_positions[past_agent_positions.length - 1];
    const cell = `${Math.floor(x / 4)},${Math.floor(z / 4)}`;
    if (GLOBAL_DATA.visited.has(cell)) return 0;
    GLOBAL_DATA.visited.add(cell);
    return 1;
  }

  function sparse(current_nearest_blocks, health, GLOBAL_DATA) {
    if (!('health' in GLOBAL_DATA)) GLOBAL_DATA.health = health;
    const lost_health = health < GLOBAL_DATA.health;
    GLOBAL_DATA.health = health;
    if (health <= 0 || lost_health) return -1;
    const cow = current_nearest_blocks['cow'];
    if (cow !== undefined && cow[0] < 2) return 1; // success: a cow in view within 2 m
    return 0;
  }

  const dense_reward = dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA);
  const sparse_reward = sparse(current_nearest_blocks, health, GLOBAL_DATA);
  return Math.sign(sparse_reward) * 1 + Math.sign(dense_reward) * 0.1;
}
