// Python reward files' syntax: tree-sitter-python through web-tree-sitter (both WebAssembly, no native
// addon), loaded once per process (`loadPythonParser`, asynchronous; parsing is synchronous after it). The
// runtime reads the reward contract from it here; the lint rules walk the same trees (lint/python.ts).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Language, Node, Parser, Tree } from 'web-tree-sitter';
import { PYTHON_BUILTINS } from './python-driver';
import { checkContract, type CompiledReward, type ContractFunction, type EntryLocation, RewardError } from './compile';

export type { Node as PythonNode, Tree as PythonTree };
export { PYTHON_BUILTINS };

/** Whether a file name is a Python reward (`*.py`, the paper's own format). */
export function isPythonFile(file: string): boolean {
  return /\.py$/i.test(file);
}

let parser: Parser | null = null;
let loading: Promise<void> | null = null;

/**
 * Where a WebAssembly file of the parser lies: beside the bundle (dist/, where build.mjs copies them) or in
 * its npm package (running from sources).
 */
function wasmPath(bundled: string, packaged: string): string {
  const beside = path.join(__dirname, bundled);
  return existsSync(beside) ? beside : require.resolve(packaged);
}

/** Loads the parser once; every later call returns the same promise. */
export function loadPythonParser(): Promise<void> {
  loading ??= (async () => {
    const ts = require('web-tree-sitter') as typeof import('web-tree-sitter');
    const runtime = wasmPath('web-tree-sitter.wasm', 'web-tree-sitter/web-tree-sitter.wasm');
    await ts.Parser.init({ locateFile: () => runtime });
    const language: Language = await ts.Language.load(readFileSync(wasmPath('tree-sitter-python.wasm', 'tree-sitter-python/tree-sitter-python.wasm')));
    const p = new ts.Parser();
    p.setLanguage(language);
    parser = p;
  })();
  return loading;
}

/** Whether `loadPythonParser` has finished (synchronous callers need it loaded). */
export function pythonParserReady(): boolean {
  return parser !== null;
}

/** Parses Python source; the parser must be loaded. The caller deletes the tree when done (`tree.delete()`). */
export function parsePython(source: string): Tree {
  if (!parser) throw new Error('the Python parser is not loaded (await loadPythonParser() first)');
  const tree = parser.parse(source);
  if (!tree) throw new Error('the Python parser returned no tree');
  return tree;
}

/** 1-based line and column of a node's start. */
export function nodeAt(node: Node): EntryLocation {
  return { line: node.startPosition.row + 1, column: node.startPosition.column + 1 };
}

/** The first syntax error of a tree (an ERROR node or a node the parser had to invent), or null. */
export function firstSyntaxError(root: Node): { at: EntryLocation; message: string } | null {
  if (!root.hasError) return null;
  const stack: Node[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.isMissing) return { at: nodeAt(n), message: `syntax error: expected ${n.type} here` };
    if (n.isError) {
      const text = n.text.split('\n')[0]!.slice(0, 40);
      return { at: nodeAt(n), message: `syntax error: cannot parse ${JSON.stringify(text)}` };
    }
    if (!n.hasError) continue;
    for (let i = n.childCount - 1; i >= 0; i--) stack.push(n.child(i)!);
  }
  return { at: nodeAt(root), message: 'syntax error' };
}

/** The top-level functions of a module (decorated ones included), by name. */
export function topLevelFunctions(root: Node): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const stmt of root.namedChildren) {
    const def = stmt?.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
    if (def?.type !== 'function_definition') continue;
    const name = def.childForFieldName('name');
    if (name) out.set(name.text, def);
  }
  return out;
}

/** A function definition's parameter names in order (null for `*args`, `**kw` and the bare `*`, `/`). */
export function parameterList(def: Node): { name: string | null; at: EntryLocation }[] {
  const params = def.childForFieldName('parameters');
  if (!params) return [];
  return params.namedChildren.flatMap((p) => {
    if (!p || p.type === 'comment') return [];
    if (p.type === 'identifier') return [{ name: p.text, at: nodeAt(p) }];
    if (p.type === 'typed_parameter' || p.type === 'default_parameter' || p.type === 'typed_default_parameter') {
      const name = p.type === 'typed_parameter' ? p.namedChildren[0] : p.childForFieldName('name');
      return [{ name: name?.type === 'identifier' ? name.text : null, at: nodeAt(p) }];
    }
    return [{ name: null, at: nodeAt(p) }];
  });
}

