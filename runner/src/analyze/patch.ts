// What an analyzer patch is, and what every patch writer shares. A patch writer (in the file of the finding
// that asks for it, under findings/) turns a finding's request into text edits of a reward file, placed with the
// TypeScript AST: the dense term is found by name or through the scale expression, parameters are resolved
// through scopes, new tunables become named top-level constants, and names never collide with the file's own.
// patches.ts applies the edits and checks the result.
import ts from 'typescript';
import { parameterNames, SCALE_RULE, type ParameterName } from '../schema';
import type { PythonDenseTerm, PythonSource } from './python-patch';

/** What every patch request has: its kind (the writer that handles it) and why, which the patch's comment quotes. */
export interface PatchRequestBase {
  kind: string;
  why: string;
}

/** Writes the patches of one request kind. */
export interface PatchWriter<R extends PatchRequestBase = PatchRequestBase> {
  kind: R['kind'];
  /**
   * Pushes the edits for `req` onto `edits` (lines use `\t` for one extra level of indentation relative to the
   * insertion point; new constants go to `src.constants`). Throws PatchUnavailable when the file has no place for it.
   */
  write(src: RewardSource, term: DenseTerm, req: R, edits: Edit[]): void;
  /** The same for a Python reward (python-patch.ts); a writer without it offers no patch to Python files. */
  python?(src: PythonSource, term: PythonDenseTerm, req: R, edits: Edit[]): void;
}

/** Keeps the writer's request type, so patches.ts derives `PatchRequest` from the writers. */
export function definePatch<R extends PatchRequestBase>(writer: PatchWriter<R>): PatchWriter<R> {
  return writer;
}

/** Why a finding has no patch (the reward has no dense term we can place code in, the patch would not lint, …). */
export class PatchUnavailable extends Error {
  override name = 'PatchUnavailable';
}

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Where the dense signal is computed: a function whose return value is the dense term, or a `let` variable. */
export type DenseTerm =
  | { kind: 'function'; fn: ts.FunctionLikeDeclaration & { body: ts.Block }; exported: boolean }
  | { kind: 'variable'; name: string; before: ts.ReturnStatement };

export class RewardSource {
  readonly sf: ts.SourceFile;
  private readonly identifiers = new Set<string>();
  readonly indentUnit: string;
  readonly eol: string;
  /** Top-level constant declarations the patch adds. */
  readonly constants: string[] = [];

  constructor(
    readonly fileName: string,
    readonly text: string,
  ) {
    this.sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, fileName.endsWith('.js') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
    const visit = (n: ts.Node) => {
      if (ts.isIdentifier(n)) this.identifiers.add(n.text);
      ts.forEachChild(n, visit);
    };
    visit(this.sf);
    ({ indentUnit: this.indentUnit, eol: this.eol } = sourceLayout(text, '  '));
  }

  /** A string literal in the file's quote style. */
  quote(value: string): string {
    return quotedIn(this.text, value, 'single');
  }

  /** A name not used anywhere in the file (so an inserted declaration never shadows or collides). */
  fresh(base: string): string {
    return freshName(base, this.identifiers);
  }

  line(pos: number): number {
    return this.sf.getLineAndCharacterOfPosition(pos).line;
  }

  lineStart(pos: number): number {
    return this.sf.getPositionOfLineAndCharacter(this.line(pos), 0);
  }

  indentAt(pos: number): string {
    const start = this.lineStart(pos);
    return /^[ \t]*/.exec(this.text.slice(start))![0];
  }

