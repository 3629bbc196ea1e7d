// The LLM critic as the editor and `rewardsmith critique` use it: resolves the task and LLM configuration,
// passes the static diagnostics along (so the critic does not repeat them), and turns the critic's 1-based
// findings into LSP ranges. Every failure becomes a CritiqueResult with status 'error' and a message for the
// user; nothing here throws.
import path from 'node:path';
import { LlmError, LlmNotConfiguredError, isLlmConfigured, resolveLlmConfig, type LlmConfig, type LlmLog } from '../../runner/src/llm/client';
import { critiqueReward } from '../../runner/src/llm/critic';
import { taskHeader } from '../../runner/src/llm/prompts';
import { resolveTask, type TaskSpec } from '../../runner/src/tasks';
import type { CritiqueFinding, CritiqueResult } from './lsp_ext';
import type { RewardDiagnostic } from './rules';
import { lintText } from './rules';

export type CritiqueOutcome = CritiqueResult;

export interface CritiqueFileOptions {
  file: string;
  source: string;
  /** Task id or task file; default: the file's `// task: <id>` header, then `defaultTask`. */
  task?: string;
  defaultTask?: string;
  llm?: Partial<LlmConfig>;
  /** Static diagnostics already computed for this source (else they are computed here). */
  staticDiagnostics?: RewardDiagnostic[];
  signal?: AbortSignal;
  log?: LlmLog;
}

/** A finding's LSP range: its lines, from the first non-blank character to the end of the last line. */
export function findingRange(lines: string[], line: number, endLine: number | undefined): CritiqueFinding['range'] {
  const first = Math.min(Math.max(line - 1, 0), lines.length - 1);
  const last = Math.min(Math.max((endLine ?? line) - 1, first), lines.length - 1);
  const indent = /^\s*/.exec(lines[first] ?? '')![0].length;
  return { start: { line: first, character: indent }, end: { line: last, character: (lines[last] ?? '').length } };
}

export async function critiqueFile(opts: CritiqueFileOptions): Promise<CritiqueOutcome> {
  const llm = resolveLlmConfig(opts.llm);
  if (!isLlmConfigured(llm)) return { status: 'error', kind: 'not-configured', message: new LlmNotConfiguredError().message };
  const taskName = opts.task || taskHeader(opts.source) || opts.defaultTask || undefined;
  let task: TaskSpec | undefined;
  if (taskName) {
    try {
      task = resolveTask(/\.(json|ya?ml)$/i.test(taskName) ? path.resolve(path.dirname(opts.file), taskName) : taskName);
    } catch (err) {
      return { status: 'error', kind: 'bad-task', message: `Cannot load task "${taskName}": ${(err as Error).message}` };
    }
  }
  const statics = (opts.staticDiagnostics ?? lintText(opts.file, opts.source))
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .map((d) => ({ line: d.range.start.line + 1, severity: d.severity, message: d.message }));
  try {
    const result = await critiqueReward({ file: opts.file, source: opts.source, task, llm: opts.llm, staticFindings: statics, signal: opts.signal, log: opts.log });
    const lines = opts.source.replace(/\r\n?/g, '\n').split('\n');
    return {
      status: 'ok',
      success: result.success,
      reasoning: result.reasoning,
      critique: result.critique,
      findings: result.findings.map((f) => ({ range: findingRange(lines, f.line, f.endLine), severity: f.severity, message: f.message })),
      cached: false,
      model: result.model,
    };
  } catch (err) {
    if (err instanceof LlmNotConfiguredError) return { status: 'error', kind: 'not-configured', message: err.message };
    if (err instanceof LlmError) return { status: 'error', kind: 'llm', message: `The critic failed after ${err.attempts} attempt(s): ${err.message}` };
    return { status: 'error', kind: 'llm', message: `The critic failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}
