// The reward pays while no target is in view and the agent covers no new ground: for walking about, for being
// alive, for looking around. Every step of a time-out can earn that, a success ends it early, so failing pays
// more than succeeding however the approach itself is paid (the approach patch only changes the steps with a
// target in view). The patch keeps the reward as written wherever a target is in view, and elsewhere pays only
// the first visit to each cell; the reward's own penalties there stand.
import ts from 'typescript';
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import { parameterNames } from '../../schema';
import {
  defineFinding,
  fmt,
  KEEP_EVIDENCE,
  nearestOf,
  pathStep,
  pct,
  plural,
  targetNames,
  type EpisodeEvidence,
  type FindingOf,
  type RewardFacts,
} from '../finding';
import {
  addConstant,
  cellBonusLines,
  definePatch,
  nearestTargetHelper,
  parameterInScope,
  PatchUnavailable,
  type DenseTerm,
  type Edit,
  type RewardSource,
} from '../patch';
import * as py from '../python-patch';
import { parameterList } from '../../reward/python-syntax';

/** Keep the dense term as written while a target is in view; with none in view, pay only a new cell and keep its penalties. */
export interface UnseenPayRequest {
  kind: 'unseen-pay';
  targets: string[];
  cellSize: number;
  why: string;
}

/** The cell size the patch pays new ground by, metres (as the exploration patch). */
const CELL_SIZE = 4;
/** Steps of a failed episode with no target in view and no new cell before its pay there counts as evidence. */
const MIN_PLAIN_STEPS = 8;

const cellOf = (x: number, z: number, size: number) => `${Math.floor(x / size)},${Math.floor(z / size)}`;

/** The steps of an episode at which it entered a cell of `size` m for the first time. */
function newGroundSteps(ep: EpisodeRecord, size: number): Set<number> {
  const seen = new Set<string>();
  const out = new Set<number>();
  ep.path.forEach((p, i) => {
    const cell = cellOf(p[0], p[2], size);
    if (seen.has(cell)) return;
    seen.add(cell);
    out.add(pathStep(ep, i));
  });
  return out;
}