  /** The dense term, by name (`dense` function) or through the scale rule's `Math.sign(X) * 0.1`. */
  denseTerm(): DenseTerm {
    const byName = this.functionNamed('dense');
    if (byName) return byName;
    const rewardFn = this.functionNamed('reward_function');
    if (!rewardFn) throw new PatchUnavailable('the file has neither a `dense` function nor a `reward_function`');
    for (const ret of returnsOf(rewardFn.fn.body)) {
      const term = ret.expression && denseOperand(ret.expression);
      if (!term) continue;
      if (ts.isCallExpression(term) && ts.isIdentifier(term.expression)) {
        const fn = this.functionNamed(term.expression.text);
        if (fn) return fn;
      }
      if (ts.isIdentifier(term)) {
        const decl = findVariable(rewardFn.fn.body, term.text);
        if (decl?.initializer && ts.isCallExpression(decl.initializer) && ts.isIdentifier(decl.initializer.expression)) {
          const fn = this.functionNamed(decl.initializer.expression.text);
          if (fn) return fn;
        }
        if (decl && (decl.parent.flags & ts.NodeFlags.Const) === 0) return { kind: 'variable', name: term.text, before: ret };
      }
    }
    throw new PatchUnavailable(`no dense term found: no \`dense\` function and no \`Math.sign(…) * ${SCALE_RULE.denseWeight}\` in reward_function's return`);
  }

  private functionNamed(name: string): (DenseTerm & { kind: 'function' }) | undefined {
    let found: (DenseTerm & { kind: 'function' }) | undefined;
    const visit = (n: ts.Node) => {
      if (found) return;
      let fn: ts.FunctionLikeDeclaration | undefined;
      let statement: ts.Node | undefined;
      if (ts.isFunctionDeclaration(n) && n.name?.text === name) [fn, statement] = [n, n];
      else if (
        ts.isVariableDeclaration(n) &&
        ts.isIdentifier(n.name) &&
        n.name.text === name &&
        n.initializer &&
        (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))
      ) {
        [fn, statement] = [n.initializer, n.parent.parent];
      }
      if (fn?.body && ts.isBlock(fn.body) && statement) {
        const exported = statement.parent === this.sf && !!ts.getModifiers(statement as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
        found = { kind: 'function', fn: fn as ts.FunctionLikeDeclaration & { body: ts.Block }, exported };
        return;
      }
      ts.forEachChild(n, visit);
    };
    visit(this.sf);
    return found;
  }

  /** Where new top-level constants go. */
  topLevelConstantsAnchor(): { at: number; afterConstants: boolean } {
    // After the last top-level `const NAME = literal;` if there is one, else before the first statement's code
    // (after the header comment, which is the file's design thoughts).
    const statements = this.sf.statements;
    let lastConst: ts.Statement | undefined;
    for (const s of statements) {
      if (
        ts.isVariableStatement(s) &&
        s.declarationList.declarations.every(
          (d) => d.initializer && (ts.isNumericLiteral(d.initializer) || ts.isStringLiteral(d.initializer) || ts.isArrayLiteralExpression(d.initializer)),
        )
      )
        lastConst = s;
    }
    if (lastConst) {
      const nl = this.text.indexOf('\n', lastConst.end);
      return { at: nl < 0 ? this.text.length : nl + 1, afterConstants: true };
    }
    const first = statements[0];
    if (!first) throw new PatchUnavailable('the file is empty');
    return { at: this.lineStart(first.getStart(this.sf)), afterConstants: false };
  }
}

function returnsOf(body: ts.Block): ts.ReturnStatement[] {
  const out: ts.ReturnStatement[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isReturnStatement(n)) out.push(n);
    if (ts.isFunctionLike(n)) return; // a nested function's returns are not this function's
    ts.forEachChild(n, visit);
  };
  body.statements.forEach(visit);
  return out;
}

/** In `Math.sign(S) * 1 + Math.sign(D) * 0.1` (either operand order), the D. */
function denseOperand(e: ts.Expression): ts.Expression | undefined {
  const strip = (x: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(x) ? strip(x.expression) : x);
  e = strip(e);
  if (!ts.isBinaryExpression(e)) return undefined;
  if (e.operatorToken.kind === ts.SyntaxKind.PlusToken) return denseOperand(e.left) ?? denseOperand(e.right);
  if (e.operatorToken.kind !== ts.SyntaxKind.AsteriskToken) return undefined;
  const [l, r] = [strip(e.left), strip(e.right)];
  const weight = (x: ts.Expression) => ts.isNumericLiteral(x) && Number(x.text) === SCALE_RULE.denseWeight;
  const sign = (x: ts.Expression) =>
    ts.isCallExpression(x) && ts.isPropertyAccessExpression(x.expression) && x.expression.getText() === 'Math.sign' && x.arguments.length === 1
      ? strip(x.arguments[0]!)
      : undefined;
  if (weight(r)) return sign(l);
  if (weight(l)) return sign(r);
  return undefined;
}

