// Walking back and forth without net progress, and whether the reward paid more often than it cost meanwhile (a
// movement bonus being farmed): the patch pays the first visit to a cell instead of the movement.
import ts from 'typescript';
import { GAME_FACTS } from '../../schema';
import type { EpisodeRecord } from '../../records';
import {
  defineFinding,
  actionSummary,
  fmt,
  KEEP_EVIDENCE,
  pathStep,
  pct,
  plural,
  range,
  rewardSummary,
  within,
  type EpisodeEvidence,
  type FindingOf,
} from '../finding';
import {
  addConstant,
  cellBonusLines,
  definePatch,
  ensureParameters,
  paysPositive,
  PatchUnavailable,
  type DenseTerm,
  type Edit,
  type RewardSource,
} from '../patch';
import * as py from '../python-patch';
import { walk, type PythonNode } from '../../reward/python-syntax';

/** Replace a bonus for moving (a condition on past_agent_positions) with a bonus for entering an unvisited cell. */
export interface MovementToCellsRequest {
  kind: 'movement-to-cells';
  cellSize: number;
  why: string;
}

const OSCILLATION_WINDOW = 32; // the paper's L: also the span of recorded rewards
const OSCILLATION_MAX_NET_RATIO = 0.25; // net displacement / path length below this is back-and-forth

function backAndForthFinding(failed: EpisodeRecord[]): FindingOf<'back-and-forth', MovementToCellsRequest> | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let farmed = 0;
  for (const ep of failed) {
    const p = ep.path;
    const flagged: [number, number][] = [];
    for (let start = 0; start + OSCILLATION_WINDOW < p.length; start += OSCILLATION_WINDOW / 2) {
      const end = start + OSCILLATION_WINDOW;
      let length = 0;
      let reversals = 0;
      let prev: [number, number] | undefined;
      for (let i = start + 1; i <= end; i++) {
        const d: [number, number] = [p[i]![0] - p[i - 1]![0], p[i]![2] - p[i - 1]![2]];
        const len = Math.hypot(d[0], d[1]);
        if (len < 0.02) continue;
        length += len;
        if (prev && d[0] * prev[0] + d[1] * prev[1] < 0) reversals++;
        prev = d;
      }
      const net = Math.hypot(p[end]![0] - p[start]![0], p[end]![2] - p[start]![2]);
      // Moving (at least a quarter of walking pace) with several reversals and little net progress.
      if (length >= OSCILLATION_WINDOW * GAME_FACTS.walkPerStep * 0.25 && reversals >= 4 && net < OSCILLATION_MAX_NET_RATIO * length) {
        const w: [number, number] = [Math.max(1, pathStep(ep, start)), pathStep(ep, end)];
        const lastW = flagged[flagged.length - 1];
        if (lastW && w[0] <= lastW[1]) lastW[1] = w[1];
        else flagged.push(w);
      }
    }
    if (flagged.length === 0) continue;
    const covered = flagged.reduce((n, w) => n + w[1] - w[0] + 1, 0);
    if (covered < 0.25 * ep.steps) continue;
    affected++;
    const notes = [
      `back-and-forth over ${covered} of ${ep.steps} steps (${flagged.map(range).slice(0, 3).join(', ')}${flagged.length > 3 ? ', …' : ''}), net ${fmt(ep.distanceMoved)} m from the start`,
    ];
    const recorded = ep.lastSteps.filter((s) => flagged.some((w) => within(s, w)));
    if (recorded.length > 0) {
      const r = rewardSummary(recorded);
      if (r.positive >= Math.max(2, 0.25 * recorded.length) && r.positive > r.negative) farmed++;
      notes.push(`recorded ${range([recorded[0]!.step, recorded[recorded.length - 1]!.step])}: ${actionSummary(recorded)}; ${r.text}`);
    }
    evidence.push({ episode: ep.episode, seed: ep.seed, steps: flagged[flagged.length - 1], note: notes.join('; ') });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  const message = `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) walked back and forth with no net progress${farmed > 0 ? `, and in ${farmed} of them the reward paid more often than it cost during the oscillation: the dense term is being farmed` : ''}.`;
  return {
    id: 'back-and-forth',
    kind: 'back-and-forth',
    share,
    message,
    suggestion:
      'Pay for progress that cannot be undone and redone: replace a bonus for moving with a bonus for entering a cell not visited before in this episode (a Set kept in GLOBAL_DATA), and make any "closer" bonus symmetric with a "further" penalty.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'movement-to-cells',
      cellSize: 2,
      why: `${pct(share)} of failed episodes walked back and forth collecting the movement bonus; only the first visit to a cell pays now.`,
    },
  };
}

