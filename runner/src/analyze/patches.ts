// Concrete reward-file patches for the analyzer's findings: the writer of the request's kind (in the file of
// the finding that asks for it, under findings/; patch.ts says what they share) places its edits with the
// TypeScript AST, the edits are applied as text so the user's formatting and comments survive, and the result
// is checked: it must parse and must not add a single lint diagnostic. The output is a unified diff against
// the user's file. A Python reward gets the writer's `python` hook instead (python-patch.ts), checked the same way.
import path from 'node:path';
import ts from 'typescript';
import { unifiedDiff } from '../diff';
import { lintText } from '../lint/rules';
import { FINDINGS, type Finding } from './findings';
import { PatchUnavailable, RewardSource, type Edit, type PatchWriter } from './patch';
import { patchPythonReward, pythonDenseLines } from './python-patch';
import { isPythonFile, loadPythonParser } from '../reward/python-syntax';

export { PatchUnavailable };

/** What a finding asks a patch writer for: the request of one of the writers the findings register. */
export type PatchRequest = NonNullable<Finding['patch']>;

export interface RewardPatch {
  /** Unified diff against the original text (paths a/NAME, b/NAME). */
  diff: string;
  /** 1-based inclusive line range of the original text that the patch touches. */
  lines: [number, number];
  patched: string;
}

/** The writer of each request kind: several findings may ask for the same one, but a kind has one writer. */
const WRITERS = new Map<string, PatchWriter>();
for (const rule of FINDINGS) {
  const writer: PatchWriter | undefined = rule.patch;
  if (!writer) continue;
  if (WRITERS.has(writer.kind) && WRITERS.get(writer.kind) !== writer) throw new Error(`two patch writers for ${writer.kind} (${rule.meta.id} has its own)`);
  WRITERS.set(writer.kind, writer);
}

/** Readies the patch writers for `fileName`: a Python reward's need the Python parser, loaded once (asynchronously). */
export async function preparePatches(fileName: string): Promise<void> {
  if (isPythonFile(fileName)) await loadPythonParser();
}

/** Builds the edits for one request (every patch needs the dense term, so a file without one has no patches). */
function editsFor(src: RewardSource, req: PatchRequest): Edit[] {
  const term = src.denseTerm();
  const writer = WRITERS.get(req.kind);
  if (!writer) throw new PatchUnavailable(`no patch writer for ${req.kind}`);
  const edits: Edit[] = [];
  writer.write(src, term, req, edits);
  return edits;
}

/** One edit that inserts every new constant: after the file's last top-level constant, or before its first statement. */
function constantsEdit(src: RewardSource): Edit | undefined {
  if (src.constants.length === 0) return undefined;
  const { at, afterConstants } = src.topLevelConstantsAnchor();
  const text = src.constants.map((l) => l + src.eol).join('') + (afterConstants ? '' : src.eol);
  return { start: at, end: at, text };
}

function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

// The original file is linted once for all the patches of one analysis.
let lastLint: { fileName: string; text: string; counts: Map<string, number> } | undefined;

/** Lint diagnostics as comparable keys (code + message, without positions, which the patch shifts). */
function lintKeys(fileName: string, text: string, original: boolean): Map<string, number> {
  if (original && lastLint && lastLint.fileName === fileName && lastLint.text === text) return lastLint.counts;
  const counts = new Map<string, number>();
  for (const d of lintText(fileName, text)) {
    if (d.severity !== 'error' && d.severity !== 'warning') continue;
    const key = `${d.severity} ${d.code}: ${d.message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (original) lastLint = { fileName, text, counts };
  return counts;
}

/** Refuses a patch that adds a lint error or warning the original file did not have (positions aside). */
function refuseAddedLint(fileName: string, text: string, patched: string): void {
  const before = lintKeys(fileName, text, true);
  const after = lintKeys(fileName, patched, false);
  const added = [...after].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k]) => k);
  if (added.length > 0) throw new PatchUnavailable(`the patch would add lint diagnostics: ${added.join('; ')}`);
}

/** Syntax errors the parser recorded (the compiler keeps them on the source file; there is no public getter). */
function parseErrorsOf(sf: ts.SourceFile): ts.DiagnosticWithLocation[] {
  return (sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

/**
 * The patch for `req` on a reward file's text. Throws PatchUnavailable when the file has no place for it or
 * when the patched file would not parse or would add a lint error or warning.
 */
export function patchReward(fileName: string, text: string, req: PatchRequest): RewardPatch {
  if (isPythonFile(fileName)) {
    const python = WRITERS.get(req.kind)?.python;
    if (!python)
      throw new PatchUnavailable(`the ${req.kind} patch is written for TypeScript rewards only so far; apply the suggestion to the Python file by hand`);
    return patchPythonReward(fileName, text, req, python, refuseAddedLint);
  }
  const src = new RewardSource(fileName, text);
  const broken = parseErrorsOf(src.sf)[0];
  if (broken) {
    const { line, character } = src.sf.getLineAndCharacterOfPosition(broken.start ?? 0);
    throw new PatchUnavailable(
      `the reward file does not parse (line ${line + 1}, column ${character + 1}: ${ts.flattenDiagnosticMessageText(broken.messageText, ' ')}); fix that first`,
    );
  }
  const edits = editsFor(src, req);
  const constants = constantsEdit(src);
  if (constants) edits.push(constants);
  const patched = applyEdits(text, edits);
  const parseErrors = parseErrorsOf(ts.createSourceFile(fileName, patched, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS));
  if (parseErrors.length > 0)
    throw new PatchUnavailable(`internal error: the patched file does not parse (${ts.flattenDiagnosticMessageText(parseErrors[0]!.messageText, ' ')})`);
  refuseAddedLint(fileName, text, patched);
  const name = path.basename(fileName);
  const diff = unifiedDiff(text, patched, name);
  return { diff: diff.text, lines: diff.oldRange, patched };
}

/** 1-based line range of the dense term (the function, or the reward function holding a dense variable), for anchoring advice. */
export function denseLines(fileName: string, text: string): [number, number] | undefined {
  if (isPythonFile(fileName)) return pythonDenseLines(text);
  try {
    const src = new RewardSource(fileName, text);
    const term = src.denseTerm();
    const node = term.kind === 'function' ? term.fn : term.before;
    return [src.line(node.getStart(src.sf)) + 1, src.line(node.end) + 1];
  } catch (err) {
    if (err instanceof PatchUnavailable) return undefined;
    throw err;
  }
}