function unseenPayFinding(
  episodes: EpisodeRecord[],
  task: TaskSpec | undefined,
  reward: RewardFacts | undefined,
): FindingOf<'reward-pays-unseen', UnseenPayRequest> | undefined {
  const targets = targetNames(task);
  if (!reward?.rerun || targets.length === 0) return undefined;
  const recorded = reward.rerunSource === 'recorded';
  const failed = episodes.filter((ep) => !ep.success);
  const evidence: EpisodeEvidence[] = [];
  let plain = 0;
  let paid = 0;
  for (const ep of failed) {
    const rerun = reward.rerun.get(ep.episode);
    if (!rerun) continue;
    const byStep = new Map(rerun.map((r) => [r.step, r]));
    const fresh = newGroundSteps(ep, CELL_SIZE);
    let epPlain = 0;
    let epPaid = 0;
    for (let i = 1; i < ep.lastSteps.length; i++) {
      const st = ep.lastSteps[i]!;
      const r = byStep.get(st.step);
      // Only steps with no target in view now or a step before (losing sight is the approach patch's) that entered no new cell.
      if (!r || nearestOf(st.nearest, targets) || nearestOf(ep.lastSteps[i - 1]!.nearest, targets) || fresh.has(st.step)) continue;
      epPlain++;
      if (r.dense > 0) epPaid++;
    }
    plain += epPlain;
    paid += epPaid;
    if (epPlain >= MIN_PLAIN_STEPS && epPaid >= 0.5 * epPlain) {
      evidence.push({
        episode: ep.episode,
        seed: ep.seed,
        steps: [ep.lastSteps[0]?.step ?? 1, ep.steps],
        note: `${recorded ? 'rewards received on' : 're-run on'} the last ${ep.lastSteps.length} steps: dense positive on ${epPaid} of the ${epPlain} steps with no ${targets.join('/')} in view and no new ${CELL_SIZE} m cell entered; return ${fmt(ep.return, 1)} over ${ep.steps} steps`,
      });
    }
  }
  if (evidence.length === 0) return undefined;
  const wins = episodes.filter((ep) => ep.success);
  const mean = (xs: EpisodeRecord[]) => xs.reduce((t, ep) => t + ep.return, 0) / Math.max(1, xs.length);
  // The recorded returns are the reward's own only when it is the one analysed (not another file re-run).
  const returns =
    wins.length > 0 && !reward.returns
      ? ` Failing pays ${mean(failed) > mean(wins) ? 'more' : 'less'} than succeeding: mean return ${fmt(mean(failed), 1)} over ${failed.length} failed episodes, ${fmt(mean(wins), 1)} over ${wins.length} successful ones.`
      : '';
  const share = evidence.length / failed.length;
  return {
    id: 'reward-pays-unseen',
    kind: 'reward-pays-unseen',
    share,
    message: `The reward pays for not finishing while no target is in view: ${recorded ? 'in the rewards the agent received during training (recorded, not re-run)' : 're-run in the sandbox on the recorded observations of the failed episodes'}, the dense term was positive on ${pct(paid / plain)} of the ${plain} steps with no ${targets.join('/')} in view that entered no new ${CELL_SIZE} m cell; in ${plural(evidence.length, 'failed episode')} of ${failed.length} (${pct(share)}) it paid on most of them.${returns}`,
    suggestion: `With no target in view, pay only for new ground (the first visit to each ${CELL_SIZE} m cell) and keep the penalties: a time-out then earns no more than the search it did, and only finding and reaching the target pays on.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'unseen-pay',
      targets,
      cellSize: CELL_SIZE,
      why: `${recorded ? 'in the rewards received during training' : 're-run on failed episodes'}, the dense term paid on ${pct(paid / plain)} of the steps with no target in view and no new ground; with no target in view only a new cell pays now, and the reward's penalties stand.`,
    },
  };
}

/** The dense function as the wrapper reads it, from either language's tree (`N`: where that tree declares it). */
interface DenseFunction<N> {
  declared: N;
  name: string;
  /** Its parameters' names, undefined for one that is not a plain name (destructured, rest, star). */
  parameters: (string | undefined)[];
  body: string;
  /** Declared inside reward_function (else at the top level, where the runtime calls it with the contract's parameters). */
  nested: boolean;
  /** Is `name` a parameter of it or of a function enclosing it? */
  inScope(name: string): boolean;
}

/** What a language's patch writer lends the wrapper plan: fresh names, the target helper, new constants. */
interface WrapperNames {
  fresh(base: string): string;
  nearestTarget(targets: string[]): string;
  constant(base: string, value: number, comment: string): string;
}

/** The wrapper, decided once for both languages: each writer below only renders it in its own syntax. */
interface UnseenPayWrapper<N> {
  /** The dense function, whose name the wrapper takes; its declaration is renamed to `wrapped`. */
  fn: DenseFunction<N>;
  wrapped: string;
  /** The variable that holds the value as written. */
  value: string;
  params: string[];
  /** What the wrapper passes on to the function as written: its own parameters. */
  args: string[];
  /** The helper that gives the nearest visible target (none in view: undefined / None). */
  nearest: string;
  cellSize: string;
}

const NEEDED = ['current_nearest_blocks', 'previous_nearest_blocks', 'past_agent_positions', 'GLOBAL_DATA'] as const;
/** The comments of the wrapper's cases with no target in view. */
const PENALTIES_STAND = 'its penalties stand';
const NOTHING_PAYS = 'no target in view and no new ground: nothing pays';

