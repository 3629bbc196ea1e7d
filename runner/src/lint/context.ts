// What every rule shares while linting one file: the file's syntax tree and type checker, the schema, the
// diagnostics reported so far, and the schema-aware questions several rules ask (which dict is this, is this
// entry known to be present here, which schema field is this value).
import ts from 'typescript';
import { NEAREST_ENTRY, PARAMETERS, POSITION_ENTRY, type ObservationSchema, type Range as ValueRange } from '../schema';
import { schemaParameter, type Snapshot } from './analysis';
import type { Fix, RewardDiagnostic, RuleMeta, TextEdit } from './rule';

export type DictKeys = 'nearby' | 'item' | 'mob';

/** A value with a schema range: a scalar parameter or an element of an entry. */
export interface Field {
  label: string;
  range: ValueRange;
  doc: string;
}

export const PYTHON_DICT_METHODS = new Set(['get', 'keys', 'items', 'values', 'setdefault', 'update']);
/** The relational and equality operators: a comparison whose outcome a rule can reason about. */
export const COMPARISON_OPERATORS: ReadonlySet<ts.SyntaxKind> = new Set([
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.LessThanEqualsToken,
  ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.GreaterThanEqualsToken,
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);
export const OBJECT_METHODS = new Set(['hasOwnProperty', 'toString', 'valueOf', 'propertyIsEnumerable', 'isPrototypeOf', 'constructor']);

export function skipParens(e: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e)) e = e.expression;
  return e;
}

export function parentSkippingParens(node: ts.Node): ts.Node {
  let p = node.parent;
  while (p && (ts.isParenthesizedExpression(p) || ts.isNonNullExpression(p))) p = p.parent;
  return p;
}

export function numericValue(e: ts.Expression): number | undefined {
  e = skipParens(e);
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand)) {
    if (e.operator === ts.SyntaxKind.MinusToken) return -Number(e.operand.text);
    if (e.operator === ts.SyntaxKind.PlusToken) return Number(e.operand.text);
  }
  return undefined;
}

export function stringKey(e: ts.Expression): string | undefined {
  e = skipParens(e);
  return ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) ? e.text : undefined;
}

export function isFunctionLike(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n);
}

export function alwaysExits(s: ts.Statement): boolean {
  if (ts.isReturnStatement(s) || ts.isThrowStatement(s) || ts.isContinueStatement(s) || ts.isBreakStatement(s)) return true;
  if (ts.isBlock(s)) return s.statements.length > 0 && alwaysExits(s.statements[s.statements.length - 1]!);
  if (ts.isIfStatement(s)) return !!s.elseStatement && alwaysExits(s.thenStatement) && alwaysExits(s.elseStatement);
  return false;
}

export function fmt(n: number): string {
  return String(Number(n.toFixed(2)));
}

export function rangeText(r: ValueRange): string {
  return `${fmt(r.min)}..${fmt(r.max)} ${r.unit}`;
}

export class LintContext {
  readonly out: RewardDiagnostic[] = [];
  readonly sf: ts.SourceFile;
  readonly checker: ts.TypeChecker;
  /** Lines with Python-isms: TypeScript's parse errors there are noise. */
  readonly pythonLines = new Set<number>();
  /** Lines with Python's `and`/`or`/`not`/`def`: the parse is broken there, so other rules' findings are noise. */
  readonly pythonOperatorLines = new Set<number>();
  private readonly seen = new Set<string>();
  private readonly dictKeysCache = new Map<ts.Expression, DictKeys | undefined>();
  private readonly memos = new Map<string, unknown>();

  constructor(
    readonly snap: Snapshot,
    readonly schema: ObservationSchema,
  ) {
    this.sf = snap.sourceFile;
    this.checker = snap.checker;
  }

