// Where the policy network computes. `auto` tries, in order, CUDA (@tensorflow/tfjs-node-gpu) and native CPU
// (@tensorflow/tfjs-node), and keeps the first one that is installed AND runs a small op; the native packages
// are optional dependencies that often fail to install, so their absence is normal, and then `js` runs: the
// fused plain-JavaScript network of fused.ts, no TensorFlow.js at all. `wasm` (@tensorflow/tfjs-backend-wasm)
// and `cpu` (@tensorflow/tfjs-backend-cpu) are the TensorFlow.js engines without a native package, there to be
// asked for by name (the reference the fused network is tested against).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { MathBackendCPU } from '@tensorflow/tfjs-backend-cpu';
// tfjs-core's main entry has no gradients (the umbrella @tensorflow/tfjs package registers them); PPO needs them.
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export type BackendChoice = 'auto' | 'gpu' | 'node' | 'js' | 'wasm' | 'cpu';
export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'gpu', 'node', 'js', 'wasm', 'cpu'];
/** What `auto` tries, in order. */
export const AUTO_ORDER: readonly Exclude<BackendChoice, 'auto'>[] = ['gpu', 'node', 'js'];

export interface BackendSelection {
  /** What ran: 'gpu' (tfjs-node-gpu), 'node' (tfjs-node), 'js' (the fused network), 'wasm' or 'cpu'. */
  name: Exclude<BackendChoice, 'auto'>;
  /** TensorFlow.js's own backend name ('tensorflow', 'wasm', 'cpu'); 'none' for 'js'. */
  tfName: string;
  /** Why each backend tried before it was not used, for the log. */
  skipped: { name: string; reason: string }[];
}

// The native backends are optional packages resolved at run time, relative to this module (they are not
// bundled: see build.mjs). The wasm backend is bundled with tfjs-core, so it registers with the same engine.
const requireHere = createRequire(__filename);

async function tryNative(pkg: string): Promise<string> {
  requireHere(pkg); // registers the 'tensorflow' backend with @tensorflow/tfjs-core
  return 'tensorflow';
}

async function tryWasm(): Promise<string> {
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // Point the loader at the .wasm files on disk (no fetch in Node): beside the bundle (dist/, where the build
  // copies them), else in the installed package (running from sources).
  const dir =
    process.env.REWARDSMITH_WASM_DIR ??
    (existsSync(path.join(__dirname, 'tfjs-backend-wasm.wasm'))
      ? __dirname
      : path.dirname(requireHere.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')));
  wasm.setWasmPaths(dir.endsWith(path.sep) ? dir : dir + path.sep);
  return 'wasm';
}

const LOADERS: Record<Exclude<BackendChoice, 'auto'>, () => Promise<string>> = {
  gpu: () => tryNative('@tensorflow/tfjs-node-gpu'),
  node: () => tryNative('@tensorflow/tfjs-node'),
  js: async () => 'none',
  wasm: tryWasm,
  cpu: async () => {
    // Importing the package registers 'cpu' and its kernels; bundlers that trust the package's "sideEffects"
    // field drop a bare import, so the backend is named here and registered if it is missing.
    if (!tf.findBackendFactory('cpu')) tf.registerBackend('cpu', () => new MathBackendCPU(), 1);
    return 'cpu';
  },
};

/** Picks and initialises a backend. Throws when an explicitly requested backend cannot run. */
export async function selectBackend(choice: BackendChoice = 'auto'): Promise<BackendSelection> {
  const order = choice === 'auto' ? AUTO_ORDER : [choice];
  const skipped: { name: string; reason: string }[] = [];
  // PROD skips per-op debug checks and the "install tfjs-node" console notice of the cpu backend.
  tf.env().set('PROD', true);
  for (const name of order) {
    try {
      const tfName = await LOADERS[name]();
      if (name === 'js') return { name, tfName, skipped };
      if (!(await tf.setBackend(tfName))) throw new Error(`tf.setBackend('${tfName}') failed`);
      await tf.ready();
      // A backend that registers but cannot compute is no good: run one small op and check it.
      const probe = tf.tidy(() => tf.sum(tf.matMul(tf.ones([2, 3]), tf.ones([3, 2]))));
      const value = (await probe.data())[0];
      probe.dispose();
      if (value !== 12) throw new Error(`probe computed ${value}, expected 12`);
      return { name, tfName, skipped };
    } catch (err) {
      const reason = err instanceof Error ? err.message.split('\n')[0]! : String(err);
      skipped.push({ name, reason });
      if (choice !== 'auto') throw new Error(`backend "${name}" is not usable: ${reason}`);
    }
  }
  throw new Error(`no backend works: ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`);
}

let selected: BackendSelection | null = null;

/** Selects a backend once per process; later calls reuse it (TensorFlow.js has one global backend). */
export async function ensureBackend(choice: BackendChoice = 'auto'): Promise<BackendSelection> {
  if (selected && (choice === 'auto' || choice === selected.name)) return selected;
  selected = await selectBackend(choice);
  return selected;
}
