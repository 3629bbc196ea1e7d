// task: explore-diamond
// Design thoughts:
// - The baseline the paper compares against: the task's success signal only, no shaping.
// - Sparse is +1 when diamond ore is in view and closer than 2 m (the success criterion); dense is always 0.
// - Only the signs count: reward = sign(sparse) * 1 + sign(dense) * 0.1.

export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  function dense() {
    return 0; // no shaping
  }

  function sparse(current_nearest_blocks) {
    const ore = current_nearest_blocks['diamond_ore'];
    if (ore !== undefined && ore[0] < 2) return 1; // success
    return 0;
  }

  const dense_reward = dense();
  const sparse_reward = sparse(current_nearest_blocks);
  return Math.sign(sparse_reward) * 1 + Math.sign(dense_reward) * 0.1;
}
