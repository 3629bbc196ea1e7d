// What the analyzer's patch writers share for Python rewards (`*.reward.py`), as patch.ts does for TypeScript:
// a writer's `python` hook places the same request with the tree-sitter-python tree: the dense term found by
// name or through the scale rule's `np.sign(D) * 0.1`, parameters resolved through the enclosing functions (as
// Python's closures do), new tunables as top-level constants, names that never collide with the file's own.
// Python idiom throughout: `.get(…) is not None`, `GLOBAL_DATA["key"]`, a `set()` of visited cells, no import
// needed (`//` floors, `** 0.5` is the square root). `patchPythonReward` applies the edits and checks the result:
// it must parse, keep the contract and add no lint diagnostic (patches.ts runs it for a .py file).
import path from 'node:path';
import { unifiedDiff } from '../diff';
import { compilePythonReward, firstSyntaxError, parsePython, parameterList, walk, type PythonNode } from '../reward/python-syntax';
import { RewardError } from '../reward/compile';
import { parameterNames, SCALE_RULE, type ParameterName } from '../schema';
import { freshName, leadingNotes, PatchUnavailable, quotedIn, sourceLayout, type Edit, type IfShape, type PatchRequestBase } from './patch';

/** Where the dense signal is computed: a function whose return value is the dense term, or a variable set before the return. */
export type PythonDenseTerm = { kind: 'function'; def: PythonNode; topLevel: boolean } | { kind: 'variable'; name: string; before: PythonNode };

export const NEAREST_DICTS = new Set(['current_nearest_blocks', 'previous_nearest_blocks']);

/** The nodes of `root` that belong to it, not to a function nested in it, in document order. */
export function* ownNodes(root: PythonNode): Generator<PythonNode> {
  const stack: PythonNode[] = [...root.children].filter((c): c is PythonNode => !!c).reverse();
  while (stack.length) {
    const n = stack.pop()!;
    yield n;
    if (n.type === 'function_definition' || n.type === 'lambda') continue;
    for (let i = n.childCount - 1; i >= 0; i--) stack.push(n.child(i)!);
  }
}

export class PythonSource {
  readonly root: PythonNode;
  private readonly names = new Set<string>();
  private readonly lineStarts: number[] = [0];
  readonly indentUnit: string;
  readonly eol: string;
  /** Top-level constant lines the patch adds, and top-level helper functions (each a list of lines). */
  readonly constants: string[] = [];
  readonly helpers: string[][] = [];

  constructor(
    readonly fileName: string,
    readonly text: string,
    tree: { rootNode: PythonNode },
  ) {
    this.root = tree.rootNode;
    for (const n of walk(this.root)) {
      if (n.type === 'identifier') this.names.add(n.text);
      if (n.type === 'string_content') this.names.add(n.text);
    }
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.lineStarts.push(i + 1);
    ({ indentUnit: this.indentUnit, eol: this.eol } = sourceLayout(text, '    '));
  }

  /** A string literal in the file's quote style (double quotes unless the file prefers single ones). */
  quote(value: string): string {
    return quotedIn(this.text, value, 'double');
  }

  /** A name (or GLOBAL_DATA key) not used anywhere in the file. */
  fresh(base: string): string {
    return freshName(base, this.names);
  }

  lineStart(row: number): number {
    return this.lineStarts[row] ?? this.text.length;
  }

  indentOf(row: number): string {
    return /^[ \t]*/.exec(this.text.slice(this.lineStart(row)))![0];
  }

  /** Lines (a leading `\t` per extra level) as text at `indent`, each ending the line. */
  block(indent: string, lines: string[]): string {
    return lines.map((l) => indent + l.replace(/^\t+/, (t) => this.indentUnit.repeat(t.length)) + this.eol).join('');
  }

  functionNamed(name: string): PythonNode | undefined {
    for (const n of walk(this.root)) if (n.type === 'function_definition' && n.childForFieldName('name')?.text === name) return n;
    return undefined;
  }

