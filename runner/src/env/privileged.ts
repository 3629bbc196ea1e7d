// The privileged interface: the one way code outside env/ reads the simulated world itself. The scripted
// teacher (pretrain/demonstrator.ts) plans on it (block states, the mobs, the agent's exact pose; its sighted
// kind only the view and the blocks within reach) and the
// probes' scripted behaviours (probe/bank.ts) play and scan worlds with it; the policy and the rewards see only
// the env's features and observations (VecEnv, types.ts). What it hands out is the simulator's (sim/) and the
// game's shared logic (game/); the mineflayer backend offers no such access.
import type { PhysicsEntity } from 'prismarine-physics';
import type { Mob } from './sim/mobs';
import type { SimWorld } from './sim/world';
import type { ViewResult } from './game/view';

/** What the teacher reads of one simulated env, and only reads (a `SimEnv` is one). */
export interface PrivilegedView {
  readonly entity: PhysicsEntity;
  readonly mobs: readonly Mob[];
  readonly world: Pick<SimWorld, 'stateAt' | 'column' | 'minY' | 'maxY'>;
  readonly inventory: ReadonlyMap<string, number>;
  /** The item in hand (null: the empty hand); the `equip` action moves to the next inventory item. */
  readonly heldItem: string | null;
  /** What the agent sees this step (the view its `nearest` features and the reward's `nearest` come from). */
  readonly view: ViewResult;
  /** Ticks it would take to break the block at (x, y, z) holding `item` (null: the hand). */
  ticksToBreak(item: string | null, x: number, y: number, z: number): number;
}

export { SimEnv } from './sim/sim';
export { SimBatch } from './sim/vec';
export type { Mob } from './sim/mobs';
export { LAVA_BLOCK, blockNames, nameIndex, stateSolid, stateToBlock } from './game/registry';
export { DEG, EYE_HEIGHT, wrapAngle } from './game/observe';
export { LookRay, targetBlock, type BlockHit } from './game/rules';