function findVariable(body: ts.Block, name: string): ts.VariableDeclaration | undefined {
  let found: ts.VariableDeclaration | undefined;
  const visit = (n: ts.Node) => {
    if (found) return;
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name) found = n;
    else if (!ts.isFunctionLike(n)) ts.forEachChild(n, visit);
  };
  body.statements.forEach(visit);
  return found;
}

/** Does `name` resolve to the schema parameter inside `fn` (its own parameter or an enclosing function's)? */
export function parameterInScope(fn: ts.Node, name: string): boolean {
  for (let n: ts.Node | undefined = fn; n; n = n.parent) {
    if (ts.isFunctionLike(n) && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) return true;
  }
  return false;
}

/**
 * Makes the schema parameters `needed` usable inside the dense function: already in scope, or, for an exported
 * `dense` (which the runtime calls with the parameters in contract order), by extending its parameter list.
 */
export function ensureParameters(src: RewardSource, term: DenseTerm, needed: ParameterName[], edits: Edit[]): void {
  const scopeNode = term.kind === 'function' ? term.fn : term.before;
  const missing = needed.filter((p) => !parameterInScope(scopeNode, p));
  if (missing.length === 0) return;
  if (term.kind !== 'function' || !term.exported) {
    throw new PatchUnavailable(`the dense term cannot see ${missing.join(', ')} (not a parameter of it or of an enclosing function)`);
  }
  const order = parameterNames(true);
  const present = term.fn.parameters.map((p) => (ts.isIdentifier(p.name) ? p.name.text : ''));
  if (present.some((p, i) => p !== order[i])) {
    throw new PatchUnavailable(
      `the exported dense function's parameters are not the contract's prefix (${order.join(', ')}), so ${missing.join(', ')} cannot be added`,
    );
  }
  const upTo = Math.max(...needed.map((p) => order.indexOf(p)));
  const added = order.slice(present.length, upTo + 1);
  const params = term.fn.parameters;
  const at = params.length > 0 ? params.end : src.text.indexOf('(', term.fn.getStart(src.sf)) + 1;
  edits.push({ start: at, end: at, text: (params.length > 0 ? ', ' : '') + added.join(', ') });
}

/** A top-level named constant for a tunable, inserted with the file's other constants (see `constantsEdit`). */
export function addConstant(src: RewardSource, base: string, value: number, comment: string): string {
  const name = src.fresh(base);
  src.constants.push(`const ${name} = ${value}; // ${comment}`);
  return name;
}

/**
 * An `if` statement as the note rule reads it, in either language (each reads its own syntax into this): whether
 * it has an else (or elif), and each statement of its branch as the assignment `object.key = value` it is, or
 * undefined for any other statement.
 */
export interface IfShape {
  hasElse: boolean;
  branch: ({ object: string; setsTrue: boolean } | undefined)[];
}

/**
 * Is the statement a note, `if (…) GLOBAL_DATA.key = true` (or `GLOBAL_DATA['key']`), braced or not (Python:
 * `if …: GLOBAL_DATA["key"] = True`), with no else? The exploration patch records that a target was seen with one.
 * It never returns and must run on every call: a patch placed above it that returns first would leave the flag
 * unset, so patches go below the notes that open the dense function (`leadingNotes`).
 */
function isNote(s: IfShape | undefined): boolean {
  const only = s && !s.hasElse && s.branch.length === 1 ? s.branch[0] : undefined;
  return only?.object === 'GLOBAL_DATA' && only.setsTrue;
}

