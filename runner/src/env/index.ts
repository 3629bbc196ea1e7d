// Environment factory: the headless simulator (default) or the mineflayer backend on a real server.
//
// What both backends share, in game/ (so that a policy or reward sees the same thing on either; the game rules of
// game/rules.ts and the block and mob registry of game/registry.ts too):
// - game/worldgen.ts: the world as a pure function of (kind, seed): `generateChunk(kind, seed, cx, cz)` fills a
//   16×16 column of 1.16.5 block state ids over `WORLD_BANDS[kind]` (y in [minY, minY+height); `below` and
//   `above` fill the rest), `blockStateAt` answers one coordinate, `spawnPoint` gives the agent's start
//   (feet position, mineflayer yaw) and `mobSpawns(seed)` the plains animals.
// - game/observe.ts: `observeView(blocks, pose, entities, view)` over a `BlockAccess` (state id at x, y, z),
//   `ViewEntity[]` and a `ViewPose` (feet, mineflayer yaw/pitch); `nearestDict(view)` is the reward's
//   current_nearest_blocks.
// - game/features.ts: `FEATURE_SPEC` (the layout, the same for every task) + `writeFeatures` (with a
//   `FeatureMemory` per episode) the policy features: LiDAR grid, nearest visible thing per class, inventory,
//   status, motion, last action.
// - ../seeds.ts: `nextEpisodeSeed(seed, envIndex)`, the per-env stream of episode seeds.
// Time: one agent step is one game tick (50 ms): walking moves ~0.2 m per step, a turn action is 15°.
import type { EnvOptions, VecEnv } from './types';
import { SimVecEnv, defaultWorkers } from './sim/vec';

export async function createEnv(opts: EnvOptions): Promise<VecEnv> {
  if (!Number.isInteger(opts.numEnvs) || opts.numEnvs < 1) throw new Error(`numEnvs must be a positive integer, got ${opts.numEnvs}`);
  if ((opts.backend ?? 'sim') === 'mineflayer') {
    // Loaded only when asked for: it pulls in mineflayer and the embedded server stack.
    const { createMineflayerEnv } = await import('./mineflayer/index');
    return createMineflayerEnv(opts);
  }
  return SimVecEnv.create(opts, opts.workers ?? defaultWorkers(opts.numEnvs));
}

export type { EnvOptions, VecEnv } from './types';
