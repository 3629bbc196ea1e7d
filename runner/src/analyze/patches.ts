// Concrete reward-file patches for the analyzer's findings. Edits are placed with the TypeScript AST (the dense
// term is found by name or through the scale expression, parameters are resolved through scopes), applied as
// text edits so the user's formatting and comments survive, then checked: the result must parse and must not
// add a single lint diagnostic. The output is a unified diff against the user's file.
import path from 'node:path';
import ts from 'typescript';
import { parameterNames, SCALE_RULE, type ParameterName } from '../schema';
import { unifiedDiff } from '../diff';
import { lintText } from '../lint/rules';

export type PatchRequest =
  /** Dense -1 while one of `names` is in view closer than `distance` m. */
  | {
      kind: 'hazard-penalty';
      names: string[];
      distance: number;
      why: string /** Names the constants (`MOB` → MOB_PENALTY_DISTANCE); default: the single name. */;
      label?: string;
    }
  /** Dense -1 while |pitch| is beyond `degrees`. */
  | { kind: 'pitch-limit'; degrees: number; why: string }
  /** Dense -1 when the agent moved less than `radius` m over the last `window` steps. */
  | { kind: 'stuck-penalty'; window: number; radius: number; why: string }
  /** Replace a bonus for moving (a condition on past_agent_positions) with a bonus for entering an unvisited cell. */
  | { kind: 'movement-to-cells'; cellSize: number; why: string }
  /** While none of `targets` is in view, pay the first visit to each cell. */
  | { kind: 'exploration-bonus'; cellSize: number; targets: string[]; why: string }
  /** Pair a bonus for turning towards a target (|yaw| shrinking) with the mirrored penalty for turning away. */
  | { kind: 'symmetric-turning'; why: string }
  /**
   * The reward reads only some of the names the task's success counts (`known`): every read of one of them from a
   * nearest-blocks dict becomes the nearest of all `targets`.
   */
  | { kind: 'target-names'; known: string[]; targets: string[]; why: string }
  /**
   * While a target is in view, pay only a new closest distance (by `step` m) this episode and make every other
   * step cost; losing sight of it costs. Approaching pays, dawdling near it and re-finding it do not.
   */
  | { kind: 'approach-record'; targets: string[]; step: number; why: string };

export interface RewardPatch {
  /** Unified diff against the original text (paths a/NAME, b/NAME). */
  diff: string;
  /** 1-based inclusive line range of the original text that the patch touches. */
  lines: [number, number];
  patched: string;
}

/** Why a finding has no patch (the reward has no dense term we can place code in, the patch would not lint, …). */
export class PatchUnavailable extends Error {
  override name = 'PatchUnavailable';
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** Where the dense signal is computed: a function whose return value is the dense term, or a `let` variable. */
type DenseTerm =
  | { kind: 'function'; fn: ts.FunctionLikeDeclaration & { body: ts.Block }; exported: boolean }
  | { kind: 'variable'; name: string; before: ts.ReturnStatement };

class RewardSource {
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
    const indents = text
      .split(/\r?\n/)
      .map((l) => /^( +|\t+)\S/.exec(l)?.[1])
      .filter((s): s is string => !!s);
    this.indentUnit = indents.length === 0 ? '  ' : indents[0]!.startsWith('\t') ? '\t' : ' '.repeat(Math.min(...indents.map((s) => s.length)));
    this.eol = text.includes('\r\n') ? '\r\n' : '\n';
  }

