// The check a reward passes before anything trains it: the lint rules and TypeScript (what the code says) and
// the probes (what the code does on the task's probe bank in the real sandbox), as one list of diagnostics.
// `train` (through the CLI's hook), `rewardsmith lint`, the improvement loop and the language server share it.
import path from 'node:path';
import { terminalText } from '../args';
import { probeReward, type ProbeFinding } from '../probe/index';
import { endWarmHosts } from '../reward/index';
import { BUILTIN_TASKS, resolveTask, taskFromHeader, type TaskSpec } from '../tasks';
import { isPythonFile, lintText, loadPythonParser } from './rules';
import type { RewardDiagnostic } from './rule';

export interface RewardCheck {
  diagnostics: RewardDiagnostic[];
  errors: number;
  warnings: number;
  /** Whether the probes ran (not when asked not to, or when the time budget ran out first). */
  probed: boolean;
  /** Wall time of the probes, ms (0 when they did not run). */
  probeMs: number;
}

export interface CheckOptions {
  /** The file's unsaved text. */
  source?: string;
  /** Run the probes (default true). */
  probe?: boolean;
}

/** A probe finding as the editor and the CLI show diagnostics: 0-based LSP range, source `rewardsmith-probe`. */
export function probeDiagnostic(f: ProbeFinding): RewardDiagnostic {
  return {
    range: { start: { line: f.line - 1, character: f.column - 1 }, end: { line: f.endLine - 1, character: f.endColumn - 1 } },
    severity: f.severity,
    code: f.code,
    message: f.message,
    source: 'rewardsmith-probe',
    fixes: [],
    ...(f.episode === undefined ? {} : { probeEpisode: f.episode + 1 }),
  };
}

/**
 * The task a reward file is probed on: `explicit` (a command's --task) else its `// task:` header, a built-in id
 * or a task file beside the reward file; undefined when it names none. Throws on an unknown task or a bad task file.
 */
export function taskOfReward(file: string, text: string, explicit?: string): TaskSpec | undefined {
  if (explicit) return resolveTask(explicit);
  const named = taskFromHeader(text);
  if (!named) return undefined;
  return BUILTIN_TASKS[named] ?? resolveTask(path.resolve(path.dirname(file), named));
}

/** Lints `file` and, unless told not to (or given no task), probes it on the task's bank. */
export async function checkReward(file: string, text: string, task: TaskSpec | undefined, options: CheckOptions = {}): Promise<RewardCheck> {
  if (isPythonFile(file)) await loadPythonParser();
  const diagnostics = lintText(file, options.source ?? text);
  let probed = false;
  let probeMs = 0;
  if (task && options.probe !== false) {
    const result = await probeReward(file, task, { source: options.source ?? text });
    diagnostics.push(...result.findings.map(probeDiagnostic));
    probed = true;
    probeMs = result.ms;
  }
  diagnostics.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  return {
    diagnostics,
    errors: diagnostics.filter((d) => d.severity === 'error').length,
    warnings: diagnostics.filter((d) => d.severity === 'warning').length,
    probed,
    probeMs,
  };
}

/**
 * `train`'s check (its RewardGate): lint and probes; errors and warnings as lines to print (what never ran on a
 * probe is information, for the editor).
 */
export async function trainGate({ file: rewardFile, text }: { file: string; text: string }, task: TaskSpec): Promise<{ report: string[]; errors: number }> {
  const { diagnostics, errors } = await checkReward(rewardFile, text, task);
  await endWarmHosts(); // training probes nothing more: the probes' warm host would only idle through it
  const shown = diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
  const report = shown.map((d) => formatDiagnostic(rewardFile, d, terminalText));
  return { report, errors };
}

/** `file:line:col: severity code: message`, one line per diagnostic (the lint CLI's format). */
export function formatDiagnostic(
  file: string,
  d: Pick<RewardDiagnostic, 'range' | 'severity' | 'code' | 'message'>,
  clean: (text: string) => string = (t) => t,
): string {
  return `${file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.severity} ${d.code}: ${clean(d.message)}`;
}

/** For a probe finding a probe episode shows: the command that plays that episode with the file's rewards. */
export function playProbeCommand(file: string, d: Pick<RewardDiagnostic, 'probeEpisode'>): string | undefined {
  return d.probeEpisode === undefined ? undefined : `rewardsmith playback ${shellWord(file)} --probe ${d.probeEpisode}`;
}

/** A path as one shell word: quoted when it holds anything but plain path characters. */
function shellWord(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
