// The reward designer (LLM) and the review pipeline every candidate goes through before any training:
// static checks first (the language server's linter plus the runtime's contract check; a file with errors goes
// back to the designer with the diagnostics and is never trained), then the LLM critic, up to 3 rounds, told what
// the probes measured (their warnings: the reward replayed on the task's probe bank), which also go back to the
// designer with the critique.
import path from 'node:path';
import { makeFolder, writeAtomic } from '../files';
import { lintText } from '../lint/rules';
import { probeDiagnostic } from '../lint/check';
import { probeReward } from '../probe/index';
import { compileRewardFile, RewardError } from '../reward/compile';
import { taskFromHeader, withTaskHeader, type TaskSpec } from '../tasks';
import { chatValidated, type ChatMessage, type LlmConfig, type LlmLog, type Validation } from './client';
import { critiqueReward, probeFindingsText, type CritiqueResult } from './critic';
import { contextText, renderTemplate, type RewardLanguage } from './prompts';
import { compilePythonReward, isPythonFile, loadPythonParser } from '../reward/python-syntax';

/** What the designer is asked to do: the paper's prompt variants, plus fixing static-check errors. */
export type DesignRequest =
  | { kind: 'initial' }
  | { kind: 'update'; previous: string; statistics: string; analysis: string; suggestions: string }
  | { kind: 'fix-critique'; previous: string; critique: string }
  | { kind: 'fix-lint'; previous: string; diagnostics: string }
  | { kind: 'fix-error'; previous: string; error: string };

const FENCES: Record<RewardLanguage, { fence: string; name: string; extension: string }> = {
  typescript: { fence: 'ts', name: 'TypeScript', extension: 'ts' },
  python: { fence: 'python', name: "Python 3 (the paper's format)", extension: 'py' },
};

export function designerPrompt(task: TaskSpec, request: DesignRequest, language: RewardLanguage = 'typescript'): ChatMessage[] {
  const context = contextText(task, undefined, language);
  let user: string;
  switch (request.kind) {
    case 'initial':
      user = renderTemplate('designer-initial', { context });
      break;
    case 'update':
      user = renderTemplate('designer-update', {
        context,
        reward_code: request.previous.trimEnd(),
        statistics: request.statistics,
        analysis: request.analysis,
        suggestions: request.suggestions,
      });
      break;
    case 'fix-critique':
      user = renderTemplate('designer-fix-critique', { context, reward_code: request.previous.trimEnd(), critique: request.critique });
      break;
    case 'fix-lint':
      user = renderTemplate('designer-fix-lint', { context, reward_code: request.previous.trimEnd(), diagnostics: request.diagnostics });
      break;
    case 'fix-error':
      user = renderTemplate('designer-fix-error', { context, reward_code: request.previous.trimEnd(), error: request.error });
      break;
  }
  return [
    { role: 'system', content: renderTemplate('designer-system', { fence: FENCES[language].fence, language: FENCES[language].name }) },
    { role: 'user', content: user },
  ];
}

/**
 * The one fenced code block of a designer answer, with a `// task: <id>` header line ensured (the editor and
 * CLI find the task by it). Zero blocks, several blocks or an empty block are rejected with the reason.
 */
