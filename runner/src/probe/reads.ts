// What a reward file's code reads, from its syntax tree (TypeScript's, or tree-sitter-python's for `*.reward.py`):
// the parameters its reward functions refer to (the probes swap those inputs), the names it looks up in the
// observation dicts (a name no probe episode shows is a finding) and where a function is (the part of a
// dense/sparse file that pays). The replay runs the file; these locate what it shows.
import ts from 'typescript';
import type { RewardLanguage } from '../reward/compile';
import { isNameReference, keyUsesIn, nodeAt, parameterList, parsePython, topLevelFunctions, walk, type PythonNode } from '../reward/python-syntax';
import { parameterNames, type ParameterName } from '../schema';
import type { ProbeBank } from './bank';

export interface ParameterRead {
  /** 1-based, the first read in the file. */
  line: number;
  column: number;
  endColumn: number;
  /** Every line that reads it. */
  lines: number[];
}

/** A name looked up in an observation dict: `current_nearest_blocks['cow']`, its parameter and where (1-based). */
export interface NameRead {
  name: string;
  parameter: string;
  line: number;
  column: number;
  endColumn: number;
}

/** The dictionary parameters whose keys a task's observations show, and which of the bank's name sets holds them. */
export const NAMED_PARAMETERS: Record<string, keyof ProbeBank['names']> = {
  current_nearest_blocks: 'nearby',
  previous_nearest_blocks: 'nearby',
  kill_entity: 'mob',
};

/** The reward functions of the contract (a file defines reward_function, or dense and sparse). */
const REWARD_FUNCTIONS = ['reward_function', 'dense', 'sparse'];

function addRead(reads: Map<ParameterName, ParameterRead>, name: ParameterName, line: number, column: number, length: number): void {
  const known = reads.get(name);
  if (known) {
    if (!known.lines.includes(line)) known.lines.push(line);
  } else reads.set(name, { line, column, endColumn: column + length, lines: [line] });
}

/** The parameters the reward functions of `source` read (refer to in their bodies), each at its first read. */
export function parametersRead(source: string, language: RewardLanguage): Map<ParameterName, ParameterRead> {
  return language === 'python' ? pythonParametersRead(source) : typescriptParametersRead(source);
}

/** The names the file looks up in the observation dicts (NAMED_PARAMETERS), in document order. */
export function namesRead(source: string, language: RewardLanguage): NameRead[] {
  return language === 'python' ? pythonNamesRead(source) : typescriptNamesRead(source);
}

/** The lines of the top-level function `name` (1-based). */
export function functionLines(source: string, language: RewardLanguage, name: string): { line: number; endLine: number } | undefined {
  if (language === 'python') {
    return withPythonTree(source, (root) => {
      const def = topLevelFunctions(root).get(name);
      return def ? { line: def.startPosition.row + 1, endLine: def.endPosition.row + 1 } : undefined;
    });
  }
  const sf = ts.createSourceFile('reward.ts', source, ts.ScriptTarget.ES2022, true);
  for (const s of sf.statements) {
    const fn =
      ts.isFunctionDeclaration(s) && s.name?.text === name
        ? s
        : ts.isVariableStatement(s)
          ? s.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === name)
          : undefined;
    if (!fn) continue;
    return { line: sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line + 1, endLine: sf.getLineAndCharacterOfPosition(fn.getEnd()).line + 1 };
  }
  return undefined;
}

// --- TypeScript ------------------------------------------------------------------------------------------

