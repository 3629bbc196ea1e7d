// Python only. A Python reward that does not parse, or uses a Python 2 idiom Python 3 refuses (`print "x"`,
// `except E, e:`, `<>`): located before anything runs, with the Python 3 spelling as a fix where it is one edit.
import { firstSyntaxError, python2Idioms } from '../../reward/python-syntax';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'python-syntax',
  severity: 'error',
  description: 'a Python syntax error or a Python 2 idiom (print statement, except E, e:, <>, backquotes, 0777)',
  docs: 'Reward files run in Python 3 (Pyodide). A file that does not parse never runs; Python 2 idioms, common in older reward code and in LLM output, are syntax errors in Python 3. The fixes rewrite `print "x"` as `print("x")`, `except E, e:` as `except E as e:` and `<>` as `!=`.',
  fixable: true,
} as const satisfies RuleMeta;

export const pythonSyntax = defineRule({
  meta,
  python(ctx) {
    const syntax = firstSyntaxError(ctx.root);
    if (syntax) {
      const at = { line: syntax.at.line - 1, character: syntax.at.column - 1 };
      ctx.report(meta, { start: at, end: { line: at.line, character: at.character + 1 } }, syntax.message);
    }
    for (const idiom of python2Idioms(ctx.root)) {
      const n = idiom.node;
      const fixes: Fix[] = [];
      if (n.type === 'print_statement') {
        const args = n.text.replace(/^print\s*/, '');
        if (!args.startsWith('>>')) fixes.push({ title: 'Write print(...) as a call', edits: [ctx.replace(n, `print(${args})`)], preferred: true });
      } else if (n.type === '<>') fixes.push({ title: 'Write != instead of <>', edits: [ctx.replace(n, '!=')], preferred: true });
      else if (n.type === 'except_clause') {
        const values = n.childrenForFieldName('value');
        if (values.length === 2 && values[0] && values[1])
          fixes.push({
            title: `Write "except ${values[0].text} as ${values[1].text}"`,
            edits: [{ range: { start: ctx.range(values[0]).end, end: ctx.range(values[1]).end }, newText: ` as ${values[1].text}` }],
            preferred: true,
          });
      }
      ctx.report(meta, n, idiom.message, fixes);
    }
  },
});
