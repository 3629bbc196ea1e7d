// Hover and completion for reward files: schema meaning, type, range and units of parameters, entry elements
// and names; Minecraft names inside dict accesses; the built-in tasks in a `// task:` header (TypeScript and
// Python alike). Everything else falls back to TypeScript's own answers.
import ts from 'typescript';
import { CompletionItemKind, MarkupKind, type CompletionItem, type Hover, type Position } from 'vscode-languageserver-protocol';
import { BUILTIN_TASKS } from '../../runner/src/task-list';
import { NEAREST_ENTRY, loadSchema, suggestNames } from '../../runner/src/schema';
import { schemaParameter, type Snapshot } from '../../runner/src/lint/analysis';
import { schemaFacts, type DictKeys, type Field } from '../../runner/src/lint/rules';

export const KEY_DOCS: Record<DictKeys, string> = {
  nearby: `[distance m, yaw rad, pitch rad] (${NEAREST_ENTRY.map((f) => f.name).join(', ')}) of the nearest visible one; absent when none is visible`,
  item: 'change of its count since the previous step; absent when unchanged',
  mob: 'how many were killed this step',
};

function nodeAt(sf: ts.SourceFile, pos: number): ts.Node | undefined {
  let found: ts.Node | undefined;
  const visit = (n: ts.Node) => {
    if (pos >= n.getStart(sf) && pos < n.getEnd()) {
      found = n;
      ts.forEachChild(n, visit);
    }
  };
  visit(sf);
  return found;
}

/** The dict a string/name at `node` is a key of: `D['x']`, `'x' in D`, `D.x`. */
function keyContext(snap: Snapshot, node: ts.Node): { dict: ts.Expression; keys: DictKeys } | undefined {
  const p = node.parent;
  let dict: ts.Expression | undefined;
  if (p && ts.isElementAccessExpression(p) && p.argumentExpression === node) dict = p.expression;
  else if (p && ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.InKeyword && p.left === node) dict = p.right;
  else if (p && ts.isPropertyAccessExpression(p) && p.name === node) dict = p.expression;
  if (!dict) return undefined;
  const keys = schemaFacts(snap, dict).keys;
  return keys && { dict, keys };
}

function fieldMarkdown(label: string, f: Field): string {
  return `**${label}** \`number\` — ${f.range.min.toFixed(2).replace(/\.00$/, '')}..${f.range.max.toFixed(2).replace(/\.00$/, '')} ${f.range.unit}\n\n${f.doc}`;
}

export function nameMarkdown(name: string, keys: DictKeys, dictText: string): string {
  const schema = loadSchema();
  const kinds = schema.kindsOf(name);
  const display = schema.displayName(name);
  const head = `**${name}**${display ? ` — ${display}` : ''}${kinds.length ? ` (${kinds.join(', ')})` : ''}`;
  if (schema.namesFor(keys).has(name)) return `${head}\n\n\`${dictText}['${name}']\`: ${KEY_DOCS[keys]}.`;
  const suggestions = suggestNames(name, schema.namesFor(keys));
  return `${head}\n\nNever a key of \`${dictText}\`${suggestions.length ? `; did you mean ${suggestions.map((s) => `\`${s}\``).join(', ')}?` : '.'}`;
}

export function hoverAt(snap: Snapshot, userOffset: number): Hover | undefined {
  const pos = snap.toVirtual(userOffset);
  const node = nodeAt(snap.sourceFile, pos);
  if (!node) return undefined;
  const range = snap.nodeRange(node);
  const md = (value: string): Hover => ({ contents: { kind: MarkupKind.Markdown, value }, range });
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isIdentifier(node)) {
    const ctx = keyContext(snap, node);
    if (ctx) return md(nameMarkdown(node.text, ctx.keys, snap.userTextOf(ctx.dict)));
  }
  if (ts.isIdentifier(node)) {
    const decl = snap.checker.getSymbolAtLocation(node)?.valueDeclaration;
    if (decl && ts.isParameter(decl) && ts.isIdentifier(decl.name)) {
      const spec = schemaParameter(decl.name.text);
      if (spec) {
        const range = spec.range ? ` — ${spec.range.min}..${spec.range.max} ${spec.range.unit}` : '';
        return md(`**${spec.name}** \`${spec.tsType}\`${range}${spec.attackOnly ? ' (attack tasks only)' : ''}\n\n${spec.doc}`);
      }
    }
    const field = schemaFacts(snap, node).field;
    if (field) return md(fieldMarkdown(node.text, field));
  }
  if (ts.isNumericLiteral(node) && node.parent && ts.isElementAccessExpression(node.parent)) {
    const field = schemaFacts(snap, node.parent).field;
    if (field) return md(fieldMarkdown(`[${node.text}] ${field.label}`, field));
  }
  const info = snap.project.languageService().getQuickInfoAtPosition(snap.sourceFile.fileName, pos);
  if (!info) return undefined;
  const signature = ts.displayPartsToString(info.displayParts);
  const doc = ts.displayPartsToString(info.documentation);
  return {
    contents: { kind: MarkupKind.Markdown, value: `\`\`\`typescript\n${signature}\n\`\`\`${doc ? `\n\n${doc}` : ''}` },
    range: snap.range(info.textSpan.start, info.textSpan.start + info.textSpan.length),
  };
}

