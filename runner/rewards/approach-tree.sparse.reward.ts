// task: approach-tree
// Design thoughts:
// - The baseline the paper compares against: the task's success signal only, no shaping.
// - Sparse is +1 when a log is in view and closer than 1 m (the success criterion); dense is always 0.
// - Only the signs count: reward = sign(sparse) * 1 + sign(dense) * 0.1.

const LOGS = ['oak_log', 'birch_log', 'spruce_log', 'jungle_log', 'acacia_log', 'dark_oak_log'];

export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  function dense() {
    return 0; // no shaping
  }

  function sparse(current_nearest_blocks) {
    for (const name of LOGS) {
      const entry = current_nearest_blocks[name];
      if (entry !== undefined && entry[0] < 1) return 1; // success
    }
    return 0;
  }

  const dense_reward = dense();
  const sparse_reward = sparse(current_nearest_blocks);
  return Math.sign(sparse_reward) * 1 + Math.sign(dense_reward) * 0.1;
}
