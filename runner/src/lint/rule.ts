// What a lint rule is. Each rule lives in its own file under rules/ (ESLint style): its meta (id, severity,
// one-line description, docs), its messages, and the check with its fixes side by side; rules.ts lists them.
import type ts from 'typescript';
import type { LintContext } from './context';
import type { PythonLintContext } from './python';

export type Severity = 'error' | 'warning' | 'information' | 'hint';

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface TextEdit {
  range: LspRange;
  newText: string;
}

export interface Fix {
  title: string;
  edits: TextEdit[];
  /** The fix an editor may apply with "fix all" / the one offered first. */
  preferred?: boolean;
}

export interface RewardDiagnostic {
  range: LspRange;
  severity: Severity;
  /** Rule id (`unknown-name`, …) or `ts<code>` for TypeScript's own errors. */
  code: string;
  message: string;
  /** `rewardsmith-probe` for what the probes found by running the reward, `rewardsmith` for the rest. */
  source: 'rewardsmith' | 'rewardsmith-probe';
  fixes: Fix[];
  /** For a probe finding: the probe episode that shows it, 1-based (`rewardsmith playback FILE --probe N` plays it). */
  probeEpisode?: number;
}

export interface RuleMeta<Id extends string = string> {
  /** The diagnostic's `code`; the fixture corpus annotates defects with it (`// expect: <id>`). */
  id: Id;
  severity: Severity;
  /** What it catches, in one line. */
  description: string;
  /** Why it matters at run time and how to fix it (for a rules list or a hover). */
  docs: string;
  /** Whether its diagnostics (usually) come with quick fixes. */
  fixable: boolean;
}

/**
 * A rule: on TypeScript files `node` is called for every node of the file in document order (one shared
 * walk), `end` once after the walk, in registry order; on Python files `python` is called once with the
 * file's tree (python.ts). The hooks a rule has say which languages it serves. Report through
 * `ctx.report(rule.meta, …)`.
 */
export interface LintRule<Id extends string = string> {
  meta: RuleMeta<Id>;
  node?(node: ts.Node, ctx: LintContext): void;
  end?(ctx: LintContext): void;
  python?(ctx: PythonLintContext): void;
}

/** The languages a rule serves (from its hooks). */
export function ruleLanguages(rule: LintRule): ('typescript' | 'python')[] {
  return [...(rule.node || rule.end ? (['typescript'] as const) : []), ...(rule.python ? (['python'] as const) : [])];
}

/** Keeps the rule's literal id in its type, so the registry derives `RuleId` from the rules themselves. */
export function defineRule<const Id extends string>(rule: LintRule<Id>): LintRule<Id> {
  return rule;
}