/** Does the node's subtree mention `past_agent_positions` (directly or via a local derived from it)? */
function mentionsPositions(node: ts.Node, derived: ReadonlySet<string>): boolean {
  let hit = false;
  const visit = (n: ts.Node) => {
    if (hit) return;
    if (ts.isIdentifier(n) && (n.text === 'past_agent_positions' || derived.has(n.text))) hit = true;
    else ts.forEachChild(n, visit);
  };
  visit(node);
  return hit;
}

function replaceMovementBonus(src: RewardSource, term: DenseTerm, req: MovementToCellsRequest, edits: Edit[]): void {
  const scope = term.kind === 'function' ? term.fn.body : (term.before.parent as ts.Node);
  // Locals computed from positions (`const [x, , z] = past_agent_positions[...]`, `const moved = Math.hypot(...)`).
  const derived = new Set<string>();
  const declarations = new Map<string, ts.VariableStatement>();
  let bonus: ts.IfStatement | undefined;
  const visit = (n: ts.Node) => {
    if (bonus || (ts.isFunctionLike(n) && n !== (term.kind === 'function' ? term.fn : undefined))) return;
    if (ts.isVariableDeclaration(n) && n.initializer && mentionsPositions(n.initializer, derived)) {
      const names: string[] = [];
      const collect = (b: ts.BindingName) =>
        ts.isIdentifier(b) ? names.push(b.text) : b.elements.forEach((el) => ts.isBindingElement(el) && collect(el.name));
      collect(n.name);
      names.forEach((x) => derived.add(x));
      if (ts.isVariableDeclarationList(n.parent) && ts.isVariableStatement(n.parent.parent) && n.parent.declarations.length === 1)
        for (const x of names) declarations.set(x, n.parent.parent);
    }
    if (ts.isIfStatement(n) && mentionsPositions(n.expression, derived) && !/\.has\(/.test(n.expression.getText(src.sf)) && paysPositive(n.thenStatement)) {
      bonus = n;
      return;
    }
    ts.forEachChild(n, visit);
  };
  scope.forEachChild(visit);
  if (!bonus) throw new PatchUnavailable('the dense term has no bonus conditioned on past_agent_positions (a "moved" bonus) to replace');
  ensureParameters(src, term, ['past_agent_positions', 'GLOBAL_DATA'], edits);
  const ifStmt: ts.IfStatement = bonus;
  const thenBody = ts.isBlock(ifStmt.thenStatement) ? ifStmt.thenStatement.statements.map((s) => s.getText(src.sf)) : [ifStmt.thenStatement.getText(src.sf)];
  const cellSize = addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  const lines = [
    `// Analyzer: ${req.why}`,
    ...cellBonusLines(
      src,
      cellSize,
      thenBody.flatMap((t) => t.split(/\r?\n/).map((l) => l.trim())),
    ),
  ];
  if (ifStmt.elseStatement) lines[lines.length - 1] = `} else ${ifStmt.elseStatement.getText(src.sf)}`;
  const indent = src.indentAt(ifStmt.getStart(src.sf));
  const start = src.lineStart(ifStmt.getStart(src.sf));
  const endLine = src.text.indexOf('\n', ifStmt.end);
  const end = endLine < 0 ? src.text.length : endLine + 1;
  // The whole line goes, its trailing comment too: that comment described the old bonus.
  edits.push({ start, end, text: lines.map((l) => indent + l.replace(/^\t+/, (t) => src.indentUnit.repeat(t.length)) + src.eol).join('') });
  // Locals that only fed the removed condition are dead now (and, in turn, locals that only fed those).
  const removed = new Set<ts.Node>([ifStmt.expression]);
  for (let changed = true; changed; ) {
    changed = false;
    const used = new Set<string>();
    const countUses = (n: ts.Node) => {
      if (removed.has(n)) return;
      if (ts.isIdentifier(n) && !(ts.isBindingElement(n.parent) || ts.isVariableDeclaration(n.parent))) used.add(n.text);
      ts.forEachChild(n, countUses);
    };
    scope.forEachChild(countUses);
    for (const stmt of new Set(declarations.values())) {
      if (removed.has(stmt) || stmt.pos > ifStmt.pos) continue;
      if ([...declarations].filter(([, s]) => s === stmt).every(([name]) => !used.has(name))) {
        removed.add(stmt);
        changed = true;
      }
    }
  }
  for (const stmt of removed) {
    if (stmt === ifStmt.expression) continue;
    const s = src.lineStart(stmt.getStart(src.sf));
    const nl = src.text.indexOf('\n', stmt.end);
    edits.push({ start: s, end: nl < 0 ? src.text.length : nl + 1, text: '' });
  }
}

/** Python: the names an assignment's left side binds (`moved`, `x0, _, z0, _, _`). */
function pythonBoundNames(left: PythonNode | null): string[] {
  if (!left) return [];
  if (left.type === 'identifier') return [left.text];
  if (left.type === 'pattern_list' || left.type === 'tuple_pattern' || left.type === 'list_pattern')
    return left.namedChildren.flatMap((c) => pythonBoundNames(c));
  return [];
}

function pythonReplaceMovementBonus(src: py.PythonSource, term: py.PythonDenseTerm, req: MovementToCellsRequest, edits: Edit[]): void {
  const scope = term.kind === 'function' ? term.def.childForFieldName('body')! : term.before.parent!;
  // Locals computed from positions (`x1, _, z1, _, _ = past_agent_positions[-1]`, `moved = math.hypot(...)`).
  const derived = new Set<string>();
  const declarations = new Map<string, PythonNode>();
  const mentionsPositions = (n: PythonNode) => [...walk(n)].some((x) => x.type === 'identifier' && (x.text === 'past_agent_positions' || derived.has(x.text)));
  let bonus: PythonNode | undefined;
  for (const n of py.ownNodes(scope)) {
    if (n.type === 'assignment' && n.childForFieldName('right') && mentionsPositions(n.childForFieldName('right')!)) {
      const names = pythonBoundNames(n.childForFieldName('left'));
      for (const x of names) derived.add(x);
      const stmt = n.parent;
      if (stmt?.type === 'expression_statement') for (const x of names) declarations.set(x, stmt);
    }
    const condition = n.type === 'if_statement' ? n.childForFieldName('condition') : null;
    if (condition && mentionsPositions(condition) && !/GLOBAL_DATA/.test(condition.text) && py.paysPositive(n.childForFieldName('consequence')!)) {
      bonus = n;
      break;
    }
  }
  if (!bonus) throw new PatchUnavailable('the dense term has no bonus conditioned on past_agent_positions (a "moved" bonus) to replace');
  if (bonus.childForFieldName('alternative')) throw new PatchUnavailable('the "moved" bonus has elif/else branches; replace it by hand');
  py.ensureParameters(term, ['past_agent_positions', 'GLOBAL_DATA'], edits);
  const cellSize = py.addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  const paid = py.blockLines(src, bonus.childForFieldName('consequence')!);
  const lines = [`# Analyzer: ${req.why}`, ...py.cellBonusLines(src, cellSize, paid)];
  // The whole lines go, a trailing comment too: it described the old bonus.
  const [first, last] = [bonus.startPosition.row, bonus.endPosition.row];
  edits.push({ start: src.lineStart(first), end: src.lineStart(last + 1), text: src.block(src.indentOf(first), lines) });
  // Locals that only fed the removed condition are dead now (and, in turn, locals that only fed those).
  const removed = new Set<PythonNode>();
  const condition = bonus.childForFieldName('condition')!;
  const inside = (n: PythonNode, outer: PythonNode) => n.startIndex >= outer.startIndex && n.endIndex <= outer.endIndex;
  for (let changed = true; changed; ) {
    changed = false;
    for (const stmt of new Set(declarations.values())) {
      if (removed.has(stmt) || stmt.startIndex > bonus.startIndex) continue;
      const names = [...declarations].filter(([, s]) => s.id === stmt.id).map(([name]) => name);
      const read = [...walk(scope)].some(
        (x) => x.type === 'identifier' && names.includes(x.text) && !inside(x, stmt) && !inside(x, condition) && ![...removed].some((r) => inside(x, r)),
      );
      if (!read) {
        removed.add(stmt);
        changed = true;
      }
    }
  }
  for (const stmt of removed) edits.push({ start: src.lineStart(stmt.startPosition.row), end: src.lineStart(stmt.endPosition.row + 1), text: '' });
}

export const movementToCells = definePatch<MovementToCellsRequest>({
  kind: 'movement-to-cells',
  write: replaceMovementBonus,
  python: pythonReplaceMovementBonus,
});

export const backAndForth = defineFinding({
  meta: {
    id: 'back-and-forth',
    kinds: ['back-and-forth'],
    description: 'failed episodes that walked back and forth with no net progress, farming a movement bonus or not',
    needs: ['failed'],
  },
  find: (ctx) => backAndForthFinding(ctx.failed),
  patch: movementToCells,
});