/** Every node of a tree, depth first, in source order (iterative: deep files must not overflow the stack). */
export function* walk(root: Node): Generator<Node> {
  const stack: Node[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    yield n;
    for (let i = n.childCount - 1; i >= 0; i--) stack.push(n.child(i)!);
  }
}

/** The value of a plain string literal (no f-string, no escapes to decode), else undefined. */
export function pythonString(node: Node | null | undefined): string | undefined {
  if (node?.type !== 'string') return undefined;
  const start = node.children[0];
  if (!start || /[fFbB]/.test(start.text)) return undefined;
  const content = node.namedChildren.filter((c) => c?.type === 'string_content');
  if (node.namedChildren.some((c) => c?.type === 'interpolation' || c?.type === 'escape_sequence')) return undefined;
  return content.map((c) => c!.text).join('');
}

/** `d["k"]`, `d.get("k")`, `"k" in d`: the dict, the key node and how it is used. */
export interface PythonKeyUse {
  dict: Node;
  keyNode: Node;
  key: string;
  how: 'subscript' | 'method' | 'in';
  node: Node;
}

/** Every string-keyed use of a dict among `nodes` (a tree's walk), in their order. */
export function keyUsesIn(nodes: Iterable<Node>): PythonKeyUse[] {
  const out: PythonKeyUse[] = [];
  for (const n of nodes) {
    if (n.type === 'subscript') {
      const dict = n.childForFieldName('value');
      const keyNode = n.childForFieldName('subscript');
      const key = pythonString(keyNode);
      if (dict && keyNode && key !== undefined) out.push({ dict, keyNode, key, how: 'subscript', node: n });
    } else if (n.type === 'call') {
      const fn = n.childForFieldName('function');
      const keyNode = n.childForFieldName('arguments')?.namedChildren[0];
      const key = pythonString(keyNode);
      if (fn?.type === 'attribute' && ['get', 'setdefault', 'pop'].includes(fn.childForFieldName('attribute')?.text ?? '') && keyNode && key !== undefined)
        out.push({ dict: fn.childForFieldName('object')!, keyNode, key, how: 'method', node: n });
    } else if (n.type === 'comparison_operator' && n.children.some((c) => c?.type === 'in' || c?.type === 'not in')) {
      const [left, right] = [n.namedChildren[0], n.namedChildren[1]];
      const key = pythonString(left);
      if (left && right && key !== undefined) out.push({ dict: right, keyNode: left, key, how: 'in', node: n });
    }
  }
  return out;
}

/** A located problem in a Python file's syntax tree. */
export interface PythonProblem {
  at: EntryLocation;
  /** End of the node (1-based), for editors that underline it. */
  end: EntryLocation;
  message: string;
  node: Node;
}

function problem(node: Node, message: string): PythonProblem {
  return { at: nodeAt(node), end: { line: node.endPosition.row + 1, column: node.endPosition.column + 1 }, message, node };
}

/**
 * Python 2 idioms Python 3 refuses, which tree-sitter-python still parses: `print "x"`, `exec "code"`,
 * `except E, e:`, `<>`, backquotes and `0777` octals. Each with the Python 3 spelling.
 */
export function python2Idioms(root: Node): PythonProblem[] {
  const out: PythonProblem[] = [];
  for (const n of walk(root)) {
    if (n.type === 'print_statement') out.push(problem(n, 'Python 2 print statement: Python 3 writes print(...) as a call'));
    else if (n.type === 'exec_statement') out.push(problem(n, 'Python 2 exec statement: not available in Python 3 (nor in the reward sandbox)'));
    else if (n.type === 'except_clause' && n.children.some((c) => c?.type === ','))
      out.push(problem(n, 'Python 2 "except E, name:": Python 3 writes "except E as name:"'));
    else if (n.type === '<>') out.push(problem(n, 'Python 2 operator <>: Python 3 writes !='));
    else if (n.type === 'string' && n.text.startsWith('`')) out.push(problem(n, 'Python 2 backquotes: Python 3 writes repr(...)'));
    else if (n.type === 'integer' && /^0\d+$/.test(n.text) && !/^0+$/.test(n.text))
      out.push(problem(n, `Python 2 octal literal ${n.text}: Python 3 writes 0o${n.text.replace(/^0+/, '')}`));
  }
  return out;
}

/** Modules a Python reward may import (python-driver.ts gives them; numpy is a small shim). */
export const PYTHON_MODULES: readonly string[] = ['math', 'numpy', 'typing', '__future__'];
/** What the numpy shim has (python-driver.ts), for messages and completions. */
export const NUMPY_SHIM = ['sign', 'clip', 'sqrt', 'abs', 'exp', 'log', 'floor', 'mean', 'sum', 'min', 'max', 'array', 'linalg.norm', 'pi', 'inf', 'e'];

