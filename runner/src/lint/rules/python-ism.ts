// Python in a JavaScript/TypeScript reward, as LLM-written and ported rewards have it: `len(x)`, `abs(x)`,
// `np.sign(x)`, `math.pi`, `True`/`False`/`None`, `and`/`or`/`not`/`elif`, `def`, dict methods
// (`cnb.get('lava')`, `.items()`). TypeScript only sees parse or name errors there; this says what to write.
import ts from 'typescript';
import { PYTHON_DICT_METHODS, skipParens, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'python-ism',
  severity: 'error',
  description: 'Python in a JavaScript/TypeScript reward (len, np.sign, True, and, …)',
  docs: 'Reward files are TypeScript or JavaScript. Python builtins and operators either do not parse or name nothing (`len`, `np`, `True`), and Python dict methods do not exist on JavaScript objects. Each finding names the JavaScript to write, and most have a fix.',
  fixable: true,
} as const satisfies RuleMeta;

const PYTHON_MATH = new Set([
  'sign',
  'abs',
  'sqrt',
  'floor',
  'ceil',
  'exp',
  'log',
  'log2',
  'log10',
  'min',
  'max',
  'hypot',
  'atan2',
  'atan',
  'asin',
  'acos',
  'sin',
  'cos',
  'tan',
  'round',
  'pow',
  'pi',
  'e',
  'inf',
]);
const PYTHON_BUILTIN_MATH = new Set(['abs', 'min', 'max', 'round', 'pow']);
const PYTHON_CONSTANTS: Record<string, string> = { True: 'true', False: 'false', None: 'undefined' };
const PYTHON_OPERATORS: Record<string, string> = { and: '&&', or: '||', not: '!', elif: 'else if' };

export const pythonIsm = defineRule({
  meta,
  node(node, ctx) {
    if (ts.isCallExpression(node)) call(ctx, node);
    if (ts.isIdentifier(node)) identifier(ctx, node);
  },
  /** Python's `and`, `or`, `not`, `elif` and `def` break the parse, so they are found as tokens. */
  end: (ctx) => pythonOperators(ctx),
});