  /** The dense term, by name (a `dense` function) or through the scale rule's `np.sign(X) * 0.1` in reward_function's return. */
  denseTerm(): PythonDenseTerm {
    const term = (def: PythonNode): PythonDenseTerm => ({ kind: 'function', def, topLevel: def.parent?.type === 'module' });
    const byName = this.functionNamed('dense');
    if (byName) return term(byName);
    const rewardFn = this.functionNamed('reward_function');
    if (!rewardFn) throw new PatchUnavailable('the file has neither a `dense` function nor a `reward_function`');
    const body = rewardFn.childForFieldName('body')!;
    for (const ret of ownNodes(body)) {
      if (ret.type !== 'return_statement') continue;
      const operand = ret.namedChildren[0] && denseOperand(ret.namedChildren[0]);
      if (!operand) continue;
      const called = calledFunction(operand);
      const fn = called && this.functionNamed(called);
      if (fn) return term(fn);
      if (operand.type === 'identifier') {
        const assigned = assignmentOf(body, operand.text);
        const viaCall = assigned && calledFunction(assigned);
        const helper = viaCall && this.functionNamed(viaCall);
        if (helper) return term(helper);
        if (assigned) return { kind: 'variable', name: operand.text, before: ret };
      }
    }
    throw new PatchUnavailable(`no dense term found: no \`dense\` function and no \`np.sign(…) * ${SCALE_RULE.denseWeight}\` in reward_function's return`);
  }

  /** Where new top-level constants go: after the last top-level `NAME = literal`, else before the first statement after the imports. */
  topLevelAnchor(): { at: number; afterConstants: boolean } {
    let lastConstant: PythonNode | undefined;
    let first: PythonNode | undefined;
    for (const s of this.root.namedChildren) {
      if (!s || s.type === 'comment') continue;
      const assignment = s.type === 'expression_statement' ? s.namedChildren[0] : undefined;
      const value = assignment?.type === 'assignment' ? assignment.childForFieldName('right') : undefined;
      if (assignment?.childForFieldName('left')?.type === 'identifier' && value && ['integer', 'float', 'string', 'list', 'tuple'].includes(value.type))
        lastConstant = s;
      const isImport = s.type === 'import_statement' || s.type === 'import_from_statement' || s.type === 'future_import_statement';
      const isDocstring = s.type === 'expression_statement' && s.namedChildren[0]?.type === 'string';
      if (!first && !isImport && !isDocstring) first = s;
    }
    if (lastConstant) return { at: this.lineStart(lastConstant.endPosition.row + 1), afterConstants: true };
    if (!first) throw new PatchUnavailable('the file has no statements');
    return { at: this.lineStart(first.startPosition.row), afterConstants: false };
  }
}

/** `np.sign(S) * 1 + np.sign(D) * 0.1` (either operand order, `numpy.sign` or `sign` too): the D. */
function denseOperand(e: PythonNode): PythonNode | undefined {
  const strip = (x: PythonNode): PythonNode => (x.type === 'parenthesized_expression' && x.namedChildren[0] ? strip(x.namedChildren[0]) : x);
  e = strip(e);
  if (e.type !== 'binary_operator') return undefined;
  const op = e.childForFieldName('operator')?.type;
  const [l, r] = [e.childForFieldName('left'), e.childForFieldName('right')];
  if (!l || !r) return undefined;
  if (op === '+') return denseOperand(l) ?? denseOperand(r);
  if (op !== '*') return undefined;
  const weight = (x: PythonNode) => ['integer', 'float'].includes(strip(x).type) && Number(strip(x).text) === SCALE_RULE.denseWeight;
  const sign = (x: PythonNode) => {
    x = strip(x);
    const fn = x.type === 'call' ? x.childForFieldName('function')?.text : undefined;
    const args = x.childForFieldName('arguments')?.namedChildren ?? [];
    return fn && /^((np|numpy)\.)?sign$/.test(fn) && args.length === 1 && args[0] ? strip(args[0]) : undefined;
  };
  if (weight(r)) return sign(l);
  if (weight(l)) return sign(r);
  return undefined;
}

/** A number literal that is positive (`1`, `0.5`; not `-1`, not a name). */
function positiveNumber(n: PythonNode | null | undefined): boolean {
  return !!n && (n.type === 'integer' || n.type === 'float') && Number(n.text.replace(/_/g, '')) > 0;
}

