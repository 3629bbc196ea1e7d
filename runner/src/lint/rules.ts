// The reward-file rules: schema names, GLOBAL_DATA initialisation, nearest-entry presence, index errors,
// out-of-range constants, the scale rule, swapped helper arguments, undefined returns, Python-isms, and
// TypeScript's own errors. Used by the language server and by `rewardsmith lint`. Every schema fact comes
// from runner/src/schema.ts; this module only knows how reward code goes wrong.
import ts from 'typescript';
import {
  NEAREST_ENTRY,
  PARAMETERS,
  POSITION_ENTRY,
  SCALE_RULE,
  loadSchema,
  suggestNames,
  type ObservationSchema,
  type Range as ValueRange,
} from '../schema';
import { RewardError, compileRewardFile } from '../reward/compile';
import { IMPLICIT_ANY_CODES, RewardProject, schemaParameter, type Snapshot } from './analysis';

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
  source: 'rewardsmith';
  fixes: Fix[];
}

/** Rule ids and what they catch; the fixture corpus annotates defects with these ids. */
export const RULES = {
  'unknown-name': 'a key that is not a Minecraft name of the kind the dict holds',
  'wrong-kind-name': 'a real name of the wrong kind (an item as a nearest-blocks key, …)',
  'global-data-uninitialised': 'a GLOBAL_DATA key read before anything can have stored it',
  'nearest-entry-unchecked': 'a nearest-blocks entry used without checking it is present',
  'index-out-of-range': 'an index past the end of a nearest-blocks or position entry',
  'negative-index': '`arr[-1]` (undefined in JavaScript)',
  'constant-condition': 'a comparison with a constant outside the field\'s range',
  'scale-swapped': 'dense weighted 1 and sparse 0.1',
  'scale-unscaled': 'dense and sparse combined without Math.sign or with other weights',
  'swapped-arguments': 'a helper call whose schema arguments are in the wrong order',
  'undefined-return': 'a function feeding the reward that can return undefined',
  'python-ism': 'Python in a JavaScript/TypeScript reward (len, np.sign, True, and, …)',
  'reward-contract': 'the file does not export reward_function (or dense and sparse) with the contract\'s parameters, or imports modules',
} as const;

/** Contract results by file, keyed by what the contract depends on (imports and exported signatures). */
const contractCache = new Map<string, { key: string; error: { line: number; column: number; message: string } | null }>();

export type RuleId = keyof typeof RULES;

const PYTHON_MATH = new Set(['sign', 'abs', 'sqrt', 'floor', 'ceil', 'exp', 'log', 'log2', 'log10', 'min', 'max', 'hypot', 'atan2', 'atan', 'asin', 'acos', 'sin', 'cos', 'tan', 'round', 'pow', 'pi', 'e', 'inf']);
const PYTHON_BUILTIN_MATH = new Set(['abs', 'min', 'max', 'round', 'pow']);
const PYTHON_CONSTANTS: Record<string, string> = { True: 'true', False: 'false', None: 'undefined' };
const PYTHON_OPERATORS: Record<string, string> = { and: '&&', or: '||', not: '!', elif: 'else if' };
const PYTHON_DICT_METHODS = new Set(['get', 'keys', 'items', 'values', 'setdefault', 'update']);
const OBJECT_METHODS = new Set(['hasOwnProperty', 'toString', 'valueOf', 'propertyIsEnumerable', 'isPrototypeOf', 'constructor']);

export type DictKeys = 'nearby' | 'item' | 'mob';

const KIND_WORDS: Record<DictKeys, string> = { nearby: 'a block or mob', item: 'an item', mob: 'a mob' };
const KIND_PLURALS: Record<DictKeys, string> = { nearby: 'block and mob names', item: 'item names', mob: 'mob names' };

function skipParens(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
  return e;
}

function parentSkippingParens(node: ts.Node): ts.Node {
  let p = node.parent;
  while (p && (ts.isParenthesizedExpression(p) || ts.isNonNullExpression(p))) p = p.parent;
  return p;
}

function numericValue(e: ts.Expression): number | undefined {
  e = skipParens(e);
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand)) {
    if (e.operator === ts.SyntaxKind.MinusToken) return -Number(e.operand.text);
    if (e.operator === ts.SyntaxKind.PlusToken) return Number(e.operand.text);
  }
  return undefined;
}

function stringKey(e: ts.Expression): string | undefined {
  e = skipParens(e);
  return ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) ? e.text : undefined;
}

function isFunctionLike(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n);
}

function alwaysExits(s: ts.Statement): boolean {
  if (ts.isReturnStatement(s) || ts.isThrowStatement(s) || ts.isContinueStatement(s) || ts.isBreakStatement(s)) return true;
  if (ts.isBlock(s)) return s.statements.length > 0 && alwaysExits(s.statements[s.statements.length - 1]!);
  if (ts.isIfStatement(s)) return !!s.elseStatement && alwaysExits(s.thenStatement) && alwaysExits(s.elseStatement);
  return false;
}

function fmt(n: number): string {
  return String(Number(n.toFixed(2)));
}

function rangeText(r: ValueRange): string {
  return `${fmt(r.min)}..${fmt(r.max)} ${r.unit}`;
}

/** A value with a schema range: a scalar parameter or an element of an entry. */
export interface Field {
  label: string;
  range: ValueRange;
  doc: string;
}

class Linter {
  readonly out: RewardDiagnostic[] = [];
  private readonly sf: ts.SourceFile;
  private readonly checker: ts.TypeChecker;
  private readonly seen = new Set<string>();
  /** Ranges of Python-isms whose lines TypeScript's parse errors are noise on. */
  private readonly pythonLines = new Set<number>();
  private readonly pythonOperatorLines = new Set<number>();
  private readonly badNames: { name: string; keys: DictKeys; fixes: Fix[] }[] = [];

  constructor(
    private readonly snap: Snapshot,
    private readonly schema: ObservationSchema,
  ) {
    this.sf = snap.sourceFile;
    this.checker = snap.checker;
  }

