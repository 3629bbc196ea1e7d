// Python only. What the Python reward sandbox refuses to run: a module other than math, numpy (the shim)
// and typing, an attribute starting with `_` or reaching frames and code, a name starting with `__`. The
// runtime refuses the file with the same words (reward/python-syntax.ts's sandboxRefusals is the one check).
import { sandboxRefusals } from '../../reward/python-syntax';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'sandbox-refused',
  severity: 'error',
  description: 'an import, attribute or name the Python reward sandbox refuses (os, js, __import__, __class__, …)',
  docs: 'Python rewards run in a sandbox with no file system, network, subprocesses or host JavaScript: only `math`, a small `numpy` shim (sign, clip, sqrt, abs, mean, linalg.norm, …) and `typing` can be imported, and attributes starting with `_` (`__class__`, `__globals__`) or reaching frames and code (`gi_frame`, `f_back`) are closed. The file is refused before it runs; write the computation with what the sandbox has.',
  fixable: false,
} as const satisfies RuleMeta;

export const sandboxRefused = defineRule({
  meta,
  python(ctx) {
    for (const p of sandboxRefusals(ctx.root)) ctx.report(meta, p.node, p.message);
  },
});
