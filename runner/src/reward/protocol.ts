// The protocol between the reward runtime (index.ts) and its sandbox hosts, the TypeScript one
// (sandbox-host.ts, isolated-vm) and the Python one (python-host.ts, Pyodide): the parent sends HostRequest
// messages over the IPC channel (advanced serialization) and gets exactly one HostReply per request, in order.

/** The sandbox's limits (REWARD_LIMITS in index.ts documents each). */
export interface RewardLimits {
  callCpuMs: number;
  callWallMs: number;
  stepSlackMs: number;
  topLevelMs: number;
  memoryMb: number;
  /** Longest error message or stack that leaves the sandbox; the rest is cut, saying how much. */
  errorChars: number;
}

export interface OpenRequest {
  op: 'open';
  js: string;
  exportsKind: 'reward_function' | 'dense_sparse';
  attack: boolean;
  limits: RewardLimits;
  /** Global the compiled code sets to the loop it is in (see LOOP_MARKER in compile.ts). */
  loopMarker: string;
  /** Script name of the reward code in V8 stack traces (the parent maps those frames to the original file). */
  scriptName: string;
  /** The scale rule's weights (from the schema), for dense/sparse files. */
  sparseWeight: number;
  denseWeight: number;
}
/**
 * A step's observations, packed (see encodeObservations in index.ts): names that are new since the last step
 * (the isolate keeps the table) and one Float64Array of numbers — much cheaper than JSON in and out.
 */
export interface PackedStep {
  newNames: string[];
  data: Float64Array;
  count: number;
}
/** Opens the Python sandbox (python-host.ts): the file's text, run by Pyodide. */
export interface PythonOpenRequest {
  op: 'open-python';
  /** The reward file's path: Python's tracebacks name it, the driver finds the reward's frames by it. */
  file: string;
  source: string;
  attack: boolean;
  limits: RewardLimits;
  sparseWeight: number;
  denseWeight: number;
}
export type HostCommand = OpenRequest | PythonOpenRequest | { op: 'begin'; json: string } | ({ op: 'step' } & PackedStep);
export type HostRequest = { id: number } & HostCommand;

/** A failure inside the sandbox, in compiled-JS terms; the parent maps it to the original file. */
export interface HostFailure {
  kind: 'throw' | 'timeout' | 'memory' | 'bad-return' | 'contract';
  message: string;
  env: number | null;
  /** V8 stack of a thrown error (frames in the reward script carry OpenRequest.scriptName). */
  stack?: string;
  /** The exported function that was running, for failures without a stack. */
  entry?: string;
  /** 1-based index of the loop that was running (CompiledReward.loops), for time-outs. */
  loop?: number;
  /** The sandbox cannot be used any more (time-out, memory). */
  fatal?: boolean;
  /** Where in the reward file, for hosts that locate failures themselves (the Python interpreter does). */
  line?: number;
  column?: number;
}
export type HostReply = { id: number } & ({ ok: true; values?: number[] } | { ok: false; failure: HostFailure });

/** Steps in a row whose slowest call must exceed the per-call CPU limit before the run fails. */
export const SLOW_STEPS_TO_FAIL = 3;
