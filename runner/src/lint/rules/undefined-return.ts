// `return;` in a function that returns numbers elsewhere: the reward becomes NaN on that path, and
// TypeScript's noImplicitReturns lets a bare `return;` pass. (TypeScript's "not all code paths return a
// value", ts7030, is reported under this id too.)
import ts from 'typescript';
import { isFunctionLike, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'undefined-return',
  severity: 'error',
  description: 'a function feeding the reward that can return undefined',
  docs: 'A reward function or helper that returns a number on some paths and nothing on others makes the reward NaN on those steps, which poisons the returns PPO learns from. Return 0 (or the value you mean) on every path.',
  fixable: true,
} as const satisfies RuleMeta;

export const undefinedReturn = defineRule({
  meta,
  end: (ctx) => bareReturns(ctx),
});

function bareReturns(ctx: LintContext): void {
  const visit = (fn: ts.Node) => {
    if (isFunctionLike(fn) && fn.body && ts.isBlock(fn.body)) {
      const returns: ts.ReturnStatement[] = [];
      const collect = (n: ts.Node) => {
        if (isFunctionLike(n)) return;
        if (ts.isReturnStatement(n)) returns.push(n);
        ts.forEachChild(n, collect);
      };
      ts.forEachChild(fn.body, collect);
      if (returns.some((r) => r.expression)) {
        for (const r of returns.filter((x) => !x.expression)) {
          ctx.report(meta, r, 'This `return;` returns undefined while the function returns numbers elsewhere; the reward becomes NaN.', [
            { title: 'Return 0', edits: [ctx.replace(r, 'return 0;')], preferred: true },
          ]);
        }
      }
    }
    ts.forEachChild(fn, visit);
  };
  visit(ctx.sf);
}
