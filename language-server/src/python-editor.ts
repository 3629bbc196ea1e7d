// Hover and completion for Python reward files (`*.reward.py`), from the schema through the tree-sitter tree:
// the parameters' meaning, Minecraft names inside observation-dict keys (`current_nearest_blocks["…"]`,
// `.get("…")`, `"…" in …`) and their completion. The parser must be loaded (loadPythonParser).
import { CompletionItemKind, MarkupKind, type CompletionItem, type Hover, type Position } from 'vscode-languageserver-protocol';
import { PYTHON_OBSERVATION_DICTS, type PythonNode, parsePython } from '../../runner/src/lint/python';
import { PARAMETERS, loadSchema } from '../../runner/src/schema';
import { KEY_DOCS, nameMarkdown } from './editor';

/** The observation dict a string node is a key of, if any. */
function dictOfKey(str: PythonNode): { dict: string; keys: (typeof PYTHON_OBSERVATION_DICTS)[string] } | undefined {
  const p = str.parent;
  let dict: PythonNode | null | undefined;
  if (p?.type === 'subscript' && p.childForFieldName('subscript')?.id === str.id) dict = p.childForFieldName('value');
  else if (p?.type === 'comparison_operator' && p.namedChildren[0]?.id === str.id) dict = p.namedChildren[1];
  else if (p?.type === 'argument_list' && p.namedChildren[0]?.id === str.id && p.parent?.type === 'call') {
    const fn = p.parent.childForFieldName('function');
    if (fn?.type === 'attribute' && ['get', 'setdefault', 'pop'].includes(fn.childForFieldName('attribute')?.text ?? '')) dict = fn.childForFieldName('object');
  }
  const keys = dict?.type === 'identifier' ? PYTHON_OBSERVATION_DICTS[dict.text] : undefined;
  return keys && dict ? { dict: dict.text, keys } : undefined;
}

function stringAt(node: PythonNode | null): PythonNode | null {
  for (let n = node; n; n = n.parent) if (n.type === 'string') return n;
  return null;
}

function rangeOf(n: PythonNode) {
  return { start: { line: n.startPosition.row, character: n.startPosition.column }, end: { line: n.endPosition.row, character: n.endPosition.column } };
}

export function pythonHoverAt(text: string, position: Position): Hover | undefined {
  const tree = parsePython(text);
  try {
    const node = tree.rootNode.descendantForPosition({ row: position.line, column: position.character });
    const md = (value: string, n: PythonNode): Hover => ({ contents: { kind: MarkupKind.Markdown, value }, range: rangeOf(n) });
    const str = stringAt(node);
    const key = str && dictOfKey(str);
    if (str && key) {
      const name = str.namedChildren.find((c) => c?.type === 'string_content')?.text ?? '';
      return md(nameMarkdown(name, key.keys, key.dict), str);
    }
    if (node?.type === 'identifier') {
      const spec = PARAMETERS.find((p) => p.name === node.text);
      if (spec) {
        const range = spec.range ? ` — ${spec.range.min}..${spec.range.max} ${spec.range.unit}` : '';
        return md(`**${spec.name}**${range}${spec.attackOnly ? ' (attack tasks only)' : ''}\n\n${spec.doc}`, node);
      }
    }
    return undefined;
  } finally {
    tree.delete();
  }
}

export function pythonCompletionsAt(text: string, position: Position): CompletionItem[] {
  const tree = parsePython(text);
  try {
    const at = { row: position.line, column: Math.max(0, position.character - 1) };
    const str = stringAt(tree.rootNode.descendantForPosition(at));
    const key = str && dictOfKey(str);
    if (!str || !key) return [];
    const schema = loadSchema();
    // Replace what is between the quotes (the string may not be closed yet).
    const open = str.children[0]!;
    const close = str.children.at(-1);
    const closed = close?.type === 'string_end' && close.endIndex > open.endIndex;
    const start = { line: open.endPosition.row, character: open.endPosition.column };
    const end = closed ? { line: close!.startPosition.row, character: close!.startPosition.column } : position;
    return [...schema.namesFor(key.keys)].sort().map((name) => ({
      label: name,
      kind: CompletionItemKind.EnumMember,
      detail: `${schema.displayName(name) ?? name} (${schema.kindsOf(name).join(', ')})`,
      documentation: `${key.dict}['${name}']: ${KEY_DOCS[key.keys]}.`,
      textEdit: { range: { start, end }, newText: name },
    }));
  } finally {
    tree.delete();
  }
}
