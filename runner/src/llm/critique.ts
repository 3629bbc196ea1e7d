// The LLM critic as the editor and `rewardsmith critique` (below) use it: resolves the task and LLM configuration,
// passes the static diagnostics along (so the critic does not repeat them), and turns the critic's 1-based
// findings into LSP ranges. Every failure becomes a CritiqueResult with status 'error' and a message for the
// user; nothing here throws.
import path from 'node:path';
import { terminalJson, terminalText } from '../args';
import { LlmError, LlmNotConfiguredError, isLlmConfigured, resolveLlmConfig, type LlmConfig, type LlmLog } from './client';
import { critiqueReward } from './critic';
import { resolveTask, taskFromHeader, type TaskSpec } from '../tasks';
import type { CritiqueFinding, CritiqueResult } from '../../../protocol/src/lsp';
import type { RewardDiagnostic } from '../lint/rules';
import { lintText } from '../lint/rules';
import { CommandError, parseCommandArgs, runCommand } from '../args';
import { readRewardFile, UnreadableRewardFile } from '../reward/compile';

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

export async function critiqueFile(opts: CritiqueFileOptions): Promise<CritiqueResult> {
  const llm = resolveLlmConfig(opts.llm);
  if (!isLlmConfigured(llm)) return { status: 'error', kind: 'not-configured', message: new LlmNotConfiguredError().message };
  const taskName = opts.task || taskFromHeader(opts.source) || opts.defaultTask || undefined;
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
    const result = await critiqueReward({
      file: opts.file,
      source: opts.source,
      task,
      llm: opts.llm,
      staticFindings: statics,
      signal: opts.signal,
      log: opts.log,
    });
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

export const CRITIQUE_SPEC = {
  command: 'critique',
  summary: `Asks the configured LLM critic to review a reward file (line-anchored findings). Configure with
OPENAI_BASE_URL, OPENAI_API_KEY and REWARDSMITH_MODEL. Exit code 0 when the critic passes the file,
1 when it does not or no review came back (timeout, malformed answer), 2 when no LLM is configured, the task
is unknown or the file cannot be read.`,
  positionals: 'FILE',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    task: { type: 'string', valueName: 'TASK', description: "task id or task file (default: the file's // task: header)" },
    format: { type: 'string', choices: ['text', 'json'], default: 'text', description: 'output format' },
  },
} as const;

export async function critiqueCommand(argv: string[]): Promise<number> {
  return runCommand('critique', async () => {
    const { values, positionals } = parseCommandArgs(CRITIQUE_SPEC, argv);
    const file = positionals[0]!;
    const task = values.task;
    const format = values.format;
    let source: string;
    try {
      source = readRewardFile(file);
    } catch (err) {
      if (err instanceof UnreadableRewardFile) throw new CommandError(err.message, 2);
      throw err;
    }
    const outcome = await critiqueFile({ file: path.resolve(file), source, task });
    // The review is the model's text: nothing of it reaches the terminal raw.
    if (format === 'json') process.stdout.write(terminalJson(outcome) + '\n');
    if (outcome.status === 'error') {
      process.stderr.write(`rewardsmith critique: ${terminalText(outcome.message)}\n`);
      // As in every command: what the user must set up or fix in the command line is 2, a failing LLM 1.
      return outcome.kind === 'llm' ? 1 : 2;
    }
    if (format === 'text') {
      process.stdout.write(terminalText(`${outcome.success ? 'PASS' : 'FAIL'} (${outcome.model})\n\n${outcome.reasoning}\n`));
      if (outcome.critique) process.stdout.write(`\nCritique: ${terminalText(outcome.critique)}\n`);
      for (const f of outcome.findings) process.stdout.write(`${file}:${f.range.start.line + 1}: ${f.severity}: ${terminalText(f.message)}\n`);
    }
    return outcome.success ? 0 : 1;
  });
}
