// The schema rules on Python reward files (`*.reward.py`): the tree-sitter-python tree of the file (the
// runtime's parser, reward/python-syntax.ts), what the rules' `python` hooks share, and `lintPython`. A rule
// serves Python when it has a `python` hook, TypeScript when it has `node`/`end` hooks (rule.ts); the schema
// facts come from ../schema.ts for both.
import { keyUsesIn, type PythonKeyUse, type PythonNode, parsePython, pythonString, walk } from '../reward/python-syntax';

export { parsePython, pythonString, type PythonKeyUse, type PythonNode };
import type { DictKeys } from './context';
import type { Fix, LspRange, RewardDiagnostic, RuleMeta, TextEdit } from './rule';
import { PARAMETERS, type ObservationSchema } from '../schema';

/** The observation parameters that are dicts of names, and the kind of names each holds. */
export const PYTHON_OBSERVATION_DICTS: Readonly<Record<string, DictKeys>> = Object.fromEntries(PARAMETERS.flatMap((p) => (p.keys ? [[p.name, p.keys]] : [])));

export class PythonLintContext {
  readonly out: RewardDiagnostic[] = [];
  private readonly memos = new Map<string, unknown>();
  /** Every node in document order (one walk shared by the rules). */
  readonly nodes: PythonNode[];

  constructor(
    readonly fileName: string,
    readonly text: string,
    readonly root: PythonNode,
    readonly schema: ObservationSchema,
  ) {
    this.nodes = [...walk(root)];
  }

  range(node: PythonNode): LspRange {
    return {
      start: { line: node.startPosition.row, character: node.startPosition.column },
      end: { line: node.endPosition.row, character: node.endPosition.column },
    };
  }

  replace(node: PythonNode, newText: string): TextEdit {
    return { range: this.range(node), newText };
  }

  report(meta: RuleMeta, node: PythonNode | LspRange, message: string, fixes: Fix[] = []): void {
    const range = 'type' in node ? this.range(node as PythonNode) : (node as LspRange);
    this.out.push({ range, severity: meta.severity, code: meta.id, message, source: 'rewardsmith', fixes });
  }

  memo<T>(key: string, compute: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, compute());
    return this.memos.get(key) as T;
  }

  /** Nodes of these types, in document order. */
  ofType(...types: string[]): PythonNode[] {
    return this.nodes.filter((n) => types.includes(n.type));
  }

  /** The kind of names an expression holds when it is one of the observation dicts. */
  dictKeys(node: PythonNode | null): DictKeys | undefined {
    return node?.type === 'identifier' ? PYTHON_OBSERVATION_DICTS[node.text] : undefined;
  }
}

/** A number literal's value (with a leading minus), else undefined. */
export function pythonNumber(node: PythonNode | null | undefined): number | undefined {
  if (!node) return undefined;
  if (node.type === 'parenthesized_expression') return pythonNumber(node.namedChildren[0]);
  if (node.type === 'integer' || node.type === 'float') return Number(node.text.replace(/_/g, ''));
  if (node.type === 'unary_operator' && node.children[0]?.type === '-') {
    const v = pythonNumber(node.namedChildren[0]);
    return v === undefined ? undefined : -v;
  }
  return undefined;
}

/** Every string-keyed use of a dict in the file, in document order. */
export function keyUses(ctx: PythonLintContext): PythonKeyUse[] {
  return ctx.memo('key-uses', () => keyUsesIn(ctx.nodes));
}

/** Whether `node` is the target of an assignment (`d["k"] = …`, not `+=`, which reads first). */
export function isAssignmentTarget(node: PythonNode): boolean {
  const parent = node.parent;
  return parent?.type === 'assignment' && parent.childForFieldName('left')?.id === node.id;
}

/** The function definition a node is in, or null at the top level. */
export function enclosingFunction(node: PythonNode): PythonNode | null {
  for (let p = node.parent; p; p = p.parent) if (p.type === 'function_definition') return p;
  return null;
}

/**
 * Lints a Python reward file's text with every rule that has a `python` hook. The parser must be loaded
 * (`loadPythonParser()`); the rules' order is the registry's.
 */
export function lintPythonText(
  fileName: string,
  text: string,
  schema: ObservationSchema,
  rules: readonly { python?: (ctx: PythonLintContext) => void }[],
): RewardDiagnostic[] {
  const tree = parsePython(text);
  try {
    const ctx = new PythonLintContext(fileName, text, tree.rootNode, schema);
    for (const rule of rules) rule.python?.(ctx);
    return ctx.out.sort((a, b) => a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  } finally {
    tree.delete();
  }
}