/** How many of a body's statements (comments and docstring left out) open it with notes: patches go below them. */
export function leadingNotes<S>(statements: readonly S[], shape: (s: S) => IfShape | undefined): number {
  const first = statements.findIndex((s) => !isNote(shape(s)));
  return first < 0 ? statements.length : first;
}

/** A TypeScript statement as the note rule reads it: an `if` and its branch's statements (one, or those in its braces). */
function ifShape(s: ts.Statement): IfShape | undefined {
  if (!ts.isIfStatement(s)) return undefined;
  const then = s.thenStatement;
  // `object.key = value` or, as Python writes it, `object['key'] = value`.
  const assignment = (st: ts.Statement) => {
    const e = ts.isExpressionStatement(st) ? st.expression : undefined;
    if (!e || !ts.isBinaryExpression(e) || e.operatorToken.kind !== ts.SyntaxKind.EqualsToken) return undefined;
    const target = e.left;
    const keyed = ts.isPropertyAccessExpression(target) || (ts.isElementAccessExpression(target) && ts.isStringLiteralLike(target.argumentExpression));
    return keyed && ts.isIdentifier(target.expression) ? { object: target.expression.text, setsTrue: e.right.kind === ts.SyntaxKind.TrueKeyword } : undefined;
  };
  return { hasElse: !!s.elseStatement, branch: (ts.isBlock(then) ? [...then.statements] : [then]).map(assignment) };
}

/** Inserts `lines` (already relative-indented) as the first statements of the dense function (below its notes), or before the return for a variable. */
export function insertAtTop(src: RewardSource, term: DenseTerm, lines: string[], edits: Edit[]): void {
  let at: number;
  let indent: string;
  if (term.kind === 'function') {
    const body = term.fn.body;
    const first = body.statements[0];
    if (first && src.line(first.getStart(src.sf)) === src.line(body.getStart(src.sf))) {
      throw new PatchUnavailable('the dense function is written on one line; cannot place statements in it');
    }
    const lastNote = body.statements[leadingNotes(body.statements, ifShape) - 1];
    const nl = src.text.indexOf('\n', lastNote ? lastNote.end : body.getStart(src.sf));
    at = nl + 1;
    indent = first ? src.indentAt(first.getStart(src.sf)) : src.indentAt(body.getStart(src.sf)) + src.indentUnit;
  } else {
    at = src.lineStart(term.before.getStart(src.sf));
    indent = src.indentAt(term.before.getStart(src.sf));
  }
  edits.push({ start: at, end: at, text: lines.map((l) => indent + l.replace(/^\t+/, (t) => src.indentUnit.repeat(t.length)) + src.eol).join('') });
}

/** `return V;` in a dense function, `x = V;` for a dense variable. */
export function yieldDense(term: DenseTerm, value: number): string {
  return term.kind === 'function' ? `return ${value};` : `${term.name} = ${value};`;
}
/** A top-level helper `nearest_target(current_nearest_blocks)`: the nearest visible entry of any of `targets`. */
export function nearestTargetHelper(src: RewardSource, targets: string[]): string {
  // An earlier analyzer patch may have added it already (patches compose in the improvement loop).
  for (const st of src.sf.statements) {
    if (!ts.isFunctionDeclaration(st) || !st.name || !/^nearest_target(_\d+)?$/.test(st.name.text)) continue;
    const list = /for \(const \w+ of (\w+)\)/.exec(st.getText(src.sf))?.[1];
    const decl = list && src.sf.statements.find((d) => ts.isVariableStatement(d) && d.declarationList.declarations[0]?.name.getText(src.sf) === list);
    const init = decl && ts.isVariableStatement(decl) ? decl.declarationList.declarations[0]!.initializer : undefined;
    if (init && ts.isArrayLiteralExpression(init)) {
      const have = init.elements.filter(ts.isStringLiteralLike).map((e) => e.text);
      if (targets.every((t) => have.includes(t))) return st.name.text;
    }
  }
  const names = src.fresh('TARGET_NAMES');
  const fn = src.fresh('nearest_target');
  const [each, entry, best] = ['target_name', 'target_entry', 'nearest'].map((n) => src.fresh(n));
  const u = src.indentUnit;
  src.constants.push(
    `const ${names} = [${targets.map((t) => src.quote(t)).join(', ')}]; // every name the task's success counts (added by the analyzer)`,
    `// The nearest visible ${targets.length > 1 ? 'target of any kind' : 'target'} as [distance, yaw, pitch], or undefined (added by the analyzer).`,
    [
      `function ${fn}(current_nearest_blocks) {`,
      `${u}let ${best} = undefined;`,
      `${u}for (const ${each} of ${names}) {`,
      `${u}${u}const ${entry} = current_nearest_blocks[${each}];`,
      `${u}${u}if (${entry} !== undefined && (${best} === undefined || ${entry}[0] < ${best}[0])) ${best} = ${entry};`,
      `${u}}`,
      `${u}return ${best};`,
      '}',
    ].join(src.eol),
  );
  return fn;
}

