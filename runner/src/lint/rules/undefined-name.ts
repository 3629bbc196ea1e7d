// Python only. A name the reward reads that nothing defines: not a parameter, an assignment, a def, an
// import, a loop or comprehension variable, nor one of the sandbox's builtins. At run time it is a NameError
// on the step that reaches it. `np` without `import numpy as np` is the common case: the fixes add the
// import (the sandbox's numpy shim) or switch to `math`.
import { NUMPY_SHIM, PYTHON_BUILTINS, type PythonNode } from '../../reward/python-syntax';
import type { PythonLintContext } from '../python';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'undefined-name',
  severity: 'error',
  description: 'a Python name nothing defines (np without an import, open, eval, …): a NameError at run time',
  docs: 'The reward sandbox has a fixed set of builtins (no open, eval, exec, getattr, globals, exit) and only the modules it imports. A name that is neither defined in the file nor such a builtin raises NameError when the line runs, which ends the training run. `np` needs `import numpy as np` (a shim with sign, clip, sqrt, abs, mean, linalg.norm, …); `math` needs `import math`.',
  fixable: true,
} as const satisfies RuleMeta;

/** Where a name is defined rather than read. */
function definedNames(ctx: PythonLintContext): Set<string> {
  const names = new Set<string>(PYTHON_BUILTINS);
  const targets = (n: PythonNode | null) => {
    if (!n) return;
    if (n.type === 'identifier') names.add(n.text);
    // Tuple and list targets, starred targets; not the object of `a.b = …` or `a[i] = …`.
    else if (['pattern_list', 'tuple_pattern', 'list_pattern', 'list_splat_pattern', 'tuple', 'list', 'parenthesized_expression'].includes(n.type))
      for (const c of n.namedChildren) targets(c);
  };
  for (const n of ctx.nodes) {
    switch (n.type) {
      case 'function_definition':
      case 'class_definition':
        targets(n.childForFieldName('name'));
        break;
      case 'parameters':
      case 'lambda_parameters':
        for (const p of n.namedChildren) {
          if (p?.type === 'identifier') names.add(p.text);
          else {
            const name = p?.childForFieldName('name') ?? p?.namedChildren.find((c) => c?.type === 'identifier');
            if (name?.type === 'identifier') names.add(name.text);
          }
        }
        break;
      case 'assignment':
      case 'augmented_assignment':
      case 'for_statement':
      case 'for_in_clause':
        targets(n.childForFieldName('left'));
        break;
      case 'named_expression':
        targets(n.childForFieldName('name'));
        break;
      case 'as_pattern':
        targets(n.childForFieldName('alias')?.namedChildren[0] ?? n.childForFieldName('alias'));
        break;
      case 'aliased_import':
        targets(n.childForFieldName('alias'));
        break;
      case 'import_statement':
        for (const m of n.childrenForFieldName('name')) if (m?.type === 'dotted_name') targets(m.namedChildren[0]);
        break;
      case 'import_from_statement':
        for (const m of n.childrenForFieldName('name')) if (m?.type === 'dotted_name') targets(m.namedChildren[m.namedChildren.length - 1]);
        break;
      case 'global_statement':
      case 'nonlocal_statement':
        for (const c of n.namedChildren) targets(c);
        break;
    }
  }
  return names;
}

/** Whether an identifier is read as a variable (not a definition, attribute, keyword or import path). */
function isRead(n: PythonNode): boolean {
  const p = n.parent;
  if (!p) return false;
  const is = (type: string, field: string) => p.type === type && p.childForFieldName(field)?.id === n.id;
  if (is('attribute', 'attribute') || is('keyword_argument', 'name') || is('function_definition', 'name') || is('class_definition', 'name')) return false;
  if (['dotted_name', 'parameters', 'lambda_parameters', 'aliased_import', 'global_statement', 'nonlocal_statement', 'keyword_pattern'].includes(p.type))
    return false;
  if (['default_parameter', 'typed_default_parameter'].includes(p.type) && p.childForFieldName('name')?.id === n.id) return false;
  if (p.type === 'typed_parameter' && p.namedChildren[0]?.id === n.id) return false;
  return true;
}

function importLine(ctx: PythonLintContext, statement: string): Fix['edits'][number] {
  // After a leading comment block and docstring, before the first statement.
  const first = ctx.root.namedChildren.find((c) => c && c.type !== 'comment' && !(c.type === 'expression_statement' && c.namedChildren[0]?.type === 'string'));
  const line = first ? first.startPosition.row : ctx.text.split('\n').length - 1;
  return { range: { start: { line, character: 0 }, end: { line, character: 0 } }, newText: `${statement}\n` };
}

export const undefinedName = defineRule({
  meta,
  python(ctx) {
    const defined = definedNames(ctx);
    const mathNames = new Set(['sqrt', 'exp', 'log', 'floor', 'pi', 'inf', 'e']);
    for (const n of ctx.nodes) {
      if (n.type !== 'identifier' || defined.has(n.text) || !isRead(n)) continue;
      const fixes: Fix[] = [];
      let hint = '';
      if (n.text === 'np' || n.text === 'numpy') {
        hint = ` Import the sandbox's numpy shim (${NUMPY_SHIM.join(', ')}).`;
        fixes.push({ title: 'Add "import numpy as np"', edits: [importLine(ctx, n.text === 'np' ? 'import numpy as np' : 'import numpy')], preferred: true });
        const attr = n.parent?.type === 'attribute' ? n.parent.childForFieldName('attribute')?.text : undefined;
        if (attr && mathNames.has(attr)) {
          const edits = [ctx.replace(n, 'math')];
          if (!defined.has('math')) edits.push(importLine(ctx, 'import math'));
          fixes.push({ title: `Use math.${attr}`, edits });
        }
      } else if (n.text === 'math') {
        fixes.push({ title: 'Add "import math"', edits: [importLine(ctx, 'import math')], preferred: true });
      } else if (
        ['open', 'eval', 'exec', 'compile', 'getattr', 'setattr', 'globals', 'locals', 'vars', 'exit', 'quit', 'input', '__import__'].includes(n.text)
      ) {
        hint = ' The reward sandbox has no file system, no dynamic code and no exit.';
      }
      ctx.report(meta, n, `'${n.text}' is not defined: a NameError when this line runs.${hint}`, fixes);
    }
  },
});