const TS_KINDS: Record<string, CompletionItemKind> = {
  [ts.ScriptElementKind.functionElement]: CompletionItemKind.Function,
  [ts.ScriptElementKind.memberFunctionElement]: CompletionItemKind.Method,
  [ts.ScriptElementKind.memberVariableElement]: CompletionItemKind.Field,
  [ts.ScriptElementKind.parameterElement]: CompletionItemKind.Variable,
  [ts.ScriptElementKind.localVariableElement]: CompletionItemKind.Variable,
  [ts.ScriptElementKind.constElement]: CompletionItemKind.Constant,
  [ts.ScriptElementKind.letElement]: CompletionItemKind.Variable,
  [ts.ScriptElementKind.variableElement]: CompletionItemKind.Variable,
  [ts.ScriptElementKind.keyword]: CompletionItemKind.Keyword,
  [ts.ScriptElementKind.typeElement]: CompletionItemKind.Class,
};

/** Characters that ask for completion as they are typed: quotes and dots for names, ':' for the `// task:` header. */
export const COMPLETION_TRIGGERS = ['"', "'", '.', '`', ':'];

/**
 * The built-in tasks, where a `// task:` (`# task:` in Python) header is being typed among the file's leading
 * comments, from their definitions (task-list.ts); none for a ':' typed anywhere else (elsewhere a colon asks
 * for nothing); undefined otherwise.
 */
export function taskHeaderCompletions(text: string, position: Position, trigger?: string): CompletionItem[] | undefined {
  const lines = text.split(/\r?\n/);
  const line = lines[position.line] ?? '';
  const typed = /^(\s*(?:\/\/|#)\s*task\s*:)(\s*)[A-Za-z0-9_./-]*$/.exec(line.slice(0, position.character));
  if (!typed || lines.slice(0, position.line).some((l) => !/^\s*(?:\/\/|\/\*|\*|#|$)/.test(l))) return trigger === ':' ? [] : undefined;
  const start = typed[1]!.length + typed[2]!.length;
  const end = start + /^[A-Za-z0-9_./-]*/.exec(line.slice(start))![0].length;
  const range = { start: { line: position.line, character: start }, end: { line: position.line, character: end } };
  return Object.values(BUILTIN_TASKS).map((t, i) => ({
    label: t.id,
    kind: CompletionItemKind.Value,
    detail: t.description.objective,
    documentation: { kind: MarkupKind.Markdown, value: `${t.description.success_criteria}\n\n${t.description.procedure} Episode limit: ${t.maxSteps} steps.` },
    sortText: String(i).padStart(3, '0'),
    filterText: t.id,
    // Right after the colon (the trigger character) the id comes with its space.
    textEdit: { range, newText: typed[2] === '' ? ` ${t.id}` : t.id },
  }));
}

export function completionsAt(snap: Snapshot, userOffset: number): CompletionItem[] {
  const pos = snap.toVirtual(userOffset);
  const sf = snap.sourceFile;
  const node = nodeAt(sf, Math.max(0, pos - 1));
  const schema = loadSchema();
  const names = (keys: DictKeys, dictText: string, replaceStart: number, replaceEnd: number): CompletionItem[] =>
    [...schema.namesFor(keys)].sort().map((name) => ({
      label: name,
      kind: CompletionItemKind.EnumMember,
      detail: `${schema.displayName(name) ?? name} (${schema.kindsOf(name).join(', ')})`,
      documentation: `${dictText}['${name}']: ${KEY_DOCS[keys]}.`,
      textEdit: { range: snap.range(replaceStart, replaceEnd), newText: name },
    }));
  if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) {
    const ctx = keyContext(snap, node);
    if (!ctx) return [];
    const start = node.getStart(sf) + 1;
    const closed = node.getEnd() - start > node.text.length;
    return names(ctx.keys, snap.userTextOf(ctx.dict), start, closed ? node.getEnd() - 1 : node.getEnd());
  }
  // `D.na|` (the name being typed) or `D.|` (nothing typed yet; the parser may have taken a word on the next
  // line as the name, which must not be replaced).
  const access = node && ts.isIdentifier(node) && node.parent && ts.isPropertyAccessExpression(node.parent) && node.parent.name === node ? node.parent : node;
  if (access && ts.isPropertyAccessExpression(access) && pos > access.expression.getEnd()) {
    const keys = schemaFacts(snap, access.expression).keys;
    const nameStart = access.name.getStart(sf);
    if (keys) return names(keys, snap.userTextOf(access.expression), Math.min(nameStart, pos), nameStart >= pos ? pos : access.name.getEnd());
  }
  const completions = snap.project.languageService().getCompletionsAtPosition(sf.fileName, pos, {});
  return (completions?.entries ?? []).map((e) => ({ label: e.name, kind: TS_KINDS[e.kind] ?? CompletionItemKind.Text, sortText: e.sortText }));
}
