// The reward contract as the runtime checks it: the file exports `reward_function` (or `dense` and `sparse`)
// with the contract's parameters and imports no modules. Lint and training agree because this is the
// runtime's own check.
import ts from 'typescript';
import { RewardError, checkContract, compileRewardFile, type ContractFunction } from '../../reward/compile';
import { firstSyntaxError, nodeAt, parameterList, topLevelFunctions } from '../../reward/python-syntax';
import type { PythonLintContext } from '../python';
import { PARAMETERS, parameterNames } from '../../schema';
import { BUILTIN_TASKS, taskFromHeader } from '../../tasks';
import { skipParens, type LintContext } from '../context';
import { defineRule, type Fix, type RuleMeta } from '../rule';

const meta = {
  id: 'reward-contract',
  severity: 'error',
  description:
    "the file does not export reward_function (or dense and sparse) with the contract's parameters in the contract's order (swapped, renamed, missing or extra), or imports modules",
  docs: `Training loads the file in a sandbox that has no modules and calls \`reward_function\` (or combines \`dense\` and \`sparse\`) with the schema's values by position: (${parameterNames(false).join(', ')}), attack tasks adding ${PARAMETERS.filter(
    (p) => p.attackOnly,
  )
    .map((p) => p.name)
    .join(
      ' and ',
    )}. A parameter swapped, renamed, left out or added receives another parameter's value, so the file is rejected when training starts; this says so while you type, at the parameter, naming the order. The fixes reorder the parameters, rename one back to its contract name (with its uses), insert the missing ones or remove an unused extra one.`,
  fixable: true,
} as const satisfies RuleMeta;

/** Contract results by file, keyed by what the contract depends on (imports and exported signatures). */
const contractCache = new Map<string, { key: string; error: { line: number; column: number; message: string } | null }>();

export const rewardContract = defineRule({
  meta,
  python: pythonContract,
  end: (ctx) => {
    const checked = parameters(ctx);
    contract(ctx, checked);
  },
});

const BASIC = parameterNames(false) as string[];
const ALL = parameterNames(true) as string[];
const ATTACK_ONLY = new Set<string>(PARAMETERS.filter((p) => p.attackOnly).map((p) => p.name));