/** The wrapper's names and parameters; throws PatchUnavailable where the dense term cannot be wrapped. */
function planWrapper<N>(fn: DenseFunction<N> | 'variable', req: UnseenPayRequest, names: WrapperNames): UnseenPayWrapper<N> {
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target');
  // A dense variable has no function to wrap: the new-cell case and the clamp would need its every assignment.
  if (fn === 'variable') throw new PatchUnavailable('the dense term is a variable, not a function: wrap its computation in a `dense` function first');
  if (/_as_written\(/.test(fn.body))
    throw new PatchUnavailable('the dense term already pays only new ground with no target in view (an earlier analyzer patch)');
  const own = fn.parameters.filter((p): p is string => p !== undefined);
  if (own.length < fn.parameters.length)
    throw new PatchUnavailable('the dense function has a parameter that is not a plain name (destructured, rest or star), so it cannot be wrapped');
  let params = own;
  if (fn.nested) {
    // Inside reward_function: the wrapper takes the same parameters and reads the contract's others from there.
    const missing = NEEDED.filter((p) => !fn.inScope(p));
    if (missing.length > 0) throw new PatchUnavailable(`the dense function's enclosing function does not take ${missing.join(', ')}`);
  } else {
    // At the top level the runtime calls it with the contract's parameters in order: the wrapper takes the prefix it needs.
    const order = parameterNames(true);
    if (own.some((p, i) => p !== order[i]))
      throw new PatchUnavailable(`the dense function's parameters are not the contract's prefix (${order.join(', ')}), so it cannot be wrapped`);
    params = order.slice(0, Math.max(own.length, ...NEEDED.map((p) => order.indexOf(p) + 1)));
  }
  return {
    fn,
    wrapped: names.fresh(`${fn.name}_as_written`),
    value: names.fresh('dense_as_written_value'),
    params,
    args: own,
    nearest: names.nearestTarget(req.targets),
    cellSize: names.constant(
      'UNSEEN_CELL_SIZE',
      req.cellSize,
      'metres: with no target in view, only the first visit to each cell pays (added by the analyzer)',
    ),
  };
}

/** A TypeScript dense function as the wrapper reads it: declared by a name (a function or a `const`) in the statement it renames. */
function denseFunction(src: RewardSource, term: DenseTerm & { kind: 'function' }): DenseFunction<{ name: ts.Identifier; statement: ts.Statement }> {
  const fn = term.fn;
  const decl = fn.parent;
  const declared =
    ts.isFunctionDeclaration(fn) && fn.name
      ? { name: fn.name, statement: fn as ts.Statement }
      : ts.isVariableDeclaration(decl) && ts.isIdentifier(decl.name) && ts.isVariableDeclarationList(decl.parent) && ts.isVariableStatement(decl.parent.parent)
        ? { name: decl.name, statement: decl.parent.parent as ts.Statement }
        : undefined;
  if (!declared) throw new PatchUnavailable('the dense function is not declared by name, so it cannot be wrapped');
  return {
    declared,
    name: declared.name.text,
    parameters: fn.parameters.map((p) => (ts.isIdentifier(p.name) && !p.dotDotDotToken ? p.name.text : undefined)),
    body: fn.body.getText(src.sf),
    nested: declared.statement.parent !== src.sf,
    inScope: (name) => parameterInScope(fn, name),
  };
}

/** The TypeScript wrapper: the dense declaration renamed in place (its comments kept), a function of the old name (and `export`) right below it. */
function addUnseenPay(src: RewardSource, term: DenseTerm, req: UnseenPayRequest, edits: Edit[]): void {
  const fn = term.kind === 'variable' ? 'variable' : denseFunction(src, term);
  const w = planWrapper(fn, req, {
    fresh: (base) => src.fresh(base),
    nearestTarget: (targets) => nearestTargetHelper(src, targets),
    constant: (base, value, comment) => addConstant(src, base, value, comment),
  });
  const { name, statement } = w.fn.declared;
  edits.push({ start: name.getStart(src.sf), end: name.end, text: w.wrapped });
  const exportKeyword = ts.canHaveModifiers(statement) ? ts.getModifiers(statement)?.find((m) => m.kind === ts.SyntaxKind.ExportKeyword) : undefined;
  if (exportKeyword) edits.push({ start: exportKeyword.getStart(src.sf), end: exportKeyword.end + 1, text: '' });
  const lines = [
    `${exportKeyword ? 'export ' : ''}function ${w.fn.name}(${w.params.join(', ')}) {`,
    `\tconst ${w.value} = ${w.wrapped}(${w.args.join(', ')});`,
    `\t// Analyzer: ${req.why}`,
    `\tif (${w.nearest}(current_nearest_blocks) === undefined && ${w.nearest}(previous_nearest_blocks) === undefined) {`,
    `\t\tif (${w.value} < 0) return ${w.value}; // ${PENALTIES_STAND}`,
    ...cellBonusLines(src, w.cellSize, ['return 1;']).map((l) => `\t\t${l}`),
    `\t\treturn 0; // ${NOTHING_PAYS}`,
    '\t}',
    `\treturn ${w.value};`,
    '}',
  ];
  const indent = src.indentAt(statement.getStart(src.sf));
  const end = src.text.indexOf('\n', statement.end);
  const at = end < 0 ? src.text.length : end + 1;
  edits.push({ start: at, end: at, text: lines.map((l) => indent + l.replace(/^\t+/, (t) => src.indentUnit.repeat(t.length)) + src.eol).join('') });
}

/** The Python wrapper: the dense `def` renamed, and a `def` of the old name right below it (nested where it is). */
function pythonUnseenPay(src: py.PythonSource, term: py.PythonDenseTerm, req: UnseenPayRequest, edits: Edit[]): void {
  const fn: DenseFunction<py.PythonDenseTerm & { kind: 'function' }> | 'variable' =
    term.kind === 'variable'
      ? 'variable'
      : {
          declared: term,
          name: term.def.childForFieldName('name')!.text,
          parameters: parameterList(term.def).map((p) => p.name ?? undefined),
          body: term.def.text,
          nested: !term.topLevel,
          inScope: (p) => py.parameterInScope(term.def, p),
        };
  const w = planWrapper(fn, req, {
    fresh: (base) => src.fresh(base),
    nearestTarget: (targets) => py.nearestTargetHelper(src, targets),
    constant: (base, value, comment) => py.addConstant(src, base, value, comment),
  });
  const { def, topLevel } = w.fn.declared;
  const name = def.childForFieldName('name')!;
  edits.push({ start: name.startIndex, end: name.endIndex, text: w.wrapped });
  const lines = [
    `def ${w.fn.name}(${w.params.join(', ')}):`,
    `\t# Analyzer: ${req.why}`,
    `\t${w.value} = ${w.wrapped}(${w.args.join(', ')})`,
    `\tif ${w.nearest}(current_nearest_blocks) is None and ${w.nearest}(previous_nearest_blocks) is None:`,
    `\t\tif ${w.value} < 0:`,
    `\t\t\treturn ${w.value}  # ${PENALTIES_STAND}`,
    ...py.cellBonusLines(src, w.cellSize, ['return 1']).map((l) => `\t\t${l}`),
    `\t\treturn 0  # ${NOTHING_PAYS}`,
    `\treturn ${w.value}`,
  ];
  const row = def.endPosition.row + 1;
  const gap = src.eol.repeat(topLevel ? 2 : 1);
  edits.push({ start: src.lineStart(row), end: src.lineStart(row), text: gap + src.block(src.indentOf(def.startPosition.row), lines) });
}

export const unseenPayPatch = definePatch<UnseenPayRequest>({ kind: 'unseen-pay', write: addUnseenPay, python: pythonUnseenPay });

export const unseenPay = defineFinding({
  meta: {
    id: 'unseen-pay',
    kinds: ['reward-pays-unseen'],
    description: 'a dense term that pays with no target in view and no new ground covered: time-outs out-earn successes',
    needs: ['failed', 'rewarded'],
  },
  find: (ctx) => unseenPayFinding(ctx.episodes, ctx.task, ctx.reward),
  patch: unseenPayPatch,
});