/** The statements that keep a set of visited cells in GLOBAL_DATA and test the current one; `then` runs on a new cell. */
export function cellBonusLines(src: RewardSource, cellSize: string, then: string[]): string[] {
  const key = src.fresh('visited_cells');
  const [cx, cz, cell] = ['cell_x', 'cell_z', 'cell_key'].map((n) => src.fresh(n));
  return [
    `if (!(${src.quote(key)} in GLOBAL_DATA)) GLOBAL_DATA.${key} = new Set();`,
    `const [${cx}, , ${cz}] = past_agent_positions[past_agent_positions.length - 1];`,
    `const ${cell} = \`\${Math.floor(${cx} / ${cellSize})},\${Math.floor(${cz} / ${cellSize})}\`;`,
    `if (!GLOBAL_DATA.${key}.has(${cell})) {`,
    `\tGLOBAL_DATA.${key}.add(${cell});`,
    ...then.map((l) => `\t${l}`),
    '}',
  ];
}

/** Does the statement give a positive dense value (return of a positive number, or assignment of one)? */
export function paysPositive(s: ts.Statement): boolean {
  let hit = false;
  const positive = (e: ts.Expression | undefined) => !!e && ts.isNumericLiteral(e) && Number(e.text) > 0;
  const visit = (n: ts.Node) => {
    if (hit || ts.isFunctionLike(n)) return;
    if (ts.isReturnStatement(n) && positive(n.expression)) hit = true;
    else if (
      ts.isBinaryExpression(n) &&
      (n.operatorToken.kind === ts.SyntaxKind.EqualsToken || n.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken) &&
      positive(n.right)
    )
      hit = true;
    else ts.forEachChild(n, visit);
  };
  visit(s);
  return hit;
}

/** A source file's indentation unit (its smallest indent, or tabs; `fallback` when nothing is indented) and line ending. */
export function sourceLayout(text: string, fallback: string): { indentUnit: string; eol: string } {
  const indents = text
    .split(/\r?\n/)
    .map((l) => /^( +|\t+)\S/.exec(l)?.[1])
    .filter((s): s is string => !!s);
  const indentUnit = indents.length === 0 ? fallback : indents[0]!.startsWith('\t') ? '\t' : ' '.repeat(Math.min(...indents.map((s) => s.length)));
  return { indentUnit, eol: text.includes('\r\n') ? '\r\n' : '\n' };
}

/** `value` as a string literal in the quote style `text` uses most (`onTie` when single and double are as common). */
export function quotedIn(text: string, value: string, onTie: 'single' | 'double'): string {
  const singles = (text.match(/'[^'\n]*'/g) ?? []).length;
  const doubles = (text.match(/"[^"\n]*"/g) ?? []).length;
  const single = singles > doubles || (singles === doubles && onTie === 'single');
  return single ? `'${value.replace(/[\\']/g, (c) => '\\' + c)}'` : JSON.stringify(value);
}

/** `base`, or `base_2`, `base_3`, … : the first not in `used`, which it joins (a name a patch inserts never collides). */
export function freshName(base: string, used: Set<string>): string {
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
  used.add(name);
  return name;
}