/** Does `node` pay something positive: a `return <positive number>`, or `x = <positive>` / `x += <positive>`? */
export function paysPositive(node: PythonNode): boolean {
  for (const n of ownNodes(node)) {
    if (n.type === 'return_statement' && positiveNumber(n.namedChildren[0])) return true;
    if ((n.type === 'assignment' || n.type === 'augmented_assignment') && positiveNumber(n.childForFieldName('right'))) {
      if (n.type === 'assignment' || n.childForFieldName('operator')?.type === '+=') return true;
    }
  }
  return false;
}

/** The lines of a block (an if's consequence) relative to its own indentation, for re-placing them elsewhere. */
export function blockLines(src: PythonSource, block: PythonNode): string[] {
  const [first, ...rest] = block.text.split(/\r?\n/);
  const base = block.startPosition.column;
  const ownLine = src.indentOf(block.startPosition.row).length === base;
  return [first!, ...rest.map((l) => (ownLine ? l.slice(Math.min(base, /^[ \t]*/.exec(l)![0].length)) : l.trimStart()))];
}

/** `f(…)` → "f". */
function calledFunction(e: PythonNode): string | undefined {
  const fn = e.type === 'call' ? e.childForFieldName('function') : undefined;
  return fn?.type === 'identifier' ? fn.text : undefined;
}

/** The value last assigned to `name` by a plain `name = value` in `body` (not in a nested function). */
function assignmentOf(body: PythonNode, name: string): PythonNode | undefined {
  let value: PythonNode | undefined;
  for (const n of ownNodes(body))
    if (n.type === 'assignment' && n.childForFieldName('left')?.text === name && n.childForFieldName('left')?.type === 'identifier')
      value = n.childForFieldName('right') ?? undefined;
  return value;
}

/** Does `name` resolve to a parameter at `node`: of its function or of an enclosing one (a closure reads it)? */
export function parameterInScope(node: PythonNode, name: string): boolean {
  for (let n: PythonNode | null = node; n; n = n.parent) if (n.type === 'function_definition' && parameterList(n).some((p) => p.name === name)) return true;
  return false;
}

/**
 * Makes the schema parameters `needed` usable in the dense term: in scope already, or, for a top-level `dense`
 * (which the runtime calls with the parameters in contract order), by extending its parameter list.
 */
export function ensureParameters(term: PythonDenseTerm, needed: ParameterName[], edits: Edit[]): void {
  const at = term.kind === 'function' ? term.def : term.before;
  const missing = needed.filter((p) => !parameterInScope(at, p));
  if (missing.length === 0) return;
  if (term.kind !== 'function' || !term.topLevel)
    throw new PatchUnavailable(`the dense term cannot see ${missing.join(', ')} (not a parameter of it or of an enclosing function)`);
  const order = parameterNames(true);
  const present = parameterList(term.def).map((p) => p.name);
  if (present.some((p, i) => p !== order[i]))
    throw new PatchUnavailable(`the dense function's parameters are not the contract's prefix (${order.join(', ')}), so ${missing.join(', ')} cannot be added`);
  const added = order.slice(present.length, Math.max(...needed.map((p) => order.indexOf(p))) + 1);
  const params = term.def.childForFieldName('parameters')!;
  const last = params.namedChildren.filter((c) => c && c.type !== 'comment').pop();
  const pos = last ? last.endIndex : params.startIndex + 1;
  edits.push({ start: pos, end: pos, text: (last ? ', ' : '') + added.join(', ') });
}

export function addConstant(src: PythonSource, base: string, value: number, comment: string): string {
  const name = src.fresh(base);
  src.constants.push(`${name} = ${value}  # ${comment}`);
  return name;
}

/** One edit with the new top-level constants and helper functions. */
function topLevelEdit(src: PythonSource): Edit | undefined {
  if (src.constants.length === 0 && src.helpers.length === 0) return undefined;
  const { at, afterConstants } = src.topLevelAnchor();
  const eol = src.eol;
  // Two blank lines before each helper, and before the code that follows when nothing separated it already.
  let text = src.constants.map((l) => l + eol).join('');
  for (const helper of src.helpers) text += eol + eol + helper.map((l) => l + eol).join('');
  if (!afterConstants) text += eol + eol;
  return { start: at, end: at, text };
}