/** The exported functions the runtime calls, as the runtime finds them (compile.ts). */
function contractFunctions(ctx: LintContext): { name: string; node: ts.Node; fn: ts.SignatureDeclaration & { body?: ts.Node } }[] {
  const out: { name: string; node: ts.Node; fn: ts.SignatureDeclaration & { body?: ts.Node } }[] = [];
  for (const st of ctx.sf.statements) {
    if (!ts.canHaveModifiers(st) || !(ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isFunctionDeclaration(st) && st.name) out.push({ name: st.name.text, node: st.name, fn: st });
    else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        const init = d.initializer;
        if (ts.isIdentifier(d.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          out.push({ name: d.name.text, node: d.name, fn: init });
      }
    }
  }
  return out.filter((f) => f.name === 'reward_function' || f.name === 'dense' || f.name === 'sparse');
}

/** Every identifier text inside a function (its parameters and body): a name a fix may not introduce. */
function namesIn(fn: ts.Node): Set<string> {
  const names = new Set<string>();
  const visit = (n: ts.Node) => {
    if (ts.isIdentifier(n)) names.add(n.text);
    ts.forEachChild(n, visit);
  };
  visit(fn);
  return names;
}

/**
 * The contract's parameters, one located finding per function whose list does not fit, naming the order:
 * swapped (fix: reorder), renamed at the right position (fix: rename back, with its uses), missing (fix:
 * insert them), extra (fix: remove it when unused). Returns the functions it reported on, whose runtime
 * message (the same mistake, less precisely placed) is then not repeated.
 */
function parameters(ctx: LintContext): Set<string> {
  const reported = new Set<string>();
  for (const { name, node, fn } of contractFunctions(ctx)) {
    const params = fn.parameters;
    // Patterns and rest parameters: the runtime's own message says what to write.
    if (params.some((p) => !ts.isIdentifier(p.name) || p.dotDotDotToken)) continue;
    const got = params.map((p) => (p.name as ts.Identifier).text);
    const isReward = name === 'reward_function';
    // The attack parameters are expected where the file takes one of them or its `// task:` is an attack task.
    const task = ctx.memo('task-header', () => taskFromHeader(ctx.snap.project.userText));
    const attack = got.some((g) => ATTACK_ONLY.has(g)) || (!!task && !!BUILTIN_TASKS[task]?.attack);
    const full = isReward && !attack ? BASIC : ALL;
    const expected = isReward ? full : ALL.slice(0, Math.max(got.length, 1 + Math.max(-1, ...got.map((g) => ALL.indexOf(g)))));
    if (got.length === expected.length && got.every((g, i) => g === expected[i])) continue;
    const order = `(${full.join(', ')})`;
    const takes = isReward ? `the runtime passes ${order} in this order` : `dense and sparse take a leading part of ${order}, in this order`;
    const report = (at: ts.Node, message: string, fixes: Fix[] = []) => {
      reported.add(name);
      ctx.report(meta, at, `${name}: ${message}; ${takes}, by position.`, fixes);
    };
    const listRange = params.length > 0 ? ctx.snap.range(params[0]!.getStart(ctx.sf), params[params.length - 1]!.getEnd()) : undefined;
    const inFunction = namesIn(fn);

    // Swapped: the contract's names, in another order. Reordering the list keeps every use bound to its name.
    if (got.length === expected.length && [...got].sort().join() === [...expected].sort().join()) {
      const first = got.findIndex((g, i) => g !== expected[i]);
      const texts = new Map(params.map((p) => [(p.name as ts.Identifier).text, ctx.snap.userTextOf(p)]));
      report(params[first]!, `parameter ${first + 1} is ${got[first]}, but the runtime passes ${expected[first]} there (the parameters are swapped)`, [
        {
          title: `Reorder the parameters: ${expected.join(', ')}`,
          edits: [{ range: listRange!, newText: expected.map((e) => texts.get(e)!).join(', ') }],
          preferred: true,
        },
      ]);
      continue;
    }
    // Renamed: the right number of parameters, and every mismatch a name that is not the contract's.
    const mismatched = got.map((g, i) => i).filter((i) => got[i] !== expected[i]);
    if (got.length === expected.length && mismatched.every((i) => !ALL.includes(got[i]!))) {
      for (const i of mismatched) {
        const param = params[i]!;
        const want = expected[i]!;
        const fixes: Fix[] = inFunction.has(want) ? [] : [{ title: `Rename ${got[i]} to ${want}`, edits: renameEdits(ctx, fn, param, want), preferred: true }];
        report(param.name, `parameter ${i + 1} is ${got[i]}, but the runtime passes ${want} there; name it ${want}`, fixes);
      }
      continue;
    }
    // Missing: the names given are the contract's, in order, with some left out.
    const positions = got.map((g) => expected.indexOf(g));
    const inOrder = positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!));
    if (inOrder && got.length < expected.length) {
      const missing = expected.filter((e) => !got.includes(e));
      const firstGap = got.findIndex((g, i) => g !== expected[i]);
      const at = firstGap >= 0 ? params[firstGap]! : node;
      const what =
        firstGap >= 0
          ? `parameter ${firstGap + 1} is ${got[firstGap]}, but the runtime passes ${expected[firstGap]} there (${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing)`
          : `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`;
      const fixes: Fix[] = missing.some((m) => inFunction.has(m) && !got.includes(m))
        ? []
        : [
            {
              title: `Add ${missing.join(', ')}`,
              edits: listRange
                ? [{ range: listRange, newText: expected.map((e) => (got.includes(e) ? ctx.snap.userTextOf(params[got.indexOf(e)]!) : e)).join(', ') }]
                : [{ range: ctx.snap.range(params.pos, params.end), newText: expected.join(', ') }],
              preferred: true,
            },
          ];
      report(at, what, fixes);
      continue;
    }
    // Extra: the contract's parameters in order, and more that are not the contract's.
    const contractOnes = got.filter((g) => ALL.includes(g));
    if (contractOnes.length === expected.length && contractOnes.every((g, i) => g === expected[i])) {
      for (const [i, g] of got.entries()) {
        if (ALL.includes(g)) continue;
        const param = params[i]!;
        const used = referencesOf(ctx, fn, param).length > 0;
        const start = i === 0 ? param.getStart(ctx.sf) : params[i - 1]!.getEnd();
        const end = i === 0 && params.length > 1 ? params[1]!.getStart(ctx.sf) : param.getEnd();
        report(
          param,
          `unexpected parameter ${i + 1} ${g}: the runtime passes nothing of that name${i < expected.length ? `, and ${expected[i]} there` : ''}`,
          used ? [] : [{ title: `Remove the parameter ${g}`, edits: [{ range: ctx.snap.range(start, end), newText: '' }], preferred: true }],
        );
      }
      continue;
    }
    // Anything else (several mistakes at once): where the list first departs from the contract.
    const first = got.findIndex((g, i) => g !== expected[i]);
    const at = first >= 0 ? params[first]! : node;
    report(
      at,
      first >= 0
        ? `parameter ${first + 1} is ${got[first]}, but the runtime passes ${expected[first] ?? 'nothing'} there`
        : `${expected.slice(got.length).join(', ')} ${expected.length - got.length === 1 ? 'is' : 'are'} missing`,
    );
  }
  return reported;
}

