// The lint rules' registry and runner: every rule of rules/ in the order it runs, their ids and metadata,
// and `lintSnapshot` / `lintText`, which the language server, `rewardsmith lint`, the designer's pre-check
// and the analyzer's patch check all call. Every schema fact comes from ../schema.ts; the rules only know
// how reward code goes wrong.
//
// To add a rule: write rules/<id>.ts (meta, messages, check and fixes side by side; see rule.ts), add it to
// RULES below, and give the fixture corpus (language-server/test/fixtures) a file that shows it with
// `// expect: <id>` on the defect's line, plus clean files it must stay quiet on.
import ts from 'typescript';
import { loadSchema, type ObservationSchema } from '../schema';
import { RewardProject, type Snapshot } from './analysis';
import { LintContext, type DictKeys, type Field } from './context';
import type { LintRule, RewardDiagnostic, RuleMeta } from './rule';
import { constantCondition } from './rules/constant-condition';
import { globalDataUninitialised } from './rules/global-data-uninitialised';
import { indexOutOfRange } from './rules/index-out-of-range';
import { nearestEntryUnchecked } from './rules/nearest-entry-unchecked';
import { negativeIndex } from './rules/negative-index';
import { pythonIsm } from './rules/python-ism';
import { rewardContract } from './rules/reward-contract';
import { scaleSwapped } from './rules/scale-swapped';
import { scaleUnscaled } from './rules/scale-unscaled';
import { swappedArguments } from './rules/swapped-arguments';
import { typescriptErrors } from './rules/typescript';
import { undefinedReturn } from './rules/undefined-return';
import { unknownName } from './rules/unknown-name';
import { wrongKindName } from './rules/wrong-kind-name';
import { attackParameters } from './rules/attack-parameters';
import { firstStepIndex } from './rules/first-step-index';
import { inventoryBlockDrop } from './rules/inventory-block-drop';
import { memoryWriteThenCompare } from './rules/memory-write-then-compare';
import { rewardReturn } from './rules/reward-return';
import { unitMismatch } from './rules/unit-mismatch';
import { unreachableCode } from './rules/unreachable-code';
import { keyError } from './rules/key-error';
import { pythonSyntax } from './rules/python-syntax';
import { sandboxRefused } from './rules/sandbox-refused';
import { undefinedName } from './rules/undefined-name';
import { isPythonFile } from '../reward/python-syntax';
import { lintPythonText } from './python';

export type { Fix, LspRange, RewardDiagnostic, RuleMeta, Severity, TextEdit } from './rule';
export { ruleLanguages } from './rule';
export { isPythonFile, loadPythonParser, pythonParserReady } from '../reward/python-syntax';
export type { DictKeys, Field } from './context';

/** Every rule, in the order their hooks run. TypeScript's own errors come last: they are dropped where a
 * rule already explains the spot. Rules with a `python` hook serve Python files (python.ts). */
export const RULES = [
  pythonSyntax,
  sandboxRefused,
  undefinedName,
  keyError,
  unknownName,
  wrongKindName,
  inventoryBlockDrop,
  nearestEntryUnchecked,
  firstStepIndex,
  negativeIndex,
  indexOutOfRange,
  unitMismatch,
  constantCondition,
  memoryWriteThenCompare,
  pythonIsm,
  swappedArguments,
  globalDataUninitialised,
  undefinedReturn,
  unreachableCode,
  rewardReturn,
  attackParameters,
  scaleSwapped,
  scaleUnscaled,
  rewardContract,
  typescriptErrors,
] as const satisfies readonly LintRule[];

/** The id of a schema rule: a diagnostic's `code` (TypeScript's own errors have `ts<number>` instead). */
export type RuleId = Exclude<(typeof RULES)[number]['meta']['id'], 'typescript'>;

const META = new Map<string, RuleMeta>(RULES.map((r) => [r.meta.id, r.meta]));

/** A rule's metadata by id (undefined for `ts<code>` and unknown ids). */
export function ruleMeta(id: string): RuleMeta | undefined {
  return id === typescriptErrors.meta.id ? undefined : META.get(id);
}

/** The one diagnostic of a file the checker cannot analyse, at `offset` of its text. */
export function unanalysableDiagnostic(text: string, offset: number, message: string): RewardDiagnostic {
  const lines = text.slice(0, offset).split('\n');
  const position = { line: lines.length - 1, character: lines[lines.length - 1]!.length };
  return {
    range: { start: position, end: { line: position.line, character: position.character + 1 } },
    severity: 'error',
    code: 'unanalysable',
    message,
    source: 'rewardsmith',
    fixes: [],
  };
}

export function lintSnapshot(snap: Snapshot, schema: ObservationSchema = loadSchema()): RewardDiagnostic[] {
  const deep = snap.project.unanalysable;
  if (deep) return [unanalysableDiagnostic(snap.project.userText, deep.offset, deep.message)];
  try {
    return lintChecked(snap, schema);
  } catch (err) {
    // A structure deep enough to overflow TypeScript's or a rule's recursion in some other way: one finding
    // for the file instead of a crash that would lose the other files' results.
    if (err instanceof RangeError) return [unanalysableDiagnostic(snap.project.userText, 0, `the file is nested too deeply to analyse (${err.message})`)];
    throw err;
  }
}

function lintChecked(snap: Snapshot, schema: ObservationSchema): RewardDiagnostic[] {
  const ctx = new LintContext(snap, schema);
  const visitors = RULES.filter((r): r is (typeof RULES)[number] & Required<Pick<LintRule, 'node'>> => 'node' in r && !!r.node);
  const visit = (node: ts.Node) => {
    for (const rule of visitors) rule.node(node, ctx);
    ts.forEachChild(node, visit);
  };
  visit(ctx.sf);
  for (const rule of RULES) if ('end' in rule && rule.end) rule.end(ctx);
  // On a line with `and`/`or`/`not` the parse is broken, so other findings there are noise.
  const out = ctx.out.filter((d) => d.code === pythonIsm.meta.id || !ctx.pythonOperatorLines.has(d.range.start.line));
  return out.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
}

/**
 * Lint one file's text headless (a fresh project; the language server keeps projects per open file). A
 * Python file (`*.py`) needs the Python parser loaded first (`await loadPythonParser()`).
 */
export function lintText(fileName: string, text: string): RewardDiagnostic[] {
  if (isPythonFile(fileName)) return lintPythonText(fileName, text, loadSchema(), RULES);
  let project: RewardProject;
  try {
    project = new RewardProject(fileName, text);
  } catch (err) {
    if (err instanceof RangeError) return [unanalysableDiagnostic(text, 0, `the file is nested too deeply to analyse (${err.message})`)];
    throw err;
  }
  try {
    return lintSnapshot(project.snapshot());
  } finally {
    project.dispose();
  }
}

/** Schema facts about one expression, for hover and completion. */
export function schemaFacts(snap: Snapshot, e: ts.Expression): { keys?: DictKeys; field?: Field } {
  const ctx = new LintContext(snap, loadSchema());
  return { keys: ctx.dictKeys(e), field: ctx.fieldOf(e) };
}
