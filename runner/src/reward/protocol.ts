// The protocol between the reward runtime (index.ts) and its sandbox hosts, the TypeScript one
// (sandbox-host.ts, isolated-vm) and the Python one (python-host.ts, Pyodide): the parent sends HostRequest
// messages over the IPC channel (advanced serialization) and gets exactly one HostReply per request, in order.
import type { ObservationWire } from '../schema';

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
  /** Statements of a coverage-instrumented file (0: not instrumented), and the global its marks call. */
  coverage: number;
  coverageMarker: string;
  /** The observation's fields and the reward's parameters (schema observationWire): the driver's decoder and argument lists. */
  observation: ObservationWire;
}
/**
 * A step's observations, packed (see encodeObservations in index.ts): names that are new since the last step
 * (the isolate keeps the table) and one Float64Array of numbers — much cheaper than JSON in and out.
 */
export interface PackedStep {
  newNames: string[];
  data: Float64Array;
  count: number;
  /** The envs these observations are for, in order (absent: envs 0..count-1). Probes step episodes of unequal length. */
  envs?: number[];
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
  /** Count each statement's runs (probes): the reply lists the statements (the interpreter's syntax tree decides them). */
  coverage: boolean;
  /** As OpenRequest's. */
  observation: ObservationWire;
}
/** Where a statement is in the reward file (1-based; end exclusive). */
export interface StatementSpan {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}
/** `dispose`: drop the isolate; the TypeScript host waits, warm, for its next `open`. */
export type HostCommand =
  | OpenRequest
  | PythonOpenRequest
  | { op: 'begin'; json: string }
  | ({ op: 'step' } & PackedStep)
  | { op: 'coverage' }
  | { op: 'dispose' };
export type HostRequest = { id: number } & HostCommand;

/** A failure inside the sandbox, in compiled-JS terms; the parent maps it to the original file. */
export interface HostFailure {
  /** `host`: the host process itself died (a signal, an exit), which is not the reward's doing. */
  kind: 'throw' | 'timeout' | 'memory' | 'bad-return' | 'contract' | 'host';
  message: string;
  env: number | null;
  /** V8 stack of a thrown error (frames in the reward script carry OpenRequest.scriptName). */
  stack?: string;
  /** The exported function that was running, for failures without a stack. */
  entry?: string;
  /** 1-based index of the loop that was running (CompiledReward.loops), for time-outs. */
  loop?: number;
  /** In a coverage-instrumented file: the statement that ran last (CompiledReward.statements), for a bad return. */
  statement?: number;
  /** The sandbox cannot be used any more (time-out, memory). */
  fatal?: boolean;
  /** Where in the reward file, for hosts that locate failures themselves (the Python interpreter does). */
  line?: number;
  column?: number;
}
/**
 * What a coverage-instrumented sandbox counted, per env and statement (index env × statements + statement): the
 * calls in which the statement ran, those of them that returned more than 0, and the sum of those returns.
 */
export interface CoverageCounts {
  statements: number;
  runs: Float64Array;
  paidRuns: Float64Array;
  paidSum: Float64Array;
}
/** Per call of a coverage-instrumented step: the last statement that ran (the one that produced the value) and, for dense/sparse files, each part. */
export interface StepDetail {
  last: number[];
  dense?: number[];
  sparse?: number[];
}
export type HostReply = { id: number } & (
  | { ok: true; values?: Float64Array | number[]; detail?: StepDetail; coverage?: CoverageCounts; statements?: StatementSpan[] }
  | { ok: false; failure: HostFailure }
);

/** Steps in a row whose slowest call must exceed the per-call CPU limit before the run fails. */
export const SLOW_STEPS_TO_FAIL = 10;