/** The uses of a parameter inside its function (by symbol, so a shadowing local is not one). */
function referencesOf(ctx: LintContext, fn: ts.Node, param: ts.ParameterDeclaration): ts.Identifier[] {
  const symbol = ctx.checker.getSymbolAtLocation(param.name);
  const out: ts.Identifier[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isIdentifier(n) && n !== param.name) {
      const sym = ts.isShorthandPropertyAssignment(n.parent) ? ctx.checker.getShorthandAssignmentValueSymbol(n.parent) : ctx.checker.getSymbolAtLocation(n);
      if (sym && sym === symbol) out.push(n);
    }
    ts.forEachChild(n, visit);
  };
  if (symbol) visit(fn);
  return out;
}

/** Renames a parameter and its uses (`{ prev }` becomes `{ prev: previous_nearest_blocks }`). */
function renameEdits(ctx: LintContext, fn: ts.Node, param: ts.ParameterDeclaration, to: string) {
  const edits = [ctx.replace(param.name, to)];
  for (const id of referencesOf(ctx, fn, param)) edits.push(ctx.replace(id, ts.isShorthandPropertyAssignment(id.parent) ? `${id.text}: ${to}` : to));
  return edits;
}

/**
 * The runtime's own contract check (reward/compile.ts), so that lint and training agree. It
 * transpiles the file, which is too slow for every keystroke, so it runs again only when the imports or
 * the exported functions' signatures change. Syntax errors are left to TypeScript's diagnostics.
 */
function contract(ctx: LintContext, parametersReported: Set<string>): void {
  const parts: string[] = [];
  for (const st of ctx.sf.statements) {
    if (ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st)) parts.push(ctx.snap.userTextOf(st));
    else if (ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isFunctionDeclaration(st)) parts.push(`${st.name?.text}(${st.parameters.map((p) => ctx.snap.userTextOf(p.name)).join(',')})`);
      else if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          const init = d.initializer && skipParens(d.initializer);
          const params =
            init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init.parameters.map((p) => ctx.snap.userTextOf(p.name)).join(',') : '';
          parts.push(`${ctx.snap.userTextOf(d.name)}(${params})`);
        }
      }
    }
  }
  const file = ctx.sf.fileName;
  // Where the statements are matters only for placing an error.
  const signatures = parts.join('\n');
  let cached = contractCache.get(file);
  const key = cached?.error ? `${signatures}\n@${ctx.sf.statements.map((st) => st.getStart(ctx.sf)).join(',')}` : signatures;
  if (!cached || cached.key !== key) {
    let error: { line: number; column: number; message: string } | null = null;
    try {
      compileRewardFile(file, ctx.snap.text);
    } catch (err) {
      if (!(err instanceof RewardError)) throw err;
      if (err.kind === 'compile') return; // a syntax error: TypeScript reports it; check the contract once it parses
      error = { line: err.line, column: err.column, message: err.detail };
    }
    cached = { key: error ? `${signatures}\n@${ctx.sf.statements.map((st) => st.getStart(ctx.sf)).join(',')}` : signatures, error };
    contractCache.set(file, cached);
  }
  if (!cached.error) return;
  // The runtime stops at the first wrong parameter; the parameter check above has placed each one already.
  const about = /^(reward_function|dense|sparse)(?::| takes)/.exec(cached.error.message)?.[1];
  if (about && parametersReported.has(about)) return;
  const start = { line: cached.error.line - 1, character: cached.error.column - 1 };
  const word = /^[\w$]+/.exec(ctx.snap.lineText(start.line).slice(start.character))?.[0] ?? '';
  const range = { start, end: { line: start.line, character: start.character + Math.max(word.length, 1) } };
  ctx.push({ range, severity: meta.severity, code: meta.id, source: 'rewardsmith', message: cached.error.message, fixes: [] });
}

/** Python: the runtime's contract check (one checkContract for both languages) on the file's top-level functions. */
function pythonContract(ctx: PythonLintContext): void {
  if (firstSyntaxError(ctx.root)) return; // python-syntax reports it; the contract once it parses
  const functions = new Map<string, ContractFunction>();
  for (const [name, def] of topLevelFunctions(ctx.root)) functions.set(name, { at: nodeAt(def.childForFieldName('name')!), params: parameterList(def) });
  try {
    checkContract(ctx.fileName, functions, 'define');
  } catch (err) {
    if (!(err instanceof RewardError)) throw err;
    const start = { line: err.line - 1, character: err.column - 1 };
    const word = /^\w+/.exec(ctx.text.split('\n')[start.line]?.slice(start.character) ?? '')?.[0] ?? '';
    ctx.report(meta, { start, end: { line: start.line, character: start.character + Math.max(word.length, 1) } }, err.detail);
  }
}