  /** Reports once per rule and start position. */
  report(rule: RuleMeta, node: ts.Node | [number, number], message: string, fixes: Fix[] = []): void {
    const [start, end] = Array.isArray(node) ? node : [node.getStart(this.sf), node.getEnd()];
    const key = `${rule.id}@${start}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.out.push({ range: this.snap.range(start, end), severity: rule.severity, code: rule.id, message, source: 'rewardsmith', fixes });
  }

  /** Adds a diagnostic whose range the rule computed itself; `onceKey` drops repeats. */
  push(diagnostic: RewardDiagnostic, onceKey?: string): void {
    if (onceKey !== undefined) {
      if (this.seen.has(onceKey)) return;
      this.seen.add(onceKey);
    }
    this.out.push(diagnostic);
  }

  replace(node: ts.Node, newText: string): TextEdit {
    return { range: this.snap.nodeRange(node), newText };
  }

  /** An analysis that several rules share, computed once per file. */
  memo<T>(key: string, compute: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, compute());
    return this.memos.get(key) as T;
  }

  // ----- schema types ------------------------------------------------------------------------------------

  /** Which names a dict expression holds (`current_nearest_blocks` → block and mob names), if it is one. */
  dictKeys(e: ts.Expression): DictKeys | undefined {
    if (this.dictKeysCache.has(e)) return this.dictKeysCache.get(e);
    const type = this.typeOf(e);
    let keys: DictKeys | undefined;
    for (const p of PARAMETERS)
      if (type && p.keys && this.snap.isSchemaType(type, p.tsType)) {
        keys = p.keys;
        break;
      }
    this.dictKeysCache.set(e, keys);
    return keys;
  }

  isType(e: ts.Node, alias: string): boolean {
    const type = this.typeOf(e);
    return !!type && this.snap.isSchemaType(type, alias);
  }

  /**
   * The type the schema questions look at. For a parameter or a `const`, the
   * declared type (computed once per name): narrowing could only remove `undefined`, which the schema checks
   * ignore, and asking TypeScript for the narrowed type runs its flow analysis at every use, which was most
   * of a re-lint's time. Other expressions (and `let` names, whose types evolve) get the type at the spot.
   * Undefined for a name declared outside the file (Math, console): no global has a schema type.
   */
  typeOf(e: ts.Node): ts.Type | undefined {
    if (ts.isIdentifier(e)) {
      const symbol = this.checker.getSymbolAtLocation(e);
      const decl = symbol?.valueDeclaration;
      if (symbol && decl) {
        if (decl.getSourceFile() !== this.sf) return undefined;
        const declared =
          ts.isParameter(decl) || ((ts.isVariableDeclaration(decl) || ts.isBindingElement(decl)) && (ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) !== 0);
        if (declared) return this.checker.getTypeOfSymbol(symbol);
      }
    }
    return this.checker.getTypeAtLocation(e);
  }

  isGlobalData(e: ts.Expression): boolean {
    e = skipParens(e);
    return ts.isIdentifier(e) && e.text === 'GLOBAL_DATA' && this.isParameterRef(e);
  }

  isParameterRef(id: ts.Identifier): boolean {
    const decl = this.checker.getSymbolAtLocation(id)?.valueDeclaration;
    return !!decl && ts.isParameter(decl);
  }

  declarationOf(id: ts.Identifier): ts.Declaration | undefined {
    const sym = this.checker.getSymbolAtLocation(id);
    return sym?.valueDeclaration ?? sym?.declarations?.[0];
  }

  // ----- presence guards: is an entry (or a GLOBAL_DATA key) known to be there where it is used? --------------

  /** Reference path for guard matching: `v:cnb|lava`, `v:e`, `v:cnb|#name`. */
  refOf(e: ts.Expression): string | undefined {
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

  keyRef(dict: ts.Expression, key: ts.Expression): string | undefined {
    const base = this.refOf(dict);
    if (!base) return undefined;
    const k = stringKey(key);
    if (k !== undefined) return `${base}|${k}`;
    const id = skipParens(key);
    return ts.isIdentifier(id) ? `${base}|#${id.text}` : undefined;
  }

  /** Refs known to be present (not undefined) when `cond` evaluates to `when`. */
  implies(cond: ts.Expression, when: boolean): Set<string> {
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
        return x.kind === ts.SyntaxKind.NullKeyword || (ts.isIdentifier(x) && x.text === 'undefined') || ts.isVoidExpression(x);
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
      const relational = [
        ts.SyntaxKind.LessThanToken,
        ts.SyntaxKind.LessThanEqualsToken,
        ts.SyntaxKind.GreaterThanToken,
        ts.SyntaxKind.GreaterThanEqualsToken,
      ].includes(op);
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
          if (
            ts.isCallExpression(keysCall) &&
            ts.isPropertyAccessExpression(keysCall.expression) &&
            keysCall.expression.name.text === 'keys' &&
            keysCall.arguments[0]
          )
            add(this.keyRef(keysCall.arguments[0], args[0]));
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
  isGuarded(node: ts.Node, refs: (string | undefined)[]): boolean {
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

  // ----- schema fields -------------------------------------------------------------------------------------

  fieldOf(e: ts.Expression, depth = 0): Field | undefined {
    e = skipParens(e);
    if (depth > 4) return undefined;
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.getText(this.sf) === 'Math.abs' && e.arguments[0]) {
      const f = this.fieldOf(e.arguments[0], depth + 1);
      return (
        f && { ...f, label: `|${f.label}|`, range: { ...f.range, min: Math.max(0, f.range.min), max: Math.max(Math.abs(f.range.min), Math.abs(f.range.max)) } }
      );
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
    if (ts.isVariableDeclaration(decl) && decl.initializer && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const)
      return this.fieldOf(decl.initializer, depth + 1);
    if (ts.isBindingElement(decl) && ts.isArrayBindingPattern(decl.parent)) {
      const index = decl.parent.elements.indexOf(decl);
      const pattern = decl.parent;
      if (this.isType(pattern, 'NearestEntry')) return this.entryField(NEAREST_ENTRY, index);
      if (this.isType(pattern, 'AgentPosition')) return this.entryField(POSITION_ENTRY, index);
    }
    return undefined;
  }

  entryField(layout: typeof NEAREST_ENTRY, index: number): Field | undefined {
    const f = layout[index];
    return f && { label: f.name, range: f.range, doc: f.doc };
  }
}
