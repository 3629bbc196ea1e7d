// Environment factory: the headless simulator (default) or the mineflayer backend on a real server.
import type { EnvOptions, VecEnv } from './types';
import { SimVecEnv, defaultWorkers } from './sim/vec';

export async function createEnv(opts: EnvOptions): Promise<VecEnv> {
  if (!Number.isInteger(opts.numEnvs) || opts.numEnvs < 1) throw new Error(`numEnvs must be a positive integer, got ${opts.numEnvs}`);
  if ((opts.backend ?? 'sim') === 'mineflayer') {
    // The mineflayer backend (engineer H4's module) loads only when asked for: it pulls in the server stack.
    const backendModule = './mineflayer/index';
    const { createMineflayerEnv } = (await import(backendModule)) as { createMineflayerEnv: (o: EnvOptions) => Promise<VecEnv> };
    return createMineflayerEnv(opts);
  }
  return SimVecEnv.create(opts, opts.workers ?? defaultWorkers(opts.numEnvs));
}

export type { EnvOptions, VecEnv } from './types';
