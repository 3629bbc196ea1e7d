// The reward critic (LLM): the paper's {reasoning, success, critique} review, extended with findings
// anchored to 1-based lines so the editor can show them as diagnostics. The answer is validated; what can be
// repaired (a fenced block, "true" as a string, an unknown severity, a line past the end) is repaired, and an
// unusable answer is asked for again with the reason.
import { chatValidated, extractJsonObject, type LlmConfig, type LlmLog, type Validation } from './client';
import { contextText, languageOf, numberedSource, renderTemplate } from './prompts';
import type { TaskSpec } from '../tasks';

export type FindingSeverity = 'error' | 'warning' | 'information';

export interface CritiqueFinding {
  /** 1-based first line. */
  line: number;
  /** 1-based last line, when the finding spans several. */
  endLine?: number;
  severity: FindingSeverity;
  message: string;
}

export interface CritiqueResult {
  reasoning: string;
  /** The paper's verdict: true when the reward can be trained on as it is. */
  success: boolean;
  critique: string | null;
  findings: CritiqueFinding[];
  /** Model that answered. */
  model: string;
}

/** A static-checker diagnostic passed to the critic so it does not repeat it (1-based line). */
export interface StaticFinding {
  line: number;
  severity: string;
  message: string;
}

export interface CritiqueOptions {
  /** Path shown to the model (and in the log). */
  file: string;
  source: string;
  task?: TaskSpec;
  llm?: Partial<LlmConfig>;
  log?: LlmLog;
  /** Static diagnostics already known for this source. */
  staticFindings?: StaticFinding[];
  /** What the probes measured replaying this source on real episodes of the task (warnings). */
  probeFindings?: StaticFinding[];
  signal?: AbortSignal;
}

const SEVERITIES: Record<string, FindingSeverity> = {
  error: 'error',
  warning: 'warning',
  warn: 'warning',
  information: 'information',
  info: 'information',
  note: 'information',
  hint: 'information',
};

function toLine(value: unknown): number | undefined {
  const n = typeof value === 'string' ? Number.parseInt(value, 10) : value;
  return typeof n === 'number' && Number.isFinite(n) ? Math.floor(n) : undefined;
}

/** Validates (and where possible repairs) a critic answer for a source of `lineCount` lines. */
export function parseCritique(text: string, lineCount: number): Validation<Omit<CritiqueResult, 'model'>> {
  const json = extractJsonObject(text);
  if (!json.ok) return json;
  const o = json.value;
  let success: boolean;
  if (typeof o.success === 'boolean') success = o.success;
  else if (o.success === 'true' || o.success === 'false') success = o.success === 'true';
  else return { ok: false, problem: '"success" must be true or false' };
  const reasoning = typeof o.reasoning === 'string' ? o.reasoning : '';
  let critique = typeof o.critique === 'string' && o.critique.trim() !== '' ? o.critique : null;
  if (o.findings !== undefined && o.findings !== null && !Array.isArray(o.findings)) return { ok: false, problem: '"findings" must be a list' };
  const findings: CritiqueFinding[] = [];
  for (const raw of (o.findings as unknown[] | undefined) ?? []) {
    if (!raw || typeof raw !== 'object') continue;
    const f = raw as Record<string, unknown>;
    const line = toLine(f.line);
    const message = typeof f.message === 'string' ? f.message.trim() : '';
    if (line === undefined || message === '') continue; // an unanchored or empty finding shows nothing useful
    const clamp = (l: number) => Math.min(Math.max(l, 1), Math.max(lineCount, 1));
    const finding: CritiqueFinding = {
      line: clamp(line),
      severity: SEVERITIES[String(f.severity ?? '').toLowerCase()] ?? (success ? 'information' : 'warning'),
      message,
    };
    const end = toLine(f.end_line ?? f.endLine);
    if (end !== undefined && clamp(end) > finding.line) finding.endLine = clamp(end);
    findings.push(finding);
  }
  if (!success && critique === null) {
    // A failing verdict must say what to fix; the findings or the reasoning say it when critique is missing.
    critique = findings.length > 0 ? findings.map((f) => `line ${f.line}: ${f.message}`).join('\n') : reasoning.trim() || null;
    if (critique === null) return { ok: false, problem: '"success" is false but neither "critique" nor "findings" says what is wrong' };
  }
  if (success) critique = null;
  return { ok: true, value: { reasoning, success, critique, findings } };
}

/** Probe findings as the critic and the designer read them: measured, with their evidence. */
export function probeFindingsText(findings: StaticFinding[]): string {
  if (findings.length === 0) return '';
  return `\nReplayed on real episodes of the task (the probes: successes and failure modes from the simulator), the reward showed these; each was measured, not guessed, so weigh them:\n${findings.map((d) => `- line ${d.line} (${d.severity}): ${d.message}`).join('\n')}\n`;
}

export function critiquePrompt(opts: Pick<CritiqueOptions, 'file' | 'source' | 'task' | 'staticFindings' | 'probeFindings'>) {
  const statics = opts.staticFindings ?? [];
  return [
    { role: 'system' as const, content: renderTemplate('critic-system', {}) },
    {
      role: 'user' as const,
      content: renderTemplate('critic', {
        context: contextText(opts.task, opts.source, languageOf(opts.file)),
        file: opts.file,
        reward_code_numbered: numberedSource(opts.source),
        static_findings:
          (statics.length === 0
            ? ''
            : `\nThe static checker already reports these (no need to repeat them):\n${statics.map((d) => `- line ${d.line} (${d.severity}): ${d.message}`).join('\n')}\n`) +
          probeFindingsText(opts.probeFindings ?? []),
      }),
    },
  ];
}

/** Asks the critic to review a reward file. Throws LlmNotConfiguredError or LlmError (after retries). */
export async function critiqueReward(opts: CritiqueOptions): Promise<CritiqueResult> {
  const lineCount = opts.source.replace(/\r\n?/g, '\n').split('\n').length;
  const answer = await chatValidated(critiquePrompt(opts), (text) => parseCritique(text, lineCount), {
    role: 'critic',
    llm: opts.llm,
    log: opts.log,
    signal: opts.signal,
  });
  return { ...answer.value, model: answer.model };
}