function call(ctx: LintContext, node: ts.CallExpression): void {
  const callee = skipParens(node.expression);
  // Python builtins and modules: len(x), abs(x), np.sign(x), math.sqrt(x).
  if (ts.isIdentifier(callee) && !ctx.checker.getSymbolAtLocation(callee)) {
    const arg = node.arguments[0];
    if (callee.text === 'len' && arg && node.arguments.length === 1) {
      const argText = ctx.snap.userTextOf(arg);
      const wrapped = /^[\w.$[\]'"]+$/.test(argText) ? argText : `(${argText})`;
      const replacement = ctx.dictKeys(arg) || ctx.isGlobalData(arg) ? `Object.keys(${argText}).length` : `${wrapped}.length`;
      python(ctx, node, `len() is Python; in JavaScript write ${replacement}.`, replacement);
    } else if (PYTHON_BUILTIN_MATH.has(callee.text)) {
      python(ctx, callee, `${callee.text}() is Python; in JavaScript it is Math.${callee.text}().`, `Math.${callee.text}`);
    }
  }
  if (ts.isPropertyAccessExpression(callee)) {
    const obj = skipParens(callee.expression);
    const method = callee.name.text;
    if ((ctx.dictKeys(obj) || ctx.isGlobalData(obj)) && PYTHON_DICT_METHODS.has(method)) pythonDictMethod(ctx, node, obj, method);
  }
}

function python(ctx: LintContext, node: ts.Node, message: string, replacement: string): void {
  ctx.pythonLines.add(ctx.snap.nodeRange(node).start.line);
  ctx.report(meta, node, message, [{ title: `Replace with ${replacement}`, edits: [ctx.replace(node, replacement)], preferred: true }]);
}

function pythonDictMethod(ctx: LintContext, node: ts.CallExpression, obj: ts.Expression, method: string): void {
  const objText = ctx.snap.userTextOf(obj);
  const [a, b] = node.arguments.map((x) => ctx.snap.userTextOf(x));
  const replacement =
    method === 'get' && a !== undefined
      ? b !== undefined
        ? `(${objText}[${a}] ?? ${b})`
        : `${objText}[${a}]`
      : method === 'keys'
        ? `Object.keys(${objText})`
        : method === 'items'
          ? `Object.entries(${objText})`
          : method === 'values'
            ? `Object.values(${objText})`
            : undefined;
  const message = `${objText}.${method}() is a Python dict method; a JavaScript object has none${replacement ? `: write ${replacement}` : ''}.`;
  ctx.pythonLines.add(ctx.snap.nodeRange(node).start.line);
  ctx.report(meta, node, message, replacement ? [{ title: `Replace with ${replacement}`, edits: [ctx.replace(node, replacement)], preferred: true }] : []);
}

function identifier(ctx: LintContext, node: ts.Identifier): void {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return;
  if (ts.isPropertyAssignment(parent) && parent.name === node) return;
  const constant = PYTHON_CONSTANTS[node.text];
  if (constant !== undefined && !ctx.checker.getSymbolAtLocation(node)) {
    python(ctx, node, `${node.text} is Python; in JavaScript write ${constant}.`, constant);
    return;
  }
  // np.sign(x), numpy.abs(x), math.sqrt(x), math.pi: the Math object.
  if (
    ['np', 'numpy', 'math'].includes(node.text) &&
    ts.isPropertyAccessExpression(parent) &&
    parent.expression === node &&
    !ctx.checker.getSymbolAtLocation(node)
  ) {
    const member = parent.name.text;
    if (!PYTHON_MATH.has(member)) return;
    const js = member === 'pi' ? 'Math.PI' : member === 'e' ? 'Math.E' : member === 'inf' ? 'Infinity' : `Math.${member}`;
    python(ctx, parent, `${node.text}.${member} is Python; in JavaScript it is ${js}.`, js);
  }
}

/** Python's `and`, `or`, `not`, `elif`: TypeScript only sees parse errors; find them as tokens. */
function pythonOperators(ctx: LintContext): void {
  const text = ctx.snap.text;
  const declared = new Set<string>();
  const collect = (n: ts.Node) => {
    if ((ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isFunctionDeclaration(n) || ts.isBindingElement(n)) && n.name && ts.isIdentifier(n.name))
      declared.add(n.name.text);
    ts.forEachChild(n, collect);
  };
  collect(ctx.sf);
  const scanner = ts.createScanner(ts.ScriptTarget.ES2022, true, ts.LanguageVariant.Standard, text);
  let previous = ts.SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.Identifier && previous !== ts.SyntaxKind.DotToken && previous !== ts.SyntaxKind.QuestionDotToken) {
      const word = scanner.getTokenValue();
      if (word === 'def' && /^\s+\w+\s*\(/.test(text.slice(scanner.getTokenEnd())) && !declared.has('def')) {
        const start = scanner.getTokenStart();
        const line = ctx.snap.position(start).line;
        ctx.pythonLines.add(line);
        ctx.pythonOperatorLines.add(line);
        ctx.push({
          range: { start: ctx.snap.position(start), end: ctx.snap.position(scanner.getTokenEnd()) },
          severity: meta.severity,
          code: meta.id,
          source: 'rewardsmith',
          message: "'def' is Python: reward files are TypeScript or JavaScript (`export function reward_function(...) { ... }`).",
          fixes: [],
        });
      }
      const js = PYTHON_OPERATORS[word];
      // `{ not: 1 }` and labels are names, not operators.
      const nextChar = /\S/.exec(text.slice(scanner.getTokenEnd()))?.[0];
      if (js && !declared.has(word) && nextChar !== ':') {
        const start = scanner.getTokenStart();
        let end = scanner.getTokenEnd();
        if (word === 'not') while (text[end] === ' ') end++;
        const range = { start: ctx.snap.position(start), end: ctx.snap.position(end) };
        ctx.pythonLines.add(range.start.line);
        ctx.pythonOperatorLines.add(range.start.line);
        ctx.push(
          {
            range,
            severity: meta.severity,
            code: meta.id,
            source: 'rewardsmith',
            message: `'${word}' is Python; in JavaScript write '${js}'.`,
            fixes: [{ title: `Replace with ${js}`, edits: [{ range, newText: js }], preferred: true }],
          },
          `${meta.id}@u${start}`,
        );
      }
    }
    previous = kind;
  }
}