/** Inserts `lines` as the first statements of the dense function (after a docstring), or before the return for a variable. */
export function insertAtTop(src: PythonSource, term: PythonDenseTerm, lines: string[], edits: Edit[]): void {
  let row: number;
  if (term.kind === 'function') {
    const body = term.def.childForFieldName('body');
    const statements = body?.namedChildren.filter((c): c is PythonNode => !!c) ?? [];
    const first = statements[0];
    if (!first || first.startPosition.row === term.def.startPosition.row)
      throw new PatchUnavailable('the dense function is written on one line; cannot place statements in it');
    // Right below the header (above any comment that opens the body, which belongs to the code below it), or below a docstring.
    const docstring = first.type === 'expression_statement' && first.namedChildren[0]?.type === 'string';
    const colon = term.def.children.find((c) => c?.type === ':');
    row = docstring ? first.endPosition.row + 1 : colon ? colon.endPosition.row + 1 : first.startPosition.row;
    // Below the notes that open the body (patch.ts, isNote).
    const own = statements.slice(docstring ? 1 : 0).filter((s) => s.type !== 'comment');
    const lastNote = own[leadingNotes(own, ifShape) - 1];
    if (lastNote) row = lastNote.endPosition.row + 1;
    const indent = src.indentOf(first.startPosition.row);
    edits.push({ start: src.lineStart(row), end: src.lineStart(row), text: src.block(indent, lines) });
  } else {
    row = term.before.startPosition.row;
    edits.push({ start: src.lineStart(row), end: src.lineStart(row), text: src.block(src.indentOf(row), lines) });
  }
}

/** A Python statement as the note rule reads it (patch.ts, IfShape): an `if` and its branch's statements, comments aside. */
function ifShape(s: PythonNode): IfShape | undefined {
  if (s.type !== 'if_statement') return undefined;
  const branch = s.childForFieldName('consequence')?.namedChildren.filter((c): c is PythonNode => !!c && c.type !== 'comment') ?? [];
  return {
    hasElse: !!s.childForFieldName('alternative'),
    branch: branch.map((b) => {
      const assignment = b.type === 'expression_statement' ? b.namedChildren[0] : undefined;
      const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
      const object = left?.type === 'subscript' ? left.childForFieldName('value')?.text : undefined;
      return object === undefined ? undefined : { object, setsTrue: assignment!.childForFieldName('right')?.type === 'true' };
    }),
  };
}

/** `return V` in a dense function, `name = V` for a dense variable. */
export function yieldDense(term: PythonDenseTerm, value: number): string {
  return term.kind === 'function' ? `return ${value}` : `${term.name} = ${value}`;
}

/** The statements that keep a set of visited cells in GLOBAL_DATA and test the current one; `then` runs on a new cell. */
export function cellBonusLines(src: PythonSource, cellSize: string, then: string[]): string[] {
  const key = src.quote(src.fresh('visited_cells'));
  const [position, cell] = ['position_now', 'cell_key'].map((n) => src.fresh(n));
  return [
    `if ${key} not in GLOBAL_DATA:`,
    `\tGLOBAL_DATA[${key}] = set()`,
    `${position} = past_agent_positions[-1]`,
    `${cell} = (${position}[0] // ${cellSize}, ${position}[2] // ${cellSize})`,
    `if ${cell} not in GLOBAL_DATA[${key}]:`,
    `\tGLOBAL_DATA[${key}].add(${cell})`,
    ...then.map((l) => `\t${l}`),
  ];
}