  run(): RewardDiagnostic[] {
    const globalAccesses: ts.Expression[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isElementAccessExpression(node)) this.elementAccess(node);
      if (ts.isPropertyAccessExpression(node)) this.propertyAccess(node);
      if ((ts.isElementAccessExpression(node) || ts.isPropertyAccessExpression(node)) && this.isGlobalData(node.expression)) globalAccesses.push(node);
      if (ts.isBinaryExpression(node)) this.binary(node);
      if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) this.destructuredKeys(node.name, node.initializer);
      if (ts.isCallExpression(node)) this.call(node);
      if (ts.isIdentifier(node)) this.identifier(node);
      ts.forEachChild(node, visit);
    };
    visit(this.sf);
    this.renameEverywhere();
    this.globalData(globalAccesses);
    this.bareReturns();
    this.scaleRule();
    this.contract();
    this.pythonOperators();
    this.typescript();
    // On a line with `and`/`or`/`not` the parse is broken, so other findings there are noise.
    const noisy = (d: RewardDiagnostic) => d.code !== 'python-ism' && this.pythonOperatorLines.has(d.range.start.line);
    for (let i = this.out.length - 1; i >= 0; i--) if (noisy(this.out[i]!)) this.out.splice(i, 1);
    this.out.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
    return this.out;
  }

  private report(node: ts.Node | [number, number], code: RuleId | string, severity: Severity, message: string, fixes: Fix[] = []): void {
    const [start, end] = Array.isArray(node) ? node : [node.getStart(this.sf), node.getEnd()];
    const key = `${code}@${start}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.out.push({ range: this.snap.range(start, end), severity, code, message, source: 'rewardsmith', fixes });
  }

  private replace(node: ts.Node, newText: string): TextEdit {
    return { range: this.snap.nodeRange(node), newText };
  }

  // ----- schema types ------------------------------------------------------------------------------------

  dictKeys(e: ts.Expression): DictKeys | undefined {
    const type = this.checker.getTypeAtLocation(e);
    for (const p of PARAMETERS) if (p.keys && this.snap.isSchemaType(type, p.tsType)) return p.keys;
    return undefined;
  }

  private isType(e: ts.Node, alias: string): boolean {
    return this.snap.isSchemaType(this.checker.getTypeAtLocation(e), alias);
  }

  private isGlobalData(e: ts.Expression): boolean {
    e = skipParens(e);
    return ts.isIdentifier(e) && e.text === 'GLOBAL_DATA' && this.isParameterRef(e);
  }

  private isParameterRef(id: ts.Identifier): boolean {
    const decl = this.checker.getSymbolAtLocation(id)?.valueDeclaration;
    return !!decl && ts.isParameter(decl);
  }

  private declarationOf(id: ts.Identifier): ts.Declaration | undefined {
    const sym = this.checker.getSymbolAtLocation(id);
    return sym?.valueDeclaration ?? sym?.declarations?.[0];
  }

  // ----- names -------------------------------------------------------------------------------------------

  private checkName(keyNode: ts.Node, name: string, keys: DictKeys, dictText: string): void {
    const valid = this.schema.namesFor(keys);
    if (valid.has(name)) return;
    const suggestions = suggestNames(name, valid);
    const didYouMean = suggestions.length ? ` Did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
    const kinds = this.schema.kindsOf(name);
    const quote = ts.isIdentifier(keyNode) ? '' : this.snap.userTextOf(keyNode).charAt(0);
    const shorthand = ts.isBindingElement(keyNode.parent) && !keyNode.parent.propertyName && keyNode.parent.name === keyNode;
    const fixes: Fix[] = suggestions.map((s, i) => ({
      title: `Change '${name}' to '${s}'`,
      // `const { magma } = cnb` keeps its local name: `const { lava: magma } = cnb`.
      edits: [this.replace(keyNode, shorthand ? `${s}: ${name}` : ts.isIdentifier(keyNode) ? s : `${quote}${s}${quote}`)],
      preferred: i === 0,
    }));
    this.badNames.push({ name, keys, fixes });
    if (kinds.length > 0) {
      const what = kinds.includes('block') ? (keys === 'item' ? 'a block that is never an item' : 'a block') : kinds.includes('item') ? 'an item' : 'a mob';
      this.report(keyNode, 'wrong-kind-name', 'error', `'${name}' is ${what}, not ${KIND_WORDS[keys]}: ${dictText} never has it.${didYouMean}`, fixes);
    } else {
      this.report(keyNode, 'unknown-name', 'error', `'${name}' is not a Minecraft ${this.schema.gameVersion} name (${dictText} keys are ${KIND_PLURALS[keys]}).${didYouMean}`, fixes);
    }
  }

  /** Literal names a loop variable or callback parameter takes: `for (const n of ['oak_log', …])`. */
  private literalValuesOf(id: ts.Identifier): ts.Expression[] {
    const decl = this.declarationOf(id);
    if (!decl) return [];
    let source: ts.Expression | undefined;
    // `const target = 'cow'; … current_nearest_blocks[target]`
    if (ts.isVariableDeclaration(decl) && decl.initializer && stringKey(decl.initializer) !== undefined && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) return [decl.initializer];
    if (ts.isVariableDeclaration(decl) && ts.isVariableDeclarationList(decl.parent) && ts.isForOfStatement(decl.parent.parent)) source = decl.parent.parent.expression;
    else if (ts.isParameter(decl) && (ts.isArrowFunction(decl.parent) || ts.isFunctionExpression(decl.parent)) && decl.parent.parameters[0] === decl) {
      const call = decl.parent.parent;
      if (ts.isCallExpression(call) && ts.isPropertyAccessExpression(call.expression) && call.arguments[0] === decl.parent) source = call.expression.expression;
    }
    if (!source) return [];
    source = skipParens(source);
    if (ts.isIdentifier(source)) {
      const d = this.declarationOf(source);
      if (d && ts.isVariableDeclaration(d) && d.initializer && ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const) source = skipParens(d.initializer);
    }
    return ts.isArrayLiteralExpression(source) ? source.elements.filter((e) => stringKey(e) !== undefined) : [];
  }

  private keyUse(dict: ts.Expression, keyExpr: ts.Expression, keys: DictKeys): void {
    const key = stringKey(keyExpr);
    const dictText = this.snap.userTextOf(dict);
    if (key !== undefined) this.checkName(keyExpr, key, keys, dictText);
    else if (ts.isIdentifier(skipParens(keyExpr))) for (const lit of this.literalValuesOf(skipParens(keyExpr) as ts.Identifier)) this.checkName(lit, stringKey(lit)!, keys, dictText);
  }

  private destructuredKeys(pattern: ts.ObjectBindingPattern, init: ts.Expression): void {
    const keys = this.dictKeys(init);
    if (!keys) return;
    for (const el of pattern.elements) {
      const prop = el.propertyName ?? el.name;
      if (ts.isIdentifier(prop) || ts.isStringLiteral(prop)) this.checkName(prop, prop.text, keys, this.snap.userTextOf(init));
    }
  }

  /** A wrong name is usually written more than once: each rename fix renames every occurrence. */
  private renameEverywhere(): void {
    const groups = new Map<string, Fix[][]>();
    for (const b of this.badNames) {
      const key = `${b.keys}:${b.name}`;
      groups.set(key, [...(groups.get(key) ?? []), b.fixes]);
    }
    for (const members of groups.values()) {
      if (members.length < 2) continue;
      const combined = members[0]!.map((_f, i) => {
        const edits = members.flatMap((m) => m[i]?.edits ?? []);
        return edits.filter((e, k) => edits.findIndex((o) => JSON.stringify(o.range) === JSON.stringify(e.range)) === k);
      });
      for (const fixes of members) fixes.forEach((f, i) => ((f.edits = combined[i]!), (f.title += ` (${members.length} places)`)));
    }
  }

  // ----- accesses ----------------------------------------------------------------------------------------

  private elementAccess(node: ts.ElementAccessExpression): void {
    const keys = this.dictKeys(node.expression);
    if (keys) {
      this.keyUse(node.expression, node.argumentExpression, keys);
      if (keys === 'nearby') this.entryUse(node);
    }
    const index = numericValue(node.argumentExpression);
    if (index === undefined) return;
    if (index < 0 && Number.isInteger(index)) {
      const bracketStart = node.questionDotToken ? node.questionDotToken.getStart(this.sf) : node.expression.getEnd();
      const fix: Fix = { title: `Use .at(${index})`, edits: [{ range: this.snap.range(bracketStart, node.getEnd()), newText: `${node.questionDotToken ? '?.' : '.'}at(${index})` }], preferred: true };
      this.report(node.argumentExpression, 'negative-index', 'error', `${this.snap.userTextOf(node)} is undefined in JavaScript (negative indices do not count from the end); use .at(${index}).`, [fix]);
      return;
    }
    for (const [alias, layout, what] of [['NearestEntry', NEAREST_ENTRY, 'nearest-blocks entries'], ['AgentPosition', POSITION_ENTRY, 'past_agent_positions entries']] as const) {
      if (index >= layout.length && this.isType(node.expression, alias)) {
        this.report(node.argumentExpression, 'index-out-of-range', 'error', `${what} have exactly ${layout.length} elements [${layout.map((f) => f.name).join(', ')}]: index ${index} is undefined.`);
      }
    }
  }

  private propertyAccess(node: ts.PropertyAccessExpression): void {
    if (ts.isCallExpression(node.parent) && node.parent.expression === node) {
      const name = node.name.text;
      if (OBJECT_METHODS.has(name) || PYTHON_DICT_METHODS.has(name)) return;
    }
    const keys = this.dictKeys(node.expression);
    if (!keys) return;
    this.checkName(node.name, node.name.text, keys, this.snap.userTextOf(node.expression));
    if (keys === 'nearby') this.entryUse(node);
  }

  // ----- nearest-entry presence --------------------------------------------------------------------------

  /** Reference path for guard matching: `v:cnb|lava`, `v:e`, `v:cnb|#name`. */
  private refOf(e: ts.Expression): string | undefined {
    e = skipParens(e);
    if (ts.isIdentifier(e)) return `v:${e.text}`;
    if (ts.isPropertyAccessExpression(e)) {
      const base = this.refOf(e.expression);
      return base && `${base}|${e.name.text}`;
    }
    if (ts.isElementAccessExpression(e)) {
      const base = this.refOf(e.expression);
      if (!base) return undefined;
      const key = stringKey(e.argumentExpression);
      if (key !== undefined) return `${base}|${key}`;
      const arg = skipParens(e.argumentExpression);
      if (ts.isIdentifier(arg)) return `${base}|#${arg.text}`;
    }
    return undefined;
  }

  private keyRef(dict: ts.Expression, key: ts.Expression): string | undefined {
    const base = this.refOf(dict);
    if (!base) return undefined;
    const k = stringKey(key);
    if (k !== undefined) return `${base}|${k}`;
    const id = skipParens(key);
    return ts.isIdentifier(id) ? `${base}|#${id.text}` : undefined;
  }

  /** Refs known to be present (not undefined) when `cond` evaluates to `when`. */
  private implies(cond: ts.Expression, when: boolean): Set<string> {
    const out = new Set<string>();
    const add = (r: string | undefined) => r && out.add(r);
    const e = skipParens(cond);
    if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) return this.implies(e.operand, !when);
    if (ts.isBinaryExpression(e)) {
      const op = e.operatorToken.kind;
      if (op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken) {
        const conj = op === ts.SyntaxKind.AmpersandAmpersandToken;
        const l = this.implies(e.left, when);
        const r = this.implies(e.right, when);
        if (conj === when) return new Set([...l, ...r]);
        return new Set([...l].filter((x) => r.has(x)));
      }
      if (op === ts.SyntaxKind.InKeyword && when) add(this.keyRef(e.right, e.left));
      const isNullish = (x: ts.Expression) => {
        x = skipParens(x);
        return x.kind === ts.SyntaxKind.NullKeyword || (ts.isIdentifier(x) && x.text === 'undefined') || (ts.isVoidExpression(x));
      };
      const typeofUndefined = (x: ts.Expression, y: ts.Expression) => ts.isTypeOfExpression(skipParens(x)) && stringKey(y) === 'undefined';
      const negative = op === ts.SyntaxKind.ExclamationEqualsEqualsToken || op === ts.SyntaxKind.ExclamationEqualsToken;
      const positive = op === ts.SyntaxKind.EqualsEqualsEqualsToken || op === ts.SyntaxKind.EqualsEqualsToken;
      if ((negative && when) || (positive && !when)) {
        if (isNullish(e.right)) add(this.refOf(e.left));
        if (isNullish(e.left)) add(this.refOf(e.right));
        if (typeofUndefined(e.left, e.right)) add(this.refOf((skipParens(e.left) as ts.TypeOfExpression).expression));
        if (typeofUndefined(e.right, e.left)) add(this.refOf((skipParens(e.right) as ts.TypeOfExpression).expression));
      }
      // `cnb.lava?.[0] < 3` (or `=== 2`) is only true when the entry is there.
      const relational = [ts.SyntaxKind.LessThanToken, ts.SyntaxKind.LessThanEqualsToken, ts.SyntaxKind.GreaterThanToken, ts.SyntaxKind.GreaterThanEqualsToken].includes(op);
      if (when && (relational || (positive && !isNullish(e.left) && !isNullish(e.right)))) {
        for (const side of [e.left, e.right]) {
          const s = skipParens(side);
          if ((ts.isElementAccessExpression(s) || ts.isPropertyAccessExpression(s)) && s.questionDotToken) add(this.refOf(s.expression));
          if (ts.isElementAccessExpression(s) || ts.isPropertyAccessExpression(s)) {
            const inner = skipParens(s.expression);
            if ((ts.isElementAccessExpression(inner) || ts.isPropertyAccessExpression(inner)) && ts.isOptionalChain(s)) add(this.refOf(inner));
          }
        }
      }
      return out;
    }
    if (ts.isCallExpression(e) && when) {
      const callee = e.expression;
      const args = e.arguments;
      if (ts.isPropertyAccessExpression(callee)) {
        const m = callee.name.text;
        const obj = skipParens(callee.expression);
        if (m === 'hasOwnProperty' && args[0]) add(this.keyRef(obj, args[0]));
        if (m === 'hasOwn' && ts.isIdentifier(obj) && obj.text === 'Object' && args[0] && args[1]) add(this.keyRef(args[0], args[1]));
        if (m === 'call' && ts.isPropertyAccessExpression(obj) && obj.name.text === 'hasOwnProperty' && args[0] && args[1]) add(this.keyRef(args[0], args[1]));
        if (m === 'includes' && args[0]) {
          // Object.keys(D).includes(k), also through `const names = Object.keys(D)`.
          let keysCall: ts.Expression = obj;
          if (ts.isIdentifier(obj)) {
            const d = this.declarationOf(obj);
            if (d && ts.isVariableDeclaration(d) && d.initializer && ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const) keysCall = skipParens(d.initializer);
          }
          if (ts.isCallExpression(keysCall) && ts.isPropertyAccessExpression(keysCall.expression) && keysCall.expression.name.text === 'keys' && keysCall.arguments[0]) add(this.keyRef(keysCall.arguments[0], args[0]));
        }
        if (m === 'isArray' && ts.isIdentifier(obj) && obj.text === 'Array' && args[0]) add(this.refOf(args[0]));
      }
      return out;
    }
    if (when) add(this.refOf(e));
    // `x?.[0]` as a truth value also proves x is there.
    if (when && (ts.isElementAccessExpression(e) || ts.isPropertyAccessExpression(e)) && e.questionDotToken) add(this.refOf(e.expression));
    return out;
  }

  /** Is `node` only evaluated when one of `refs` is known present? */
  private isGuarded(node: ts.Node, refs: (string | undefined)[]): boolean {
    const wanted = refs.filter((r): r is string => !!r);
    if (wanted.length === 0) return false;
    const hit = (s: Set<string>) => wanted.some((r) => s.has(r));
    let child: ts.Node = node;
    let parent: ts.Node | undefined = node.parent;
    while (parent) {
      if (ts.isIfStatement(parent)) {
        if (child === parent.thenStatement && hit(this.implies(parent.expression, true))) return true;
        if (child === parent.elseStatement && hit(this.implies(parent.expression, false))) return true;
      } else if (ts.isConditionalExpression(parent)) {
        if (child === parent.whenTrue && hit(this.implies(parent.condition, true))) return true;
        if (child === parent.whenFalse && hit(this.implies(parent.condition, false))) return true;
      } else if (ts.isBinaryExpression(parent) && child === parent.right) {
        const op = parent.operatorToken.kind;
        if (op === ts.SyntaxKind.AmpersandAmpersandToken && hit(this.implies(parent.left, true))) return true;
        if (op === ts.SyntaxKind.BarBarToken && hit(this.implies(parent.left, false))) return true;
      } else if (ts.isWhileStatement(parent) && child === parent.statement && hit(this.implies(parent.expression, true))) {
        return true;
      } else if (ts.isForStatement(parent) && child === parent.statement && parent.condition && hit(this.implies(parent.condition, true))) {
        return true;
      }
      if (ts.isBlock(parent) || ts.isSourceFile(parent) || ts.isCaseClause(parent) || ts.isDefaultClause(parent)) {
        for (const s of parent.statements) {
          if (s === child) break;
          if (ts.isIfStatement(s) && !s.elseStatement && alwaysExits(s.thenStatement) && hit(this.implies(s.expression, false))) return true;
        }
      }
      child = parent;
      parent = parent.parent;
    }
    return false;
  }

  /** Is the key of `D[key]` one that iterating D produced (`for (const k in D)`, `Object.keys(D)`)? */
  private keyFromDict(access: ts.ElementAccessExpression): boolean {
    const key = skipParens(access.argumentExpression);
    if (!ts.isIdentifier(key)) return false;
    const decl = this.declarationOf(key);
    const dictRef = this.refOf(access.expression);
    if (!decl || !dictRef) return false;
    const isKeysOf = (e: ts.Expression) => {
      e = skipParens(e);
      return ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.name.text === 'keys' && !!e.arguments[0] && this.refOf(e.arguments[0]) === dictRef;
    };
    if (ts.isVariableDeclaration(decl) && ts.isVariableDeclarationList(decl.parent)) {
      const loop = decl.parent.parent;
      if (ts.isForInStatement(loop)) return this.refOf(loop.expression) === dictRef;
      if (ts.isForOfStatement(loop)) return isKeysOf(loop.expression);
    }
    if (ts.isParameter(decl) && (ts.isArrowFunction(decl.parent) || ts.isFunctionExpression(decl.parent)) && decl.parent.parameters[0] === decl) {
      const call = decl.parent.parent;
      if (!ts.isCallExpression(call) || !ts.isPropertyAccessExpression(call.expression)) return false;
      const receiver = skipParens(call.expression.expression);
      if (isKeysOf(receiver)) return true;
      // NAMES.filter((n) => n in D).map((n) => D[n][0]): the filter kept only present keys.
      if (ts.isCallExpression(receiver) && ts.isPropertyAccessExpression(receiver.expression) && receiver.expression.name.text === 'filter') {
        const test = receiver.arguments[0];
        if (test && (ts.isArrowFunction(test) || ts.isFunctionExpression(test)) && test.parameters[0] && ts.isIdentifier(test.parameters[0].name)) {
          const body = ts.isBlock(test.body) ? test.body.statements.find(ts.isReturnStatement)?.expression : test.body;
          return !!body && this.implies(body, true).has(`${dictRef}|#${test.parameters[0].name.text}`);
        }
      }
    }
    return false;
  }

  /** Where an entry value is used in a way that throws when it is undefined. */
  private unsafeUse(value: ts.Expression): boolean {
    const p = parentSkippingParens(value);
    if ((ts.isElementAccessExpression(p) || ts.isPropertyAccessExpression(p)) && skipParens(p.expression) === value) return !p.questionDotToken;
    if (ts.isVariableDeclaration(p) && p.initializer && skipParens(p.initializer) === value) return ts.isArrayBindingPattern(p.name) || ts.isObjectBindingPattern(p.name);
    if (ts.isSpreadElement(p) || (ts.isForOfStatement(p) && skipParens(p.expression) === value)) return true;
    if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken && skipParens(p.right) === value) return ts.isArrayLiteralExpression(p.left);
    return false;
  }

  private entryUse(access: ts.ElementAccessExpression | ts.PropertyAccessExpression): void {
    if (ts.isElementAccessExpression(access) && this.keyFromDict(access)) return;
    const p = parentSkippingParens(access);
    if (ts.isBinaryExpression(p) && p.left === access && p.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && p.operatorToken.kind <= ts.SyntaxKind.LastAssignment) return;
    const ref = this.refOf(access);
    const key = ts.isElementAccessExpression(access) ? stringKey(access.argumentExpression) : access.name.text;
    const dictText = this.snap.userTextOf(access.expression);
    const check = key !== undefined ? `'${key}' in ${dictText}` : `${this.snap.userTextOf(access)} !== undefined`;
    const what = key !== undefined ? `no ${key} is visible` : 'that name is not visible';
    if (this.unsafeUse(access)) {
      if (!this.isGuarded(access, [ref])) this.reportEntry(access, check, `${this.snap.userTextOf(access)} is absent when ${what}; check ${check} first (reading it throws a TypeError).`);
      return;
    }
    // `const e = cnb.lava;` then `e[0]`: follow the alias unless it is reassigned.
    if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name) && p.initializer && skipParens(p.initializer) === access) {
      const sym = this.checker.getSymbolAtLocation(p.name);
      const scope = ts.findAncestor(p, (n) => ts.isBlock(n) || ts.isSourceFile(n) || isFunctionLike(n)) ?? this.sf;
      const uses: ts.Identifier[] = [];
      let reassigned = false;
      const find = (n: ts.Node) => {
        if (ts.isIdentifier(n) && n !== p.name && n.text === (p.name as ts.Identifier).text && this.checker.getSymbolAtLocation(n) === sym) {
          const up = parentSkippingParens(n);
          if (ts.isBinaryExpression(up) && up.left === n && up.operatorToken.kind === ts.SyntaxKind.EqualsToken) reassigned = true;
          else uses.push(n);
        }
        ts.forEachChild(n, find);
      };
      find(scope);
      if (reassigned || this.isGuarded(p, [ref])) return;
      for (const use of uses) {
        if (this.unsafeUse(use) && !this.isGuarded(use, [`v:${use.text}`, ref])) {
          this.reportEntry(use, `${use.text} !== undefined`, `${use.text} (= ${this.snap.userTextOf(access)}) is undefined when ${what}; check it before use (reading it throws a TypeError).`);
        }
      }
    }
  }

  private reportEntry(use: ts.Expression, check: string, message: string): void {
    const fixes: Fix[] = [];
    const p = parentSkippingParens(use);
    // In a condition: guard it (`if ('lava' in cnb && cnb.lava[0] < 3)`).
    const condition = ts.findAncestor(use, (n) => {
      const up = n.parent;
      return !!up && (ts.isIfStatement(up) || ts.isWhileStatement(up)) && up.expression === n ? true : isFunctionLike(n) || ts.isStatement(n) ? 'quit' : false;
    }) as ts.Expression | undefined;
    if (condition) {
      const cond = this.snap.userTextOf(condition);
      const wrapped = /\|\||\?/.test(cond) ? `(${cond})` : cond;
      fixes.push({ title: `Check first: if (${check} && …)`, edits: [this.replace(condition, `${check} && ${wrapped}`)], preferred: true });
    }
    if ((ts.isElementAccessExpression(p) || ts.isPropertyAccessExpression(p)) && !p.questionDotToken) {
      const text = this.snap.userTextOf(p);
      const base = this.snap.userTextOf(use);
      const rest = text.slice(base.length);
      const replaced = ts.isElementAccessExpression(p) ? `${base}?.${rest}` : `${base}?${rest}`;
      fixes.push({ title: `Use optional chaining: ${replaced}`, edits: [this.replace(p, replaced)], preferred: !condition });
    }
    // A statement in a helper or the reward function: leave early with no reward when the entry is absent.
    const statement = ts.findAncestor(use, (n) => ts.isStatement(n) && ts.isBlock(n.parent));
    if (!condition && statement && ts.findAncestor(statement, isFunctionLike)) {
      const start = this.snap.position(this.snap.toUser(statement.getStart(this.sf)));
      const indent = /^\s*/.exec(this.snap.lineText(start.line))![0];
      const negated = check.includes(' in ') ? `!(${check})` : check.replace('!==', '===');
      fixes.push({
        title: `Return 0 when it is absent: if (${negated}) return 0;`,
        edits: [{ range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: `${indent}if (${negated}) return 0;\n` }],
        preferred: fixes.length === 0,
      });
    }
    this.report(use, 'nearest-entry-unchecked', 'error', message, fixes);
  }

  // ----- comparisons -------------------------------------------------------------------------------------

  fieldOf(e: ts.Expression, depth = 0): Field | undefined {
    e = skipParens(e);
    if (depth > 4) return undefined;
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.getText(this.sf) === 'Math.abs' && e.arguments[0]) {
      const f = this.fieldOf(e.arguments[0], depth + 1);
      return f && { ...f, label: `|${f.label}|`, range: { ...f.range, min: Math.max(0, f.range.min), max: Math.max(Math.abs(f.range.min), Math.abs(f.range.max)) } };
    }
    if (ts.isElementAccessExpression(e)) {
      const index = numericValue(e.argumentExpression);
      if (index === undefined) return undefined;
      if (this.isType(e.expression, 'NearestEntry')) return this.entryField(NEAREST_ENTRY, index);
      if (this.isType(e.expression, 'AgentPosition')) return this.entryField(POSITION_ENTRY, index);
      return undefined;
    }
    if (!ts.isIdentifier(e)) return undefined;
    const decl = this.declarationOf(e);
    if (!decl) return undefined;
    if (ts.isParameter(decl) && ts.isIdentifier(decl.name)) {
      const spec = schemaParameter(decl.name.text);
      return spec?.range && { label: spec.name, range: spec.range, doc: spec.doc };
    }
    if (ts.isVariableDeclaration(decl) && decl.initializer && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) return this.fieldOf(decl.initializer, depth + 1);
    if (ts.isBindingElement(decl) && ts.isArrayBindingPattern(decl.parent)) {
      const index = decl.parent.elements.indexOf(decl);
      const pattern = decl.parent;
      if (this.isType(pattern, 'NearestEntry')) return this.entryField(NEAREST_ENTRY, index);
      if (this.isType(pattern, 'AgentPosition')) return this.entryField(POSITION_ENTRY, index);
    }
    return undefined;
  }

  private entryField(layout: typeof NEAREST_ENTRY, index: number): Field | undefined {
    const f = layout[index];
    return f && { label: f.name, range: f.range, doc: f.doc };
  }

  private binary(node: ts.BinaryExpression): void {
    const op = node.operatorToken.kind;
    if (op === ts.SyntaxKind.InKeyword) {
      const keys = this.dictKeys(node.right);
      if (keys) this.keyUse(node.right, node.left, keys);
      return;
    }
    const ops: Partial<Record<ts.SyntaxKind, (a: number, b: number) => boolean>> = {
      [ts.SyntaxKind.LessThanToken]: (a, b) => a < b,
      [ts.SyntaxKind.LessThanEqualsToken]: (a, b) => a <= b,
      [ts.SyntaxKind.GreaterThanToken]: (a, b) => a > b,
      [ts.SyntaxKind.GreaterThanEqualsToken]: (a, b) => a >= b,
      [ts.SyntaxKind.EqualsEqualsEqualsToken]: (a, b) => a === b,
      [ts.SyntaxKind.EqualsEqualsToken]: (a, b) => a === b,
      [ts.SyntaxKind.ExclamationEqualsEqualsToken]: (a, b) => a !== b,
      [ts.SyntaxKind.ExclamationEqualsToken]: (a, b) => a !== b,
    };
    const compare = ops[op];
    if (!compare) return;
    for (const [fieldSide, constSide, fieldLeft] of [[node.left, node.right, true], [node.right, node.left, false]] as const) {
      const value = numericValue(constSide);
      if (value === undefined) continue;
      const field = this.fieldOf(fieldSide);
      if (!field || (value >= field.range.min && value <= field.range.max)) continue;
      // Outside the range, the comparison has the same result at both ends of it, i.e. always.
      const at = (x: number) => (fieldLeft ? compare(x, value) : compare(value, x));
      const result = at(field.range.min);
      if (result !== at(field.range.max)) continue;
      const fixes: Fix[] = [];
      let hint = '';
      if (field.range.unit === 'rad' && Math.abs(value) <= 360) {
        hint = ` ${value} looks like degrees; in radians that is ${fmt((value * Math.PI) / 180)}.`;
        fixes.push({ title: `Convert ${value}° to radians`, edits: [this.replace(constSide, `(${value} * Math.PI / 180)`)], preferred: true });
      }
      this.report(node, 'constant-condition', 'warning', `${field.label} is ${rangeText(field.range)}, so \`${this.snap.userTextOf(node)}\` is always ${result}.${hint}`, fixes);
      return;
    }
  }

  // ----- calls -------------------------------------------------------------------------------------------

  private call(node: ts.CallExpression): void {
    const callee = skipParens(node.expression);
    // Python builtins and modules: len(x), abs(x), np.sign(x), math.sqrt(x).
    if (ts.isIdentifier(callee) && !this.checker.getSymbolAtLocation(callee)) {
      const arg = node.arguments[0];
      if (callee.text === 'len' && arg && node.arguments.length === 1) {
        const argText = this.snap.userTextOf(arg);
        const wrapped = /^[\w.$\[\]'"]+$/.test(argText) ? argText : `(${argText})`;
        const replacement = this.dictKeys(arg) || this.isGlobalData(arg) ? `Object.keys(${argText}).length` : `${wrapped}.length`;
        this.python(node, `len() is Python; in JavaScript write ${replacement}.`, replacement);
      } else if (PYTHON_BUILTIN_MATH.has(callee.text)) {
        this.python(callee, `${callee.text}() is Python; in JavaScript it is Math.${callee.text}().`, `Math.${callee.text}`);
      }
    }
    if (ts.isPropertyAccessExpression(callee)) {
      const obj = skipParens(callee.expression);
      const method = callee.name.text;
      if ((this.dictKeys(obj) || this.isGlobalData(obj)) && PYTHON_DICT_METHODS.has(method)) this.pythonDictMethod(node, obj, method);
    }
    this.swappedArguments(node);
  }

  private python(node: ts.Node, message: string, replacement: string): void {
    this.pythonLines.add(this.snap.nodeRange(node).start.line);
    this.report(node, 'python-ism', 'error', message, [{ title: `Replace with ${replacement}`, edits: [this.replace(node, replacement)], preferred: true }]);
  }

  private pythonDictMethod(node: ts.CallExpression, obj: ts.Expression, method: string): void {
    const objText = this.snap.userTextOf(obj);
    const [a, b] = node.arguments.map((x) => this.snap.userTextOf(x));
    const replacement =
      method === 'get' && a !== undefined ? (b !== undefined ? `(${objText}[${a}] ?? ${b})` : `${objText}[${a}]`)
      : method === 'keys' ? `Object.keys(${objText})`
      : method === 'items' ? `Object.entries(${objText})`
      : method === 'values' ? `Object.values(${objText})`
      : undefined;
    const message = `${objText}.${method}() is a Python dict method; a JavaScript object has none${replacement ? `: write ${replacement}` : ''}.`;
    this.pythonLines.add(this.snap.nodeRange(node).start.line);
    this.report(node, 'python-ism', 'error', message, replacement ? [{ title: `Replace with ${replacement}`, edits: [this.replace(node, replacement)], preferred: true }] : []);
  }

  private identifier(node: ts.Identifier): void {
    const parent = node.parent;
    if (ts.isPropertyAccessExpression(parent) && parent.name === node) return;
    if (ts.isPropertyAssignment(parent) && parent.name === node) return;
    const constant = PYTHON_CONSTANTS[node.text];
    if (constant !== undefined && !this.checker.getSymbolAtLocation(node)) {
      this.python(node, `${node.text} is Python; in JavaScript write ${constant}.`, constant);
      return;
    }
    // np.sign(x), numpy.abs(x), math.sqrt(x), math.pi: the Math object.
    if (['np', 'numpy', 'math'].includes(node.text) && ts.isPropertyAccessExpression(parent) && parent.expression === node && !this.checker.getSymbolAtLocation(node)) {
      const member = parent.name.text;
      if (!PYTHON_MATH.has(member)) return;
      const js = member === 'pi' ? 'Math.PI' : member === 'e' ? 'Math.E' : member === 'inf' ? 'Infinity' : `Math.${member}`;
      this.python(parent, `${node.text}.${member} is Python; in JavaScript it is ${js}.`, js);
    }
  }

  /** Python's `and`, `or`, `not`, `elif`: TypeScript only sees parse errors; find them as tokens. */
  private pythonOperators(): void {
    const text = this.snap.text;
    const declared = new Set<string>();
    const collect = (n: ts.Node) => {
      if ((ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isFunctionDeclaration(n) || ts.isBindingElement(n)) && n.name && ts.isIdentifier(n.name)) declared.add(n.name.text);
      ts.forEachChild(n, collect);
    };
    collect(this.sf);
    const scanner = ts.createScanner(ts.ScriptTarget.ES2022, true, ts.LanguageVariant.Standard, text);
    let previous = ts.SyntaxKind.Unknown;
    for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
      if (kind === ts.SyntaxKind.Identifier && previous !== ts.SyntaxKind.DotToken && previous !== ts.SyntaxKind.QuestionDotToken) {
        const word = scanner.getTokenValue();
        if (word === 'def' && /^\s+\w+\s*\(/.test(text.slice(scanner.getTokenEnd())) && !declared.has('def')) {
          const start = scanner.getTokenStart();
          const line = this.snap.position(start).line;
          this.pythonLines.add(line);
          this.pythonOperatorLines.add(line);
          this.out.push({ range: { start: this.snap.position(start), end: this.snap.position(scanner.getTokenEnd()) }, severity: 'error', code: 'python-ism', source: 'rewardsmith', message: "'def' is Python: reward files are TypeScript or JavaScript (`export function reward_function(...) { ... }`).", fixes: [] });
        }
        const js = PYTHON_OPERATORS[word];
        // `{ not: 1 }` and labels are names, not operators.
        const nextChar = /\S/.exec(text.slice(scanner.getTokenEnd()))?.[0];
        if (js && !declared.has(word) && nextChar !== ':') {
          const start = scanner.getTokenStart();
          let end = scanner.getTokenEnd();
          if (word === 'not') while (text[end] === ' ') end++;
          const range = { start: this.snap.position(start), end: this.snap.position(end) };
          this.pythonLines.add(range.start.line);
          this.pythonOperatorLines.add(range.start.line);
          const key = `python-ism@u${start}`;
          if (!this.seen.has(key)) {
            this.seen.add(key);
            this.out.push({ range, severity: 'error', code: 'python-ism', source: 'rewardsmith', message: `'${word}' is Python; in JavaScript write '${js}'.`, fixes: [{ title: `Replace with ${js}`, edits: [{ range, newText: js }], preferred: true }] });
          }
        }
      }
      previous = kind;
    }
  }

  private swappedArguments(node: ts.CallExpression): void {
    const callee = skipParens(node.expression);
    if (!ts.isIdentifier(callee)) return;
    const decl = this.declarationOf(callee);
    let fn: ts.SignatureDeclaration | undefined;
    if (decl && ts.isFunctionDeclaration(decl)) fn = decl;
    else if (decl && ts.isVariableDeclaration(decl) && decl.initializer && (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))) fn = decl.initializer;
    if (!fn) return;
    const paramNames = fn.parameters.map((p) => (ts.isIdentifier(p.name) ? p.name.text : ''));
    const args = node.arguments;
    const argNames = args.map((a) => (ts.isIdentifier(skipParens(a)) ? (skipParens(a) as ts.Identifier).text : ''));
    const swapped = args
      .map((_a, i) => i)
      .filter((i) => {
        const arg = argNames[i]!;
        const param = paramNames[i];
        return !!param && schemaParameter(arg) && schemaParameter(param) && arg !== param && paramNames.includes(arg);
      });
    if (swapped.length === 0) return;
    // Reorder so each schema argument goes to the parameter of its name, if that is a permutation.
    const texts = args.map((a) => this.snap.userTextOf(a));
    const reordered = paramNames.slice(0, args.length).map((p, j) => {
      const from = argNames.indexOf(p);
      return schemaParameter(p) && from >= 0 ? texts[from]! : texts[j]!;
    });
    const isPermutation = [...reordered].sort().join('\u0000') === [...texts].sort().join('\u0000');
    const first = args[swapped[0]!]!;
    const last = args[swapped[swapped.length - 1]!]!;
    const fnName = callee.text;
    const pairs = swapped.map((i) => `${argNames[i]} is passed as ${paramNames[i]}`).join('; ');
    const fixes: Fix[] = isPermutation
      ? [{ title: `Pass the arguments in ${fnName}'s parameter order`, edits: [{ range: this.snap.range(args[0]!.getStart(this.sf), args[args.length - 1]!.getEnd()), newText: reordered.join(', ') }], preferred: true }]
      : [];
    this.report([first.getStart(this.sf), last.getEnd()], 'swapped-arguments', 'error', `Arguments of ${fnName}() are swapped: ${pairs}.`, fixes);
  }

  // ----- GLOBAL_DATA ---------------------------------------------------------------------------------------

  private globalKey(access: ts.Expression): string | undefined {
    if (ts.isPropertyAccessExpression(access)) return access.name.text;
    if (ts.isElementAccessExpression(access)) return stringKey(access.argumentExpression);
    return undefined;
  }

  /** The function whose body a node runs in, if it is a named helper (its call sites say when it runs). */
  private helperOf(node: ts.Node): { fn: ts.Node; name: string } | undefined {
    const fn = ts.findAncestor(node.parent, isFunctionLike);
    if (!fn) return undefined;
    if (ts.isFunctionDeclaration(fn) && fn.name) return { fn, name: fn.name.text };
    if ((ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) && ts.isVariableDeclaration(fn.parent) && ts.isIdentifier(fn.parent.name)) return { fn, name: fn.parent.name.text };
    return undefined;
  }

  private callSites = new Map<string, ts.CallExpression[]>();

  private callsOf(name: string): ts.CallExpression[] {
    let sites = this.callSites.get(name);
    if (!sites) {
      sites = [];
      const list = sites;
      const visit = (n: ts.Node) => {
        if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === name) list.push(n);
        ts.forEachChild(n, visit);
      };
      visit(this.sf);
      this.callSites.set(name, sites);
    }
    return sites;
  }

  /** When `node` (at position `pos`) runs, in terms of a position in the code that contains `other`. */
  private anchor(node: ts.Node, pos: number, other: ts.Node): number {
    let current = node;
    for (let depth = 0; depth < 6; depth++) {
      const helper = this.helperOf(current);
      if (!helper || (other.pos >= helper.fn.pos && other.end <= helper.fn.end)) return pos;
      const calls = this.callsOf(helper.name);
      if (calls.length === 0) return pos;
      const earliest = calls.reduce((a, b) => (a.getStart(this.sf) <= b.getStart(this.sf) ? a : b));
      pos = earliest.getStart(this.sf);
      current = earliest;
    }
    return pos;
  }

  private globalData(accesses: ts.Expression[]): void {
    const writes = new Map<string, { node: ts.Node; at: number; value?: ts.Expression }[]>();
    const reads: { node: ts.Expression; key: string; compound: boolean }[] = [];
    const addWrite = (key: string, node: ts.Node, at: number, value?: ts.Expression) => {
      const list = writes.get(key) ?? [];
      list.push({ node, at, value });
      writes.set(key, list);
    };
    for (const access of accesses) {
      const key = this.globalKey(access);
      if (key === undefined) continue;
      const p = parentSkippingParens(access);
      if (OBJECT_METHODS.has(key) || (ts.isCallExpression(p) && p.expression === access && PYTHON_DICT_METHODS.has(key))) continue;
      if (ts.isDeleteExpression(p)) continue;
      if (ts.isBinaryExpression(p) && p.left === access) {
        const op = p.operatorToken.kind;
        if (op === ts.SyntaxKind.EqualsToken) {
          addWrite(key, p, p.getEnd(), p.right);
          continue;
        }
        if (op === ts.SyntaxKind.QuestionQuestionEqualsToken || op === ts.SyntaxKind.BarBarEqualsToken) {
          addWrite(key, p, p.getEnd(), p.right);
          continue;
        }
        if (op >= ts.SyntaxKind.FirstCompoundAssignment && op <= ts.SyntaxKind.LastCompoundAssignment) {
          reads.push({ node: access, key, compound: true });
          addWrite(key, p, p.getEnd());
          continue;
        }
      }
      if ((ts.isPrefixUnaryExpression(p) || ts.isPostfixUnaryExpression(p)) && (p.operator === ts.SyntaxKind.PlusPlusToken || p.operator === ts.SyntaxKind.MinusMinusToken)) {
        reads.push({ node: access, key, compound: true });
        addWrite(key, p, p.getEnd());
        continue;
      }
      reads.push({ node: access, key, compound: false });
    }
    // Object.assign(GLOBAL_DATA, { key: value, … }) initialises keys too.
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && n.expression.getText(this.sf) === 'Object.assign' && n.arguments[0] && this.isGlobalData(n.arguments[0])) {
        for (const arg of n.arguments.slice(1)) {
          if (!ts.isObjectLiteralExpression(arg)) continue;
          for (const prop of arg.properties) if (prop.name && (ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name))) addWrite(prop.name.text, n, n.getEnd(), ts.isPropertyAssignment(prop) ? prop.initializer : undefined);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(this.sf);

    for (const read of reads) {
      if (!read.compound && this.selfGuarding(read.node)) continue;
      const ref = this.refOf(read.node);
      if (this.isGuarded(read.node, [ref])) continue;
      const readAt = read.node.getStart(this.sf);
      const earlier = (writes.get(read.key) ?? []).some((w) => this.anchor(w.node, w.at, read.node) <= this.anchor(read.node, readAt, w.node));
      if (earlier) continue;
      if (!read.compound && this.checkedLater(read.node)) continue;
      this.reportGlobal(read.node, read.compound, writes.get(read.key)?.[0]?.value);
    }
  }

  /** `const prev = GLOBAL_DATA.k;` is harmless when every use of `prev` checks it (`prev !== undefined && …`). */
  private checkedLater(read: ts.Expression): boolean {
    const decl = parentSkippingParens(read);
    if (!ts.isVariableDeclaration(decl) || !ts.isIdentifier(decl.name) || !decl.initializer || skipParens(decl.initializer) !== read) return false;
    const name = decl.name;
    const sym = this.checker.getSymbolAtLocation(name);
    const scope = ts.findAncestor(decl, (n) => ts.isBlock(n) || ts.isSourceFile(n) || isFunctionLike(n)) ?? this.sf;
    let safe = true;
    const visit = (n: ts.Node) => {
      if (!safe) return;
      if (ts.isIdentifier(n) && n !== name && n.text === name.text && this.checker.getSymbolAtLocation(n) === sym) {
        const up = parentSkippingParens(n);
        const assigned = ts.isBinaryExpression(up) && up.left === n && up.operatorToken.kind === ts.SyntaxKind.EqualsToken;
        if (!assigned && !this.selfGuarding(n) && !this.isGuarded(n, [`v:${name.text}`])) safe = false;
      }
      ts.forEachChild(n, visit);
    };
    visit(scope);
    return safe;
  }

  /** Reads that test for the key themselves: `if (G.k)`, `G.k ?? 0`, `G.k === undefined`, `G.k?.add(…)`. */
  private selfGuarding(read: ts.Expression): boolean {
    const p = parentSkippingParens(read);
    if ((ts.isIfStatement(p) || ts.isWhileStatement(p)) && skipParens(p.expression) === read) return true;
    if (ts.isConditionalExpression(p) && skipParens(p.condition) === read) return true;
    if (ts.isPrefixUnaryExpression(p) && p.operator === ts.SyntaxKind.ExclamationToken) return true;
    if (ts.isTypeOfExpression(p)) return true;
    if ((ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p) || ts.isCallExpression(p)) && p.questionDotToken && skipParens(p.expression) === read) return true;
    if (ts.isBinaryExpression(p)) {
      const op = p.operatorToken.kind;
      if (op === ts.SyntaxKind.QuestionQuestionToken || ((op === ts.SyntaxKind.BarBarToken || op === ts.SyntaxKind.AmpersandAmpersandToken) && skipParens(p.left) === read)) return true;
      const other = skipParens(p.left) === read ? skipParens(p.right) : skipParens(p.left);
      const equality = [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken].includes(op);
      if (equality && (other.kind === ts.SyntaxKind.NullKeyword || (ts.isIdentifier(other) && other.text === 'undefined'))) return true;
    }
    return false;
  }

  private reportGlobal(read: ts.Expression, compound: boolean, firstWrite: ts.Expression | undefined): void {
    const access = this.snap.userTextOf(read);
    const p = parentSkippingParens(read);
    const member = (ts.isPropertyAccessExpression(p) || ts.isElementAccessExpression(p)) && skipParens(p.expression) === read ? p : undefined;
    const method = member && ts.isPropertyAccessExpression(member) ? member.name.text : undefined;
    const init = this.initialValue(read, method, firstWrite);
    const message = compound
      ? `${access} is updated before anything stores it: on the first step of an episode it is undefined, so this stores NaN. Initialise it first.`
      : member
        ? `${access}${method ? `.${method}` : '[…]'} throws a TypeError on the first step of an episode: nothing has stored ${access} yet.`
        : `${access} is read before anything stores it: on the first step of an episode it is undefined (comparisons with it are silently false, arithmetic gives NaN).`;
    const statement = ts.findAncestor(read, (n) => ts.isStatement(n) && (ts.isBlock(n.parent) || ts.isSourceFile(n.parent) || ts.isCaseClause(n.parent)));
    const fixes: Fix[] = [];
    if (statement) {
      const start = this.snap.position(this.snap.toUser(statement.getStart(this.sf)));
      const indent = /^\s*/.exec(this.snap.lineText(start.line))![0];
      fixes.push({
        title: `Initialise ${access} before use (${access} ??= ${init})`,
        edits: [{ range: { start: { line: start.line, character: 0 }, end: { line: start.line, character: 0 } }, newText: `${indent}${access} ??= ${init};\n` }],
        preferred: true,
      });
    }
    if (!compound && !member) fixes.push({ title: `Use a default: (${access} ?? ${init})`, edits: [this.replace(read, `(${access} ?? ${init})`)] });
    this.report(read, 'global-data-uninitialised', 'error', message, fixes);
  }

  private initialValue(read: ts.Expression, method: string | undefined, firstWrite: ts.Expression | undefined): string {
    if (firstWrite) {
      const w = skipParens(firstWrite);
      const simple =
        ts.isNumericLiteral(w) || ts.isStringLiteral(w) || w.kind === ts.SyntaxKind.TrueKeyword || w.kind === ts.SyntaxKind.FalseKeyword ||
        (ts.isArrayLiteralExpression(w) && w.elements.length === 0) || (ts.isObjectLiteralExpression(w) && w.properties.length === 0) ||
        (ts.isNewExpression(w) && (w.arguments?.length ?? 0) === 0) || (ts.isIdentifier(w) && !!schemaParameter(w.text)) ||
        (ts.isPrefixUnaryExpression(w) && ts.isNumericLiteral(w.operand));
      if (simple) return this.snap.userTextOf(w);
    }
    if (method && ['add', 'has', 'delete'].includes(method)) return 'new Set()';
    if (method && ['get', 'set'].includes(method)) return 'new Map()';
    if (method && ['push', 'pop', 'length', 'includes', 'indexOf', 'slice', 'at', 'map', 'filter', 'some', 'every', 'forEach', 'shift', 'unshift'].includes(method)) return '[]';
    const p = parentSkippingParens(read);
    if (ts.isElementAccessExpression(p) && skipParens(p.expression) === read) return '{}';
    return '0';
  }

  /** `return;` in a function that returns values elsewhere: TypeScript's noImplicitReturns lets it pass. */
  private bareReturns(): void {
    const visit = (fn: ts.Node) => {
      if (isFunctionLike(fn) && fn.body && ts.isBlock(fn.body)) {
        const returns: ts.ReturnStatement[] = [];
        const collect = (n: ts.Node) => {
          if (isFunctionLike(n)) return;
          if (ts.isReturnStatement(n)) returns.push(n);
          ts.forEachChild(n, collect);
        };
        ts.forEachChild(fn.body, collect);
        if (returns.some((r) => r.expression)) {
          for (const r of returns.filter((x) => !x.expression)) {
            this.report(r, 'undefined-return', 'error', 'This `return;` returns undefined while the function returns numbers elsewhere; the reward becomes NaN.', [
              { title: 'Return 0', edits: [this.replace(r, 'return 0;')], preferred: true },
            ]);
          }
        }
      }
      ts.forEachChild(fn, visit);
    };
    visit(this.sf);
  }

  /**
   * The runtime's own contract check (runner/src/reward/compile.ts), so that lint and training agree. It
   * transpiles the file, which is too slow for every keystroke, so it runs again only when the imports or
   * the exported functions' signatures change. Syntax errors are left to TypeScript's diagnostics.
   */
  private contract(): void {
    const parts: string[] = [];
    for (const st of this.sf.statements) {
      if (ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st)) parts.push(this.snap.userTextOf(st));
      else if (ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
        if (ts.isFunctionDeclaration(st)) parts.push(`${st.name?.text}(${st.parameters.map((p) => this.snap.userTextOf(p.name)).join(',')})`);
        else if (ts.isVariableStatement(st)) {
          for (const d of st.declarationList.declarations) {
            const init = d.initializer && skipParens(d.initializer);
            const params = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init.parameters.map((p) => this.snap.userTextOf(p.name)).join(',') : '';
            parts.push(`${this.snap.userTextOf(d.name)}(${params})`);
          }
        }
      }
    }
    const file = this.sf.fileName;
    // Where the statements are matters only for placing an error.
    const signatures = parts.join('\n');
    let cached = contractCache.get(file);
    const key = cached?.error ? `${signatures}\n@${this.sf.statements.map((st) => st.getStart(this.sf)).join(',')}` : signatures;
    if (!cached || cached.key !== key) {
      let error: { line: number; column: number; message: string } | null = null;
      try {
        compileRewardFile(file, this.snap.text);
      } catch (err) {
        if (!(err instanceof RewardError)) throw err;
        if (err.kind === 'compile') return; // a syntax error: TypeScript reports it; check the contract once it parses
        error = { line: err.line, column: err.column, message: err.detail };
      }
      cached = { key: error ? `${signatures}\n@${this.sf.statements.map((st) => st.getStart(this.sf)).join(',')}` : signatures, error };
      contractCache.set(file, cached);
    }
    if (!cached.error) return;
    const start = { line: cached.error.line - 1, character: cached.error.column - 1 };
    const word = /^[\w$]+/.exec(this.snap.lineText(start.line).slice(start.character))?.[0] ?? '';
    const range = { start, end: { line: start.line, character: start.character + Math.max(word.length, 1) } };
    this.out.push({ range, severity: 'error', code: 'reward-contract', source: 'rewardsmith', message: cached.error.message, fixes: [] });
  }

  // ----- the scale rule ------------------------------------------------------------------------------------

  private rewardFunction(): ts.FunctionLikeDeclaration | undefined {
    let found: ts.FunctionLikeDeclaration | undefined;
    const visit = (n: ts.Node) => {
      if (found) return;
      if (ts.isFunctionDeclaration(n) && n.name?.text === 'reward_function') found = n;
      else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === 'reward_function' && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer))) found = n.initializer;
      else ts.forEachChild(n, visit);
    };
    visit(this.sf);
    return found;
  }

  private scaleRule(): void {
    const fn = this.rewardFunction();
    if (!fn?.body) return;
    const terms = (e: ts.Expression, sign: number, out: { node: ts.Expression; sign: number }[]) => {
      e = skipParens(e);
      if (ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.PlusToken || e.operatorToken.kind === ts.SyntaxKind.MinusToken)) {
        terms(e.left, sign, out);
        terms(e.right, e.operatorToken.kind === ts.SyntaxKind.MinusToken ? -sign : sign, out);
      } else out.push({ node: e, sign });
      return out;
    };
    const visit = (n: ts.Node) => {
      if (n !== fn && isFunctionLike(n)) return;
      if (ts.isBinaryExpression(n) && (n.operatorToken.kind === ts.SyntaxKind.PlusToken || n.operatorToken.kind === ts.SyntaxKind.MinusToken)) {
        this.combination(n, terms(n, 1, []));
        return;
      }
      ts.forEachChild(n, visit);
    };
    visit(fn.body);
  }

  private combination(node: ts.BinaryExpression, parts: { node: ts.Expression; sign: number }[]): void {
    if (parts.length !== 2) return;
    // A weight is a number literal or a const bound to one (`const DENSE_WEIGHT = 0.1`).
    const weightOf = (e: ts.Expression): number | undefined => {
      const n = numericValue(e);
      if (n !== undefined) return n;
      e = skipParens(e);
      const d = ts.isIdentifier(e) ? this.declarationOf(e) : undefined;
      return d && ts.isVariableDeclaration(d) && d.initializer && ts.getCombinedNodeFlags(d) & ts.NodeFlags.Const ? numericValue(d.initializer) : undefined;
    };
    const parsed = parts.map(({ node: t, sign }) => {
      let weight = sign;
      let rest = skipParens(t);
      if (ts.isBinaryExpression(rest) && rest.operatorToken.kind === ts.SyntaxKind.AsteriskToken) {
        const l = weightOf(rest.left);
        const r = weightOf(rest.right);
        if (r !== undefined) ((weight *= r), (rest = skipParens(rest.left)));
        else if (l !== undefined) ((weight *= l), (rest = skipParens(rest.right)));
      } else if (ts.isBinaryExpression(rest) && rest.operatorToken.kind === ts.SyntaxKind.SlashToken && numericValue(rest.right)) {
        weight /= numericValue(rest.right)!;
        rest = skipParens(rest.left);
      }
      let signed = false;
      if (ts.isCallExpression(rest) && rest.arguments.length === 1 && /^((Math|np|numpy)\.)?sign$/.test(rest.expression.getText(this.sf))) {
        signed = true;
        rest = skipParens(rest.arguments[0]!);
      }
      // Names that say which is which, following `const d = dense(...)` one step.
      const names: string[] = [];
      const collect = (n: ts.Node, follow: boolean) => {
        if (ts.isIdentifier(n)) {
          names.push(n.text);
          const decl = follow ? this.declarationOf(n) : undefined;
          if (decl && ts.isVariableDeclaration(decl) && decl.initializer) collect(decl.initializer, false);
        }
        ts.forEachChild(n, (c) => collect(c, follow));
      };
      collect(rest, true);
      const dense = names.some((x) => /dense/i.test(x));
      const sparse = names.some((x) => /sparse/i.test(x));
      // Only a plain value (`dense`, `dense_reward`, `dense(...)`) can be judged unscaled; other shapes are unknown.
      const plain = signed || ts.isIdentifier(rest) || ts.isCallExpression(rest) || ts.isPropertyAccessExpression(rest);
      return { weight, signed, inner: rest, role: !plain || dense === sparse ? undefined : dense ? 'dense' : 'sparse' };
    });
    const dense = parsed.find((p) => p.role === 'dense');
    const sparse = parsed.find((p) => p.role === 'sparse');
    if (!dense || !sparse) return;
    const same = (a: number, b: number) => Math.abs(a - b) < 1e-9;
    const fixed = `Math.sign(${this.snap.userTextOf(sparse.inner)}) * ${SCALE_RULE.sparseWeight} + Math.sign(${this.snap.userTextOf(dense.inner)}) * ${SCALE_RULE.denseWeight}`;
    const fix: Fix = { title: `Combine as ${SCALE_RULE.expression}`, edits: [this.replace(node, fixed)], preferred: true };
    const rule = `only the signs count: reward = ${SCALE_RULE.expression}`;
    if (dense.signed && sparse.signed) {
      if (same(dense.weight, SCALE_RULE.denseWeight) && same(sparse.weight, SCALE_RULE.sparseWeight)) return;
      if (same(dense.weight, SCALE_RULE.sparseWeight) && same(sparse.weight, SCALE_RULE.denseWeight)) {
        this.report(node, 'scale-swapped', 'error', `The weights are swapped: dense is weighted ${fmt(dense.weight)} and sparse ${fmt(sparse.weight)}, but ${rule}.`, [fix]);
        return;
      }
      this.report(node, 'scale-unscaled', 'error', `dense is weighted ${fmt(dense.weight)} and sparse ${fmt(sparse.weight)}, but ${rule}.`, [fix]);
      return;
    }
    this.report(node, 'scale-unscaled', 'error', `dense and sparse are combined without Math.sign, so the reward's scale is unbounded; ${rule}.`, [fix]);
  }

  // ----- TypeScript's own diagnostics -------------------------------------------------------------------------

  private typescript(): void {
    const service = this.snap.project.languageService();
    const fileName = this.sf.fileName;
    const diagnostics = [...service.getSyntacticDiagnostics(fileName), ...service.getSemanticDiagnostics(fileName)];
    const mine = [...this.out];
    for (const d of diagnostics) {
      if (d.start === undefined || d.length === undefined || IMPLICIT_ANY_CODES.has(d.code)) continue;
      // "Cannot find module": the contract rule says why imports cannot work in the sandbox.
      if (d.code === 2307 || d.code === 2792) continue;
      const range = this.snap.range(d.start, d.start + d.length);
      if (this.pythonLines.has(range.start.line)) continue;
      // A rule already explains this spot (e.g. TypeScript's "not callable" under `cnb.get(…)`).
      const overlaps = mine.some((m) => !(m.range.end.line < range.start.line || (m.range.end.line === range.start.line && m.range.end.character <= range.start.character) || m.range.start.line > range.end.line || (m.range.start.line === range.end.line && m.range.start.character >= range.end.character)));
      if (overlaps) continue;
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      let code = `ts${d.code}`;
      let message = text;
      if (d.code === 7030) {
        code = 'undefined-return';
        message = 'Not all code paths return a value: on the others this function returns undefined, which makes the reward NaN.';
      } else if (d.code === 2493) {
        code = 'index-out-of-range';
      } else if (d.code === 2580 || d.code === 2591) {
        // TypeScript suggests installing @types/node; the sandbox has no Node.js globals at all.
        const name = /Cannot find name '([^']+)'/.exec(text)?.[1] ?? 'it';
        message = `Cannot find name '${name}': reward code runs in a sandbox without Node.js globals (no require, process, file system, network or timers).`;
      }
      const severity: Severity = d.category === ts.DiagnosticCategory.Error ? 'error' : d.category === ts.DiagnosticCategory.Warning ? 'warning' : d.category === ts.DiagnosticCategory.Suggestion ? 'hint' : 'information';
      this.out.push({ range, severity, code, message, source: 'rewardsmith', fixes: [] });
    }
  }
}

/** Schema facts about one expression, for hover and completion. */
export function schemaFacts(snap: Snapshot, e: ts.Expression): { keys?: DictKeys; field?: Field } {
  const linter = new Linter(snap, loadSchema());
  return { keys: linter.dictKeys(e), field: linter.fieldOf(e) };
}

export function lintSnapshot(snap: Snapshot, schema: ObservationSchema = loadSchema()): RewardDiagnostic[] {
  return new Linter(snap, schema).run();
}

/** Lint one file's text headless (a fresh project; the language server keeps projects per open file). */
export function lintText(fileName: string, text: string): RewardDiagnostic[] {
  const project = new RewardProject(fileName, text);
  try {
    return lintSnapshot(project.snapshot());
  } finally {
    project.dispose();
  }
}
