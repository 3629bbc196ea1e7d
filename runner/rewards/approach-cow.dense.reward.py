# task: approach-cow
# The Python twin of approach-cow.dense.reward.ts, line for line, in the paper's own format.
# Design thoughts:
# - Success is a cow in view and closer than 2 m, so the sparse reward pays +1 exactly then.
# - Dying or losing health is the worst outcome: sparse is -1 when health drops (last health kept in
#   GLOBAL_DATA, written before it is read).
# - Cows wander, so the dense reward follows the nearest cow step by step while it is in view: +1 for
#   getting closer, -1 for falling behind; at the same distance +1 for turning towards it and -1 for
#   turning away, so no back-and-forth earns anything.
# - +1 when a cow comes into view, -1 when the agent loses sight of it.
# - With no cow in view, +1 the first time the agent enters a 4 m cell (search the plains), 0 otherwise:
#   no per-step penalty, which would make giving up the search look as good as searching.
# - Only the signs count: reward = sign(sparse) * 1 + sign(dense) * 0.1.
import math

import numpy as np


def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):
    def dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA):
        now = current_nearest_blocks.get("cow")
        before = previous_nearest_blocks.get("cow")
        if now is not None and before is None:
            return 1  # a cow came into view
        if now is None and before is not None:
            return -1  # lost sight of the cow
        if now is not None and before is not None:
            if now[0] < before[0] - 0.05:
                return 1  # closer
            if now[0] > before[0] + 0.05:
                return -1  # fell behind
            turned = abs(before[1]) - abs(now[1])
            if turned > 0.01:
                return 1  # turned towards it
            if turned < -0.01:
                return -1  # turned away
            return 0
        # No cow in view: reward entering a new 4 m cell.
        if "visited" not in GLOBAL_DATA:
            GLOBAL_DATA["visited"] = set()
        x, _, z = past_agent_positions[-1][:3]
        cell = (math.floor(x / 4), math.floor(z / 4))
        if cell in GLOBAL_DATA["visited"]:
            return 0
        GLOBAL_DATA["visited"].add(cell)
        return 1

    def sparse(current_nearest_blocks, health, GLOBAL_DATA):
        if "health" not in GLOBAL_DATA:
            GLOBAL_DATA["health"] = health
        lost_health = health < GLOBAL_DATA["health"]
        GLOBAL_DATA["health"] = health
        if health <= 0 or lost_health:
            return -1
        cow = current_nearest_blocks.get("cow")
        if cow is not None and cow[0] < 2:
            return 1  # success: a cow in view within 2 m
        return 0

    dense_reward = dense(current_nearest_blocks, previous_nearest_blocks, past_agent_positions, GLOBAL_DATA)
    sparse_reward = sparse(current_nearest_blocks, health, GLOBAL_DATA)
    return np.sign(sparse_reward) * 1 + np.sign(dense_reward) * 0.1
