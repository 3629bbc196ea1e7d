// task: explore-diamond
// Design thoughts:
// - Success is diamond ore in view and closer than 2 m, so the sparse reward pays +1 exactly then.
// - Underground at y = 11 the main danger is lava (lava lakes sit around y = 10): dying or losing health is
//   sparse -1, and walking towards lava that is already close is dense -1 before any other shaping.
//   The block is called lava (magma_block is a different, solid block).
// - Diamond ore in view: +1 for getting closer, -1 for moving away; -1 for losing sight of it.
// - Otherwise exploration: +1 the first time the agent enters a 2 m cell (kept as a Set in GLOBAL_DATA,
//   created before it is read), -1 for climbing above y = 16 where no diamond ore generates.
// - Only the signs count: reward = sign(sparse) * 1 + sign(dense) * 0.1.

const LAVA_DANGER_DISTANCE = 4; // metres: lava closer than this is dangerous
const DIAMOND_LAYER_TOP = 16; // diamond ore generates below y = 16

export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  function dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA) {
    // Lava first: closing in on nearby lava outweighs everything else.
    const lava_now = current_nearest_blocks['lava'];
    const lava_before = previous_nearest_blocks['lava'];
    if (lava_now !== undefined && lava_now[0] < LAVA_DANGER_DISTANCE) {
      if (lava_before === undefined || lava_now[0] <= lava_before[0]) return -1;
    }

    // Diamond ore in view: follow it.
    const ore_now = current_nearest_blocks['diamond_ore'];
    const ore_before = previous_nearest_blocks['diamond_ore'];
    if (ore_now !== undefined && ore_before === undefined) return 1; // spotted
    if (ore_now === undefined && ore_before !== undefined) return -1; // lost sight
    if (ore_now !== undefined && ore_before !== undefined) {
      if (ore_now[0] < ore_before[0] - 0.05) return 1;
      if (ore_now[0] > ore_before[0] + 0.05) return -1;
      return 0;
    }

    // Explore: new 2 m cells pay, leaving the diamond layer costs.
    const [x, y, z] = past_agent_positions[past_agent_positions.length - 1];
    if (y > DIAMOND_LAYER_TOP) return -1;
    if (!('visited' in GLOBAL_DATA)) GLOBAL_DATA.visited = new Set();
    const cell = `${Math.floor(x / 2)},${Math.floor(y / 2)},${Math.floor(z / 2)}`;
    if (GLOBAL_DATA.visited.has(cell)) return 0;
    GLOBAL_DATA.visited.add(cell);
    return 1;
  }

  function sparse(current_nearest_blocks, health, GLOBAL_DATA) {
    if (!('health' in GLOBAL_DATA)) GLOBAL_DATA.health = health;
    const lost_health = health < GLOBAL_DATA.health;
    GLOBAL_DATA.health = health;
    if (health <= 0 || lost_health) return -1; // died or got hurt (lava, falls, mobs)
    const ore = current_nearest_blocks['diamond_ore'];
    if (ore !== undefined && ore[0] < 2) return 1; // success: diamond ore in view within 2 m
    return 0;
  }

  const dense_reward = dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA);
  const sparse_reward = sparse(current_nearest_blocks, health, GLOBAL_DATA);
  return Math.sign(sparse_reward) * 1 + Math.sign(dense_reward) * 0.1;
}