export function extractRewardCode(text: string, task: TaskSpec, language: RewardLanguage = 'typescript'): Validation<string> {
  const fence = '```' + FENCES[language].fence;
  const blocks = [...text.matchAll(/```[\w+-]*[^\S\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  if (blocks.length === 0) return { ok: false, problem: `the answer has no fenced code block; put the whole reward file in one ${fence} block` };
  if (blocks.length > 1) return { ok: false, problem: `the answer has ${blocks.length} code blocks; put the whole reward file in exactly one ${fence} block` };
  let code = blocks[0]!.replace(/\r\n?/g, '\n').trimEnd();
  if (!/\S/.test(code)) return { ok: false, problem: 'the code block is empty' };
  // The header names the task the file is for; the designer may omit it or copy another task's.
  if (taskFromHeader(code) !== task.id) code = withTaskHeader(code, task.id, language === 'python' ? '#' : '//');
  return { ok: true, value: code + '\n' };
}

export interface DesignOptions {
  task: TaskSpec;
  request: DesignRequest;
  llm?: Partial<LlmConfig>;
  log?: LlmLog;
  signal?: AbortSignal;
  /** The language the designer writes (default TypeScript). */
  language?: RewardLanguage;
}

/** One designer call: returns the whole reward file. Throws LlmNotConfiguredError / LlmError. */
export async function designReward(opts: DesignOptions): Promise<{ source: string; model: string }> {
  const language = opts.language ?? 'typescript';
  const answer = await chatValidated(designerPrompt(opts.task, opts.request, language), (text) => extractRewardCode(text, opts.task, language), {
    role: 'designer',
    llm: opts.llm,
    log: opts.log,
    signal: opts.signal,
  });
  return { source: answer.value, model: answer.model };
}

/** A static-check problem, 1-based. */
export interface StaticDiagnostic {
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'information' | 'hint';
  code: string;
  message: string;
}

/**
 * The checks a candidate must pass before training: the linter's diagnostics and, when it reports no error,
 * the runtime's compile + contract check (exports, parameter order), so lint-clean means trainable.
 */
export function staticCheck(file: string, source: string): StaticDiagnostic[] {
  const diagnostics: StaticDiagnostic[] = lintText(file, source).map((d) => ({
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: d.severity,
    code: d.code,
    message: d.message,
  }));
  if (diagnostics.some((d) => d.severity === 'error')) return diagnostics;
  try {
    if (isPythonFile(file)) compilePythonReward(file, source);
    else compileRewardFile(file, source);
  } catch (err) {
    if (!(err instanceof RewardError)) throw err;
    diagnostics.push({ line: err.line, column: err.column, severity: 'error', code: `reward-${err.kind}`, message: err.detail });
  }
  return diagnostics;
}

/**
 * The probes' warnings for a draft that passed the static checks (the reward replayed on the task's probe bank):
 * they go to the critic and, with its critique, back to the designer. The probes' errors are the loop's screen's:
 * a reward that fails on a probe goes back to the designer as a run-time error would (screen.ts), not trained.
 */
async function probeWarnings(file: string, source: string, task: TaskSpec): Promise<StaticDiagnostic[]> {
  const { findings } = await probeReward(file, task, { source });
  return findings
    .filter((f) => f.severity === 'warning')
    .map(probeDiagnostic)
    .map((d) => ({ line: d.range.start.line + 1, column: d.range.start.character + 1, severity: d.severity, code: d.code, message: d.message }));
}

export function diagnosticsText(diagnostics: StaticDiagnostic[]): string {
  return diagnostics.map((d) => `- line ${d.line}, column ${d.column} (${d.severity}, ${d.code}): ${d.message}`).join('\n');
}

/** One step of the review pipeline, as kept in the experiment folder. */
export interface ReviewStep {
  draft: number;
  /** Why this draft was written ('given': the caller's file, not the designer's). */
  request: DesignRequest['kind'] | 'given';
  file: string;
  errors: StaticDiagnostic[];
  warnings: StaticDiagnostic[];
  critique: CritiqueResult | null;
}

export interface ReviewedReward {
  /** The last lint-clean draft, or null when none passed the static checks. */
  source: string | null;
  /** The critic accepted it (false: critic rounds used up; it is still trainable). */
  criticPassed: boolean;
  steps: ReviewStep[];
  /** Why no trainable reward came out, when source is null. */
  failure: string | null;
}

export interface ReviewLimits {
  /** Designer ↔ critic rounds (the paper's 3). */
  criticRounds: number;
  /** Designer fixes of static errors per critic round. */
  lintFixes: number;
}

export const REVIEW_LIMITS: Readonly<ReviewLimits> = { criticRounds: 3, lintFixes: 3 };

export interface ReviewOptions extends Omit<DesignOptions, 'request'> {
  /** The first draft's request (initial, update, fix-error). */
  request: DesignRequest;
  /** Folder for the drafts (`draft-N.reward.ts`); created. */
  dir: string;
  /** A reward to review as the first draft instead of asking the designer for one (e.g. the user's file). */
  firstDraft?: string;
  limits?: Partial<ReviewLimits>;
}

/**
 * Design → static check (→ fix, up to limits.lintFixes) → critic (→ fix, up to limits.criticRounds). Every
 * draft is written to `dir` so the user can see each step. LLM failures propagate (LlmError).
 */
export async function designAndReview(opts: ReviewOptions): Promise<ReviewedReward> {
  const limits = { ...REVIEW_LIMITS, ...opts.limits };
  const extension = FENCES[opts.language ?? 'typescript'].extension;
  if (extension === 'py') await loadPythonParser();
  makeFolder(opts.dir);
  const steps: ReviewStep[] = [];
  // Each draft's text as written: the folder may be shared, so a draft is never read back from its file.
  const sources: string[] = [];
  let request = opts.request;
  let lintFixes = 0;
  let criticRounds = 0;
  let given = opts.firstDraft;
  for (;;) {
    const origin: ReviewStep['request'] = given !== undefined ? 'given' : request.kind;
    const source = given ?? (await designReward({ ...opts, request })).source;
    given = undefined;
    const draft = steps.length + 1;
    const file = path.join(opts.dir, `draft-${draft}.reward.${extension}`);
    writeAtomic(opts.dir, file, source);
    sources.push(source);
    const statics = staticCheck(file, source);
    const probed = statics.some((d) => d.severity === 'error') ? [] : await probeWarnings(file, source, opts.task);
    const diagnostics = [...statics, ...probed];
    const step: ReviewStep = {
      draft,
      request: origin,
      file: path.basename(file),
      errors: diagnostics.filter((d) => d.severity === 'error'),
      warnings: diagnostics.filter((d) => d.severity === 'warning'),
      critique: null,
    };
    steps.push(step);
    if (diagnostics.length > 0) writeAtomic(opts.dir, path.join(opts.dir, `draft-${draft}.lint.json`), JSON.stringify(diagnostics, null, 2) + '\n');
    if (step.errors.length > 0) {
      if (lintFixes >= limits.lintFixes) {
        // An earlier draft that passed the static checks is still trainable; otherwise nothing is.
        const lastClean = [...steps].reverse().find((s) => s.errors.length === 0);
        if (lastClean) return { source: sources[lastClean.draft - 1]!, criticPassed: false, steps, failure: null };
        return {
          source: null,
          criticPassed: false,
          steps,
          failure: `draft ${draft} still has static errors after ${lintFixes} fixes, so it is not trained:\n${diagnosticsText(step.errors)}`,
        };
      }
      lintFixes++;
      request = { kind: 'fix-lint', previous: source, diagnostics: diagnosticsText(step.errors) };
      continue;
    }
    lintFixes = 0;
    criticRounds++;
    step.critique = await critiqueReward({
      file,
      source,
      task: opts.task,
      llm: opts.llm,
      log: opts.log,
      signal: opts.signal,
      staticFindings: step.warnings.filter((w) => !isProbe(w)).map((w) => ({ line: w.line, severity: w.severity, message: w.message })),
      probeFindings: step.warnings.filter(isProbe).map((w) => ({ line: w.line, severity: w.severity, message: w.message })),
    });
    writeAtomic(opts.dir, path.join(opts.dir, `draft-${draft}.critique.json`), JSON.stringify(step.critique, null, 2) + '\n');
    if (step.critique.success) return { source, criticPassed: true, steps, failure: null };
    if (criticRounds >= limits.criticRounds) return { source, criticPassed: false, steps, failure: null };
    const findings = step.critique.findings.map((f) => `- line ${f.line}${f.endLine ? `-${f.endLine}` : ''} (${f.severity}): ${f.message}`).join('\n');
    // The probes' warnings go back with the critique: what the reward was measured to do.
    const measured = probeFindingsText(step.warnings.filter(isProbe)).trim();
    request = {
      kind: 'fix-critique',
      previous: source,
      critique: [step.critique.critique ?? step.critique.reasoning, findings, measured].filter(Boolean).join('\n\n'),
    };
  }
}

const isProbe = (d: StaticDiagnostic) => d.code.startsWith('probe-');

/**
 * Suggestion ids the designer says it applied (`// Applied suggestions: S1, P2`: S = the LLM analyzer's,
 * P = the programmatic analyzer's), or null when it did not say.
 */
export function appliedSuggestions(source: string): string[] | null {
  const m = /^\s*\/\/\s*Applied suggestions:\s*(.*)$/im.exec(source);
  if (!m) return null;
  return [...m[1]!.matchAll(/\b[SP]\d+\b/g)].map((x) => x[0]);
}