function typescriptParametersRead(source: string): Map<ParameterName, ParameterRead> {
  const sf = ts.createSourceFile('reward.ts', source, ts.ScriptTarget.ES2022, true);
  const reads = new Map<ParameterName, ParameterRead>();
  const exported = (n: ts.Node) => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  const functions: ts.SignatureDeclaration[] = [];
  for (const s of sf.statements) {
    if (!exported(s)) continue;
    if (ts.isFunctionDeclaration(s)) functions.push(s);
    else if (ts.isVariableStatement(s))
      for (const d of s.declarationList.declarations) if (d.initializer && ts.isFunctionLike(d.initializer)) functions.push(d.initializer);
  }
  for (const fn of functions) {
    const names = new Set(fn.parameters.flatMap((p) => (ts.isIdentifier(p.name) ? [p.name.text] : [])));
    const visit = (n: ts.Node) => {
      const isName = ts.isPropertyAccessExpression(n.parent) && n.parent.name === n;
      const isKey = (ts.isPropertyAssignment(n.parent) || ts.isParameter(n.parent)) && n.parent.name === n;
      if (ts.isIdentifier(n) && names.has(n.text) && !isName && !isKey) {
        const start = sf.getLineAndCharacterOfPosition(n.getStart(sf));
        addRead(reads, n.text as ParameterName, start.line + 1, start.character + 1, n.text.length);
      }
      ts.forEachChild(n, visit);
    };
    if ('body' in fn && fn.body) visit(fn.body);
  }
  return reads;
}

function typescriptNamesRead(source: string): NameRead[] {
  const sf = ts.createSourceFile('reward.ts', source, ts.ScriptTarget.ES2022, true);
  const out: NameRead[] = [];
  const add = (literal: ts.Node, name: string, parameter: ts.Expression) => {
    if (!ts.isIdentifier(parameter) || !(parameter.text in NAMED_PARAMETERS)) return;
    const start = sf.getLineAndCharacterOfPosition(literal.getStart(sf));
    const end = sf.getLineAndCharacterOfPosition(literal.getEnd());
    out.push({
      name,
      parameter: parameter.text,
      line: start.line + 1,
      column: start.character + 1,
      endColumn: (end.line === start.line ? end.character : start.character + name.length) + 1,
    });
  };
  const visit = (n: ts.Node) => {
    if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression)) add(n.argumentExpression, n.argumentExpression.text, n.expression);
    else if (ts.isPropertyAccessExpression(n) && n.name.text !== 'length') add(n.name, n.name.text, n.expression);
    else if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.InKeyword && ts.isStringLiteralLike(n.left)) add(n.left, n.left.text, n.right);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

// --- Python (the parser must be loaded: the replay loads it before it opens the sandbox) -----------------

function withPythonTree<T>(source: string, read: (root: PythonNode) => T): T {
  const tree = parsePython(source);
  try {
    return read(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/** Python passes the parameters by position: the i-th parameter is the contract's i-th, whatever its name. */
function pythonParametersRead(source: string): Map<ParameterName, ParameterRead> {
  const contract = parameterNames(true);
  return withPythonTree(source, (root) => {
    const reads = new Map<ParameterName, ParameterRead>();
    for (const [name, def] of topLevelFunctions(root)) {
      if (!REWARD_FUNCTIONS.includes(name)) continue;
      const byName = new Map<string, ParameterName>();
      parameterList(def).forEach((p, i) => {
        if (p.name && contract[i]) byName.set(p.name, contract[i]!);
      });
      const body = def.childForFieldName('body');
      if (!body) continue;
      for (const n of walk(body)) {
        const parameter = n.type === 'identifier' ? byName.get(n.text) : undefined;
        if (!parameter || !isNameReference(n) || insideNestedParameters(n, def)) continue;
        const at = nodeAt(n);
        addRead(reads, parameter, at.line, at.column, n.text.length);
      }
    }
    return reads;
  });
}

/** Whether `n` is a lambda's or nested function's own parameter (a name that shadows the reward's). */
function insideNestedParameters(n: PythonNode, def: PythonNode): boolean {
  for (let p = n.parent; p && p.id !== def.id; p = p.parent) if (p.type === 'lambda_parameters' || p.type === 'parameters') return true;
  return false;
}

function pythonNamesRead(source: string): NameRead[] {
  return withPythonTree(source, (root) =>
    keyUsesIn(walk(root)).flatMap((u) => {
      if (u.dict.type !== 'identifier' || !(u.dict.text in NAMED_PARAMETERS)) return [];
      const at = nodeAt(u.keyNode);
      const endColumn = u.keyNode.endPosition.row === u.keyNode.startPosition.row ? u.keyNode.endPosition.column + 1 : at.column + u.key.length + 2;
      return [{ name: u.key, parameter: u.dict.text, line: at.line, column: at.column, endColumn }];
    }),
  );
}