  /** A string literal in the file's quote style. */
  quote(value: string): string {
    const singles = (this.text.match(/'[^'\n]*'/g) ?? []).length;
    const doubles = (this.text.match(/"[^"\n]*"/g) ?? []).length;
    return singles >= doubles ? `'${value.replace(/[\\']/g, (c) => '\\' + c)}'` : JSON.stringify(value);
  }

  /** A name not used anywhere in the file (so an inserted declaration never shadows or collides). */
  fresh(base: string): string {
    let name = base;
    for (let i = 2; this.identifiers.has(name); i++) name = `${base}_${i}`;
    this.identifiers.add(name);
    return name;
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
function parameterInScope(fn: ts.Node, name: string): boolean {
  for (let n: ts.Node | undefined = fn; n; n = n.parent) {
    if (ts.isFunctionLike(n) && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) return true;
  }
  return false;
}

/**
 * Makes the schema parameters `needed` usable inside the dense function: already in scope, or, for an exported
 * `dense` (which the runtime calls with the parameters in contract order), by extending its parameter list.
 */
function ensureParameters(src: RewardSource, term: DenseTerm, needed: ParameterName[], edits: Edit[]): void {
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
function addConstant(src: RewardSource, base: string, value: number, comment: string): string {
  const name = src.fresh(base);
  src.constants.push(`const ${name} = ${value}; // ${comment}`);
  return name;
}

/** One edit that inserts every new constant: after the file's last top-level constant, or before its first statement. */
function constantsEdit(src: RewardSource): Edit | undefined {
  if (src.constants.length === 0) return undefined;
  const { at, afterConstants } = src.topLevelConstantsAnchor();
  const text = src.constants.map((l) => l + src.eol).join('') + (afterConstants ? '' : src.eol);
  return { start: at, end: at, text };
}

/** Inserts `lines` (already relative-indented) as the first statements of the dense function, or before the return for a variable. */
function insertAtTop(src: RewardSource, term: DenseTerm, lines: string[], edits: Edit[]): void {
  let at: number;
  let indent: string;
  if (term.kind === 'function') {
    const body = term.fn.body;
    const first = body.statements[0];
    if (first && src.line(first.getStart(src.sf)) === src.line(body.getStart(src.sf))) {
      throw new PatchUnavailable('the dense function is written on one line; cannot place statements in it');
    }
    const nl = src.text.indexOf('\n', body.getStart(src.sf));
    at = nl + 1;
    indent = first ? src.indentAt(first.getStart(src.sf)) : src.indentAt(body.getStart(src.sf)) + src.indentUnit;
  } else {
    at = src.lineStart(term.before.getStart(src.sf));
    indent = src.indentAt(term.before.getStart(src.sf));
  }
  edits.push({ start: at, end: at, text: lines.map((l) => indent + l.replace(/^\t+/, (t) => src.indentUnit.repeat(t.length)) + src.eol).join('') });
}

/** `return V;` in a dense function, `x = V;` for a dense variable. */
function yieldDense(term: DenseTerm, value: number): string {
  return term.kind === 'function' ? `return ${value};` : `${term.name} = ${value};`;
}

function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** Builds the edits for one request. Lines use `\t` for one extra level of indentation relative to the insertion point. */
function editsFor(src: RewardSource, req: PatchRequest): Edit[] {
  const term = src.denseTerm();
  const edits: Edit[] = [];
  switch (req.kind) {
    case 'hazard-penalty': {
      ensureParameters(src, term, ['current_nearest_blocks'], edits);
      const label = req.label ?? (req.names.length === 1 ? req.names[0]! : 'hazard');
      const limit = addConstant(
        src,
        `${label.toUpperCase()}_PENALTY_DISTANCE`,
        req.distance,
        `metres: ${req.names.join('/')} in view closer than this costs (added by the analyzer)`,
      );
      const lines = [`// Analyzer: ${req.why}`];
      if (req.names.length === 1) {
        const entry = src.fresh(`${label}_in_view`);
        lines.push(
          `const ${entry} = current_nearest_blocks[${src.quote(req.names[0]!)}];`,
          `if (${entry} !== undefined && ${entry}[0] < ${limit}) ${yieldDense(term, -1)}`,
        );
      } else {
        const names = src.fresh(`${label.toUpperCase()}_NAMES`);
        const each = src.fresh(label.toLowerCase());
        const entry = src.fresh(`${label.toLowerCase()}_in_view`);
        src.constants.push(`const ${names} = [${req.names.map((x) => src.quote(x)).join(', ')}]; // hazards seen before deaths (added by the analyzer)`);
        lines.push(
          `for (const ${each} of ${names}) {`,
          `\tconst ${entry} = current_nearest_blocks[${each}];`,
          `\tif (${entry} !== undefined && ${entry}[0] < ${limit}) ${yieldDense(term, -1)}`,
          '}',
        );
      }
      insertAtTop(src, term, lines, edits);
      break;
    }
    case 'pitch-limit': {
      ensureParameters(src, term, ['past_agent_positions'], edits);
      const limit = addConstant(src, 'PITCH_LIMIT_DEGREES', req.degrees, 'looking further up or down than this costs (added by the analyzer)');
      const pitch = src.fresh('pitch_now');
      insertAtTop(
        src,
        term,
        [
          `// Analyzer: ${req.why}`,
          `const ${pitch} = past_agent_positions[past_agent_positions.length - 1][4];`,
          `if (Math.abs(${pitch}) > ${limit}) ${yieldDense(term, -1)}`,
        ],
        edits,
      );
      break;
    }
    case 'stuck-penalty': {
      ensureParameters(src, term, ['past_agent_positions'], edits);
      const window = addConstant(src, 'STUCK_WINDOW_STEPS', req.window, 'steps over which the agent must move (added by the analyzer)');
      const radius = addConstant(src, 'STUCK_RADIUS', req.radius, 'metres: moving less than this over the window costs (added by the analyzer)');
      const [x0, z0, x1, z1] = ['stuck_x0', 'stuck_z0', 'stuck_x1', 'stuck_z1'].map((n) => src.fresh(n));
      insertAtTop(
        src,
        term,
        [
          `// Analyzer: ${req.why}`,
          `if (past_agent_positions.length > ${window}) {`,
          `\tconst [${x0}, , ${z0}] = past_agent_positions[past_agent_positions.length - 1 - ${window}];`,
          `\tconst [${x1}, , ${z1}] = past_agent_positions[past_agent_positions.length - 1];`,
          `\tif (Math.hypot(${x1} - ${x0}, ${z1} - ${z0}) < ${radius}) ${yieldDense(term, -1)}`,
          '}',
        ],
        edits,
      );
      break;
    }
    case 'movement-to-cells':
      replaceMovementBonus(src, term, req, edits);
      break;
    case 'exploration-bonus':
      addExplorationBonus(src, term, req, edits);
      break;
    case 'symmetric-turning':
      mirrorTurningBonus(src, term, req, edits);
      break;
    case 'target-names':
      widenTargetNames(src, req, edits);
      break;
    case 'approach-record':
      addApproachRecord(src, term, req, edits);
      break;
  }
  return edits;
}

const NEAREST_DICTS = new Set(['current_nearest_blocks', 'previous_nearest_blocks']);

/** A top-level helper `nearest_target(current_nearest_blocks)`: the nearest visible entry of any of `targets`. */
function nearestTargetHelper(src: RewardSource, targets: string[]): string {
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

/** Every `D['name']`, `D.name` and `'name' in D` for a nearest-blocks dict D and a name in `known`, rewritten over all targets. */
function widenTargetNames(src: RewardSource, req: PatchRequest & { kind: 'target-names' }, edits: Edit[]): void {
  const missing = req.targets.filter((t) => !req.known.includes(t));
  if (missing.length === 0) throw new PatchUnavailable('the reward already reads every name the task counts');
  const known = new Set(req.known);
  const found: { node: ts.Node; dict: string; negated: boolean }[] = [];
  const dictOf = (e: ts.Expression) => (ts.isIdentifier(e) && NEAREST_DICTS.has(e.text) ? e.text : undefined);
  const visit = (n: ts.Node) => {
    if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression) && known.has(n.argumentExpression.text) && dictOf(n.expression)) {
      found.push({ node: n, dict: dictOf(n.expression)!, negated: false });
      return;
    }
    if (ts.isPropertyAccessExpression(n) && known.has(n.name.text) && dictOf(n.expression)) {
      found.push({ node: n, dict: dictOf(n.expression)!, negated: false });
      return;
    }
    if (
      ts.isBinaryExpression(n) &&
      n.operatorToken.kind === ts.SyntaxKind.InKeyword &&
      ts.isStringLiteralLike(n.left) &&
      known.has(n.left.text) &&
      dictOf(n.right)
    ) {
      found.push({ node: n, dict: dictOf(n.right)!, negated: true });
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(src.sf);
  if (found.length === 0)
    throw new PatchUnavailable(
      `the reward reads ${req.known.join('/')} in a way the analyzer cannot rewrite (not as current_nearest_blocks[…] or previous_nearest_blocks[…])`,
    );
  const fn = nearestTargetHelper(src, req.targets);
  for (const f of found) {
    const call = `${fn}(${f.dict})`;
    edits.push({ start: f.node.getStart(src.sf), end: f.node.end, text: f.negated ? `(${call} !== undefined)` : call });
  }
  const first = src.line(found[0]!.node.getStart(src.sf));
  const comment = `// Analyzer: ${req.why}${src.eol}`;
  const at = src.sf.getPositionOfLineAndCharacter(first, 0);
  edits.push({ start: at, end: at, text: src.indentAt(at) + comment });
}

function addApproachRecord(src: RewardSource, term: DenseTerm, req: PatchRequest & { kind: 'approach-record' }, edits: Edit[]): void {
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to approach');
  ensureParameters(src, term, ['current_nearest_blocks', 'previous_nearest_blocks', 'GLOBAL_DATA'], edits);
  const fn = nearestTargetHelper(src, req.targets);
  const step = addConstant(src, 'APPROACH_STEP', req.step, 'metres: a new closest distance by at least this pays (added by the analyzer)');
  const key = src.fresh('closest_target');
  const [now, before] = ['target_now', 'target_before'].map((n) => src.fresh(n));
  insertAtTop(
    src,
    term,
    [
      `// Analyzer: ${req.why}`,
      `const ${now} = ${fn}(current_nearest_blocks);`,
      `const ${before} = ${fn}(previous_nearest_blocks);`,
      `if (${now} === undefined && ${before} !== undefined) ${yieldDense(term, -1)} // lost sight of the target`,
      `if (${now} !== undefined) {`,
      `	if (!(${src.quote(key)} in GLOBAL_DATA)) {`,
      `		GLOBAL_DATA.${key} = ${now}[0];`,
      `		${yieldDense(term, 1)} // first sight of a target this episode`,
      `	} else if (${now}[0] < GLOBAL_DATA.${key} - ${step}) {`,
      `		GLOBAL_DATA.${key} = ${now}[0];`,
      `		${yieldDense(term, 1)} // closer than ever before this episode`,
      '	}',
      // No penalty for the other steps in view: a cost that only seeing the target incurs teaches the agent to
      // look away (measured: training success fell from the foundation's 42 % to 25 % of 122 episodes).
      `	${yieldDense(term, 0)} // no new progress: nothing to earn by approaching again`,
      '}',
    ],
    edits,
  );
}

/** The statements that keep a set of visited cells in GLOBAL_DATA and test the current one; `then` runs on a new cell. */
function cellBonusLines(src: RewardSource, cellSize: string, then: string[]): string[] {
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

/** Does the node's subtree mention `past_agent_positions` (directly or via a local derived from it)? */
function mentionsPositions(node: ts.Node, derived: ReadonlySet<string>): boolean {
  let hit = false;
  const visit = (n: ts.Node) => {
    if (hit) return;
    if (ts.isIdentifier(n) && (n.text === 'past_agent_positions' || derived.has(n.text))) hit = true;
    else ts.forEachChild(n, visit);
  };
  visit(node);
  return hit;
}

/** Does the statement give a positive dense value (return of a positive number, or assignment of one)? */
function paysPositive(s: ts.Statement): boolean {
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

function replaceMovementBonus(src: RewardSource, term: DenseTerm, req: PatchRequest & { kind: 'movement-to-cells' }, edits: Edit[]): void {
  const scope = term.kind === 'function' ? term.fn.body : (term.before.parent as ts.Node);
  // Locals computed from positions (`const [x, , z] = past_agent_positions[...]`, `const moved = Math.hypot(...)`).
  const derived = new Set<string>();
  const declarations = new Map<string, ts.VariableStatement>();
  let bonus: ts.IfStatement | undefined;
  const visit = (n: ts.Node) => {
    if (bonus || (ts.isFunctionLike(n) && n !== (term.kind === 'function' ? term.fn : undefined))) return;
    if (ts.isVariableDeclaration(n) && n.initializer && mentionsPositions(n.initializer, derived)) {
      const names: string[] = [];
      const collect = (b: ts.BindingName) =>
        ts.isIdentifier(b) ? names.push(b.text) : b.elements.forEach((el) => ts.isBindingElement(el) && collect(el.name));
      collect(n.name);
      names.forEach((x) => derived.add(x));
      if (ts.isVariableDeclarationList(n.parent) && ts.isVariableStatement(n.parent.parent) && n.parent.declarations.length === 1)
        for (const x of names) declarations.set(x, n.parent.parent);
    }
    if (ts.isIfStatement(n) && mentionsPositions(n.expression, derived) && !/\.has\(/.test(n.expression.getText(src.sf)) && paysPositive(n.thenStatement)) {
      bonus = n;
      return;
    }
    ts.forEachChild(n, visit);
  };
  scope.forEachChild(visit);
  if (!bonus) throw new PatchUnavailable('the dense term has no bonus conditioned on past_agent_positions (a "moved" bonus) to replace');
  ensureParameters(src, term, ['past_agent_positions', 'GLOBAL_DATA'], edits);
  const ifStmt: ts.IfStatement = bonus;
  const thenBody = ts.isBlock(ifStmt.thenStatement) ? ifStmt.thenStatement.statements.map((s) => s.getText(src.sf)) : [ifStmt.thenStatement.getText(src.sf)];
  const cellSize = addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  const lines = [
    `// Analyzer: ${req.why}`,
    ...cellBonusLines(
      src,
      cellSize,
      thenBody.flatMap((t) => t.split(/\r?\n/).map((l) => l.trim())),
    ),
  ];
  if (ifStmt.elseStatement) lines[lines.length - 1] = `} else ${ifStmt.elseStatement.getText(src.sf)}`;
  const indent = src.indentAt(ifStmt.getStart(src.sf));
  const start = src.lineStart(ifStmt.getStart(src.sf));
  const endLine = src.text.indexOf('\n', ifStmt.end);
  const end = endLine < 0 ? src.text.length : endLine + 1;
  // The whole line goes, its trailing comment too: that comment described the old bonus.
  edits.push({ start, end, text: lines.map((l) => indent + l.replace(/^\t+/, (t) => src.indentUnit.repeat(t.length)) + src.eol).join('') });
  // Locals that only fed the removed condition are dead now (and, in turn, locals that only fed those).
  const removed = new Set<ts.Node>([ifStmt.expression]);
  for (let changed = true; changed; ) {
    changed = false;
    const used = new Set<string>();
    const countUses = (n: ts.Node) => {
      if (removed.has(n)) return;
      if (ts.isIdentifier(n) && !(ts.isBindingElement(n.parent) || ts.isVariableDeclaration(n.parent))) used.add(n.text);
      ts.forEachChild(n, countUses);
    };
    scope.forEachChild(countUses);
    for (const stmt of new Set(declarations.values())) {
      if (removed.has(stmt) || stmt.pos > ifStmt.pos) continue;
      if ([...declarations].filter(([, s]) => s === stmt).every(([name]) => !used.has(name))) {
        removed.add(stmt);
        changed = true;
      }
    }
  }
  for (const stmt of removed) {
    if (stmt === ifStmt.expression) continue;
    const s = src.lineStart(stmt.getStart(src.sf));
    const nl = src.text.indexOf('\n', stmt.end);
    edits.push({ start: s, end: nl < 0 ? src.text.length : nl + 1, text: '' });
  }
}

/** `Math.abs(E[1])`, the magnitude of a nearest entry's yaw: the entry expression's text, else undefined. */
function absYawOf(e: ts.Expression): string | undefined {
  if (!ts.isCallExpression(e) || e.expression.getText() !== 'Math.abs' || e.arguments.length !== 1) return undefined;
  const arg = e.arguments[0]!;
  if (!ts.isElementAccessExpression(arg) || !ts.isNumericLiteral(arg.argumentExpression) || arg.argumentExpression.text !== '1') return undefined;
  return arg.expression.getText();
}

/** `|A yaw| < |B yaw| ± margin` (or the same written with `>`) as the lesser and greater entries and the margin. */
function compareYaw(cond: ts.Expression): { lesser: string; greater: string; margin: string | undefined } | undefined {
  if (!ts.isBinaryExpression(cond)) return undefined;
  const op = cond.operatorToken.kind;
  const less = op === ts.SyntaxKind.LessThanToken || op === ts.SyntaxKind.LessThanEqualsToken;
  const more = op === ts.SyntaxKind.GreaterThanToken || op === ts.SyntaxKind.GreaterThanEqualsToken;
  if (!less && !more) return undefined;
  const side = (e: ts.Expression): { entry: string | undefined; margin: string | undefined } => {
    if (
      ts.isBinaryExpression(e) &&
      (e.operatorToken.kind === ts.SyntaxKind.MinusToken || e.operatorToken.kind === ts.SyntaxKind.PlusToken) &&
      ts.isNumericLiteral(e.right)
    ) {
      return { entry: absYawOf(e.left), margin: e.right.text };
    }
    return { entry: absYawOf(e), margin: undefined };
  };
  const [l, r] = [side(cond.left), side(cond.right)];
  const [lesser, greater] = less ? [l, r] : [r, l];
  return lesser.entry && greater.entry ? { lesser: lesser.entry, greater: greater.entry, margin: lesser.margin ?? greater.margin } : undefined;
}

function mirrorTurningBonus(src: RewardSource, term: DenseTerm, req: PatchRequest & { kind: 'symmetric-turning' }, edits: Edit[]): void {
  if (term.kind !== 'function') throw new PatchUnavailable('the dense term is a variable; the turning bonus must be in a dense function');
  const comparisons: { stmt: ts.IfStatement; lesser: string; greater: string; margin: string | undefined }[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && n !== term.fn) return;
    if (ts.isIfStatement(n)) {
      const c = compareYaw(n.expression);
      if (c) comparisons.push({ stmt: n, ...c });
    }
    ts.forEachChild(n, visit);
  };
  term.fn.body.forEachChild(visit);
  // The bonus: one entry's |yaw| smaller than the other's (turned towards it), paying positive.
  const turnedTowards = comparisons.find((c) => paysPositive(c.stmt.thenStatement));
  if (!turnedTowards) throw new PatchUnavailable('the dense term has no bonus for turning towards a target (a shrinking |yaw|)');
  const { stmt, lesser, greater, margin } = turnedTowards;
  if (comparisons.some((c) => c.lesser === greater && c.greater === lesser))
    throw new PatchUnavailable('the turning bonus already has a matching penalty for turning away');
  const then = stmt.thenStatement;
  if (!(ts.isReturnStatement(then) && then.expression && ts.isNumericLiteral(then.expression))) {
    throw new PatchUnavailable('the turning bonus is not a plain `return <number>`, so its mirror cannot be written');
  }
  const indent = src.indentAt(stmt.getStart(src.sf));
  const nl = src.text.indexOf('\n', stmt.end);
  const at = nl < 0 ? src.text.length : nl + 1;
  const condition = `Math.abs(${lesser}[1]) > Math.abs(${greater}[1])${margin ? ` + ${margin}` : ''}`;
  edits.push({
    start: at,
    end: at,
    text: `${indent}if (${condition}) return -${then.expression.text}; // turned away from it (analyzer: ${req.why})${src.eol}`,
  });
}

function addExplorationBonus(src: RewardSource, term: DenseTerm, req: PatchRequest & { kind: 'exploration-bonus' }, edits: Edit[]): void {
  const bodyText = (term.kind === 'function' ? term.fn.body : term.before.parent).getText(src.sf);
  if (/GLOBAL_DATA/.test(bodyText) && /new Set\(/.test(bodyText)) throw new PatchUnavailable('the dense term already pays for visiting new cells');
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to search for');
  ensureParameters(src, term, ['current_nearest_blocks', 'past_agent_positions', 'GLOBAL_DATA'], edits);
  const cellSize = addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  let visible: string;
  if (req.targets.length === 1) visible = `current_nearest_blocks[${src.quote(req.targets[0]!)}] !== undefined`;
  else {
    const names = src.fresh('TARGET_NAMES');
    src.constants.push(`const ${names} = [${req.targets.map((t) => src.quote(t)).join(', ')}]; // the task's targets (added by the analyzer)`);
    const each = src.fresh('target');
    visible = `${names}.some((${each}) => current_nearest_blocks[${each}] !== undefined)`;
  }
  // Searching pays only until a target is first seen this episode: after that, wandering to new cells would
  // pay more than walking up to the target.
  const seen = src.fresh('target_seen');
  // At the top of a dense function, so that every path sees it (it only returns when a new cell is entered);
  // for a dense variable, just before the final return, so that it overrides what was computed the same way.
  insertAtTop(
    src,
    term,
    [
      `// Analyzer: ${req.why}`,
      `if (${visible}) GLOBAL_DATA.${seen} = true; // searching is over once a target was seen`,
      `else if (!(${src.quote(seen)} in GLOBAL_DATA)) {`,
      ...cellBonusLines(src, cellSize, [yieldDense(term, 1)]).map((l) => `\t${l}`),
      '}',
    ],
    edits,
  );
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

/** Syntax errors the parser recorded (the compiler keeps them on the source file; there is no public getter). */
function parseErrorsOf(sf: ts.SourceFile): ts.DiagnosticWithLocation[] {
  return (sf as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
}

/**
 * The patch for `req` on a reward file's text. Throws PatchUnavailable when the file has no place for it or
 * when the patched file would not parse or would add a lint error or warning.
 */
export function patchReward(fileName: string, text: string, req: PatchRequest): RewardPatch {
  // The patch writers edit TypeScript syntax trees; a Python reward gets the findings without patches.
  if (/\.py$/i.test(fileName)) throw new PatchUnavailable('patches are written for TypeScript rewards only; apply the suggestion to the Python file by hand');
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
  const before = lintKeys(fileName, text, true);
  const after = lintKeys(fileName, patched, false);
  const added = [...after].filter(([k, n]) => n > (before.get(k) ?? 0)).map(([k]) => k);
  if (added.length > 0) throw new PatchUnavailable(`the patch would add lint diagnostics: ${added.join('; ')}`);
  const name = path.basename(fileName);
  const diff = unifiedDiff(text, patched, name);
  return { diff: diff.text, lines: diff.oldRange, patched };
}

/** 1-based line range of the dense term (the function, or the reward function holding a dense variable), for anchoring advice. */
export function denseLines(fileName: string, text: string): [number, number] | undefined {
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