/** A top-level helper `nearest_target(current_nearest_blocks)`: the nearest visible entry of any of `targets` (reused when a patch added it). */
export function nearestTargetHelper(src: PythonSource, targets: string[]): string {
  for (const def of src.root.namedChildren) {
    const name = def?.type === 'function_definition' ? def.childForFieldName('name')?.text : undefined;
    if (!def || !name || !/^nearest_target(_\d+)?$/.test(name)) continue;
    const list = /for \w+ in (\w+):/.exec(def.text)?.[1];
    const listed = list && new RegExp(`^${list} = \\[(.*)\\]`, 'm').exec(src.text)?.[1];
    if (listed && targets.every((t) => listed.includes(`"${t}"`) || listed.includes(`'${t}'`))) return name;
  }
  const names = src.fresh('TARGET_NAMES');
  const fn = src.fresh('nearest_target');
  const [each, entry, best] = ['target_name', 'target_entry', 'nearest'].map((n) => src.fresh(n));
  const u = src.indentUnit;
  src.constants.push(`${names} = [${targets.map((t) => src.quote(t)).join(', ')}]  # every name the task's success counts (added by the analyzer)`);
  src.helpers.push([
    `def ${fn}(current_nearest_blocks):`,
    `${u}# The nearest visible ${targets.length > 1 ? 'target of any kind' : 'target'} as [distance, yaw, pitch], or None (added by the analyzer).`,
    `${u}${best} = None`,
    `${u}for ${each} in ${names}:`,
    `${u}${u}${entry} = current_nearest_blocks.get(${each})`,
    `${u}${u}if ${entry} is not None and (${best} is None or ${entry}[0] < ${best}[0]):`,
    `${u}${u}${u}${best} = ${entry}`,
    `${u}return ${best}`,
  ]);
  return fn;
}

function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** Parses `text`; a file with a syntax error gets no patch. The Python parser must be loaded. */
export function parsed<T>(text: string, use: (tree: { rootNode: PythonNode }) => T): T {
  const tree = parsePython(text);
  try {
    return use(tree);
  } finally {
    tree.delete();
  }
}

/** A patch writer's Python hook: pushes the edits for `req` (lines use `\t` for one extra level of indentation). */
export type PythonPatchWriter<R extends PatchRequestBase> = (src: PythonSource, term: PythonDenseTerm, req: R, edits: Edit[]) => void;

/**
 * The patch for `req` on a Python reward file's text, by `write` (the parser loaded: `loadPythonParser()`).
 * Throws PatchUnavailable when the file has no place for it or when the patched file would not parse, would
 * break the contract or the sandbox's rules, or (`refuseAddedLint`, patches.ts's check) would add a lint
 * error or warning.
 */
export function patchPythonReward<R extends PatchRequestBase>(
  fileName: string,
  text: string,
  req: R,
  write: PythonPatchWriter<R>,
  refuseAddedLint: (fileName: string, text: string, patched: string) => void,
): { diff: string; lines: [number, number]; patched: string } {
  const patched = parsed(text, (tree) => {
    const broken = firstSyntaxError(tree.rootNode);
    if (broken)
      throw new PatchUnavailable(`the reward file does not parse (line ${broken.at.line}, column ${broken.at.column}: ${broken.message}); fix that first`);
    const src = new PythonSource(fileName, text, tree);
    const edits: Edit[] = [];
    write(src, src.denseTerm(), req, edits);
    const top = topLevelEdit(src);
    if (top) edits.push(top);
    return applyEdits(text, edits);
  });
  try {
    compilePythonReward(fileName, patched);
  } catch (err) {
    if (!(err instanceof RewardError)) throw err;
    throw new PatchUnavailable(`internal error: the patched file is refused (${err.detail})`);
  }
  refuseAddedLint(fileName, text, patched);
  const diff = unifiedDiff(text, patched, path.basename(fileName));
  return { diff: diff.text, lines: diff.oldRange, patched };
}

/** 1-based line range of the dense term of a Python reward, for anchoring advice; undefined when there is none. */
export function pythonDenseLines(text: string): [number, number] | undefined {
  try {
    return parsed(text, (tree) => {
      const term = new PythonSource('reward.py', text, tree).denseTerm();
      const node = term.kind === 'function' ? term.def : term.before;
      return [node.startPosition.row + 1, node.endPosition.row + 1] as [number, number];
    });
  } catch (err) {
    if (err instanceof PatchUnavailable) return undefined;
    throw err;
  }
}