const CLOSED_ATTRIBUTE = /^(_|gi_|cr_|ag_|f_|tb_|co_)|^mro$/;

/**
 * What the Python sandbox refuses to run (python-driver.ts's Check, which stays the authority at run time):
 * modules other than PYTHON_MODULES, attributes that start with `_` or reach frames, code and tracebacks,
 * names that start with `__`. Checked here too so that the editor and `train` say so before Pyodide starts.
 */
export function sandboxRefusals(root: Node): PythonProblem[] {
  const out: PythonProblem[] = [];
  const modules = `math, numpy (a shim: ${NUMPY_SHIM.join(', ')}), typing`;
  for (const n of walk(root)) {
    if (n.type === 'import_statement' || n.type === 'import_from_statement') {
      const named = n.type === 'import_from_statement' ? [n.childForFieldName('module_name')] : n.childrenForFieldName('name');
      for (const m of named) {
        const name = (m?.type === 'aliased_import' ? m.childForFieldName('name') : m)?.text ?? '.';
        if (m?.type === 'relative_import' || !PYTHON_MODULES.includes(name.split('.')[0]!))
          out.push(problem(m ?? n, `the reward sandbox has no module ${JSON.stringify(name)}; available: ${modules}`));
      }
    } else if (n.type === 'attribute') {
      const attr = n.childForFieldName('attribute');
      if (attr && CLOSED_ATTRIBUTE.test(attr.text))
        out.push(
          problem(
            attr,
            `the reward sandbox does not allow the attribute .${attr.text} (attributes starting with _ and those of frames, code and tracebacks are closed)`,
          ),
        );
    } else if (n.type === 'identifier' && n.text.startsWith('__') && isNameReference(n)) {
      out.push(problem(n, `the reward sandbox does not allow the name ${n.text}`));
    } else if (n.type === 'keyword_pattern' && n.namedChildren[0] && CLOSED_ATTRIBUTE.test(n.namedChildren[0].text)) {
      out.push(problem(n, `the reward sandbox does not allow the attribute .${n.namedChildren[0].text}`));
    }
  }
  // In reading order (the walk meets `a.__class__.__base__` at its outermost attribute first).
  return out.sort((a, b) => a.at.line - b.at.line || a.at.column - b.at.column);
}

/** Whether an identifier names a variable (not a definition's name, a parameter, a keyword or an import path). */
export function isNameReference(n: Node): boolean {
  const parent = n.parent;
  if (!parent) return true;
  const field = (type: string, name: string) => parent.type === type && parent.childForFieldName(name)?.id === n.id;
  if (field('function_definition', 'name') || field('class_definition', 'name') || field('keyword_argument', 'name')) return false;
  if (field('attribute', 'attribute') || parent.type === 'dotted_name' || parent.type === 'parameters') return false;
  if (
    field('default_parameter', 'name') ||
    field('typed_default_parameter', 'name') ||
    (parent.type === 'typed_parameter' && parent.namedChildren[0]?.id === n.id)
  )
    return false;
  return true;
}

/**
 * Reads a Python reward file's contract from its syntax tree: `reward_function` at the top level with the
 * paper's parameters, or `dense` and `sparse` (the same rule as TypeScript's exports), after the checks that
 * need no interpreter: syntax, Python 2 idioms, what the sandbox refuses. Throws a located RewardError.
 */
export function compilePythonReward(file: string, source: string): CompiledReward {
  const tree = parsePython(source);
  try {
    const root = tree.rootNode;
    const fail = (kind: 'compile' | 'contract', p: { at: EntryLocation; message: string }): never => {
      throw new RewardError(kind, file, p.at.line, p.at.column, p.message);
    };
    const syntax = firstSyntaxError(root);
    if (syntax) fail('compile', syntax);
    const idiom = python2Idioms(root)[0];
    if (idiom) fail('compile', idiom);
    const refused = sandboxRefusals(root)[0];
    if (refused) fail('contract', refused);
    const functions = new Map<string, ContractFunction>();
    for (const [name, def] of topLevelFunctions(root)) {
      functions.set(name, { at: nodeAt(def.childForFieldName('name')!), params: parameterList(def) });
    }
    const contract = checkContract(file, functions, 'define');
    return {
      file,
      language: 'python',
      js: source,
      map: { version: '3', sources: [], names: [], mappings: '' } as never,
      ...contract,
      loops: [],
      statements: [],
    };
  } finally {
    tree.delete();
  }
}
