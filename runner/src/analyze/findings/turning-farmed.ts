// Turning on the spot while the reward pays: a "turned towards the target" bonus without the matching penalty.
// The patch mirrors the bonus, so spinning nets zero.
import ts from 'typescript';
import type { EpisodeRecord } from '../../records';
import { defineFinding, KEEP_EVIDENCE, pct, plural, type EpisodeEvidence, type FindingOf } from '../finding';
import { definePatch, paysPositive, PatchUnavailable, type DenseTerm, type Edit, type RewardSource } from '../patch';
import * as py from '../python-patch';
import type { PythonNode } from '../../reward/python-syntax';

/** Pair a bonus for turning towards a target (|yaw| shrinking) with the mirrored penalty for turning away. */
export interface SymmetricTurningRequest {
  kind: 'symmetric-turning';
  why: string;
}

function turningFarmFinding(failed: EpisodeRecord[]): FindingOf<'turning-farmed', SymmetricTurningRequest> | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  for (const ep of failed) {
    const steps = ep.lastSteps;
    const inPlace = steps.filter((s, i) => {
      const prev = steps[i - 1];
      return (
        (s.action === 'turn_left' || s.action === 'turn_right') &&
        !!prev &&
        Math.hypot(s.position[0] - prev.position[0], s.position[2] - prev.position[2]) < 0.05
      );
    });
    const paid = inPlace.filter((s) => s.reward > 0);
    if (inPlace.length < 8 || paid.length < 0.25 * inPlace.length || paid.length < 3) continue;
    affected++;
    const seen = [...new Set(paid.flatMap((s) => Object.keys(s.nearest)))].slice(0, 4);
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [inPlace[0]!.step, inPlace[inPlace.length - 1]!.step],
      note: `turned on the spot on ${inPlace.length} of the last ${steps.length} steps and the reward was positive on ${paid.length} of them (in view then: ${seen.join(', ') || 'nothing'})`,
    });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  return {
    id: 'turning-farmed',
    kind: 'turning-farmed',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) turned on the spot and were paid for it: each sweep past the target earns the "turned towards it" bonus, and nothing costs on the way round.`,
    suggestion:
      'Make the turning rule symmetric: penalise turning away from the target (its |yaw| growing) as much as turning towards it pays, so spinning nets zero.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: { kind: 'symmetric-turning', why: `${pct(share)} of failed episodes spun on the spot collecting the turning bonus` },
  };
}

/** `Math.abs(E[1])`, the magnitude of a nearest entry's yaw: the entry expression's text, else undefined. */
function absYawOf(e: ts.Expression): string | undefined {
  if (!ts.isCallExpression(e) || e.expression.getText() !== 'Math.abs' || e.arguments.length !== 1) return undefined;
  const arg = e.arguments[0]!;
  if (!ts.isElementAccessExpression(arg) || !ts.isNumericLiteral(arg.argumentExpression) || arg.argumentExpression.text !== '1') return undefined;
  return arg.expression.getText();
}

/** `|A yaw| < |B yaw| ± margin` (or the same written with `>`) as the lesser and greater entries and the margin. */
function compareYaw(cond: ts.Expression): { lesser: string; greater: string; margin: string | undefined } | undefined {
  if (!ts.isBinaryExpression(cond)) return undefined;
  const op = cond.operatorToken.kind;
  const less = op === ts.SyntaxKind.LessThanToken || op === ts.SyntaxKind.LessThanEqualsToken;
  const more = op === ts.SyntaxKind.GreaterThanToken || op === ts.SyntaxKind.GreaterThanEqualsToken;
  if (!less && !more) return undefined;
  const side = (e: ts.Expression): { entry: string | undefined; margin: string | undefined } => {
    if (
      ts.isBinaryExpression(e) &&
      (e.operatorToken.kind === ts.SyntaxKind.MinusToken || e.operatorToken.kind === ts.SyntaxKind.PlusToken) &&
      ts.isNumericLiteral(e.right)
    ) {
      return { entry: absYawOf(e.left), margin: e.right.text };
    }
    return { entry: absYawOf(e), margin: undefined };
  };
  const [l, r] = [side(cond.left), side(cond.right)];
  const [lesser, greater] = less ? [l, r] : [r, l];
  return lesser.entry && greater.entry ? { lesser: lesser.entry, greater: greater.entry, margin: lesser.margin ?? greater.margin } : undefined;
}

function mirrorTurningBonus(src: RewardSource, term: DenseTerm, req: SymmetricTurningRequest, edits: Edit[]): void {
  if (term.kind !== 'function') throw new PatchUnavailable('the dense term is a variable; the turning bonus must be in a dense function');
  const comparisons: { stmt: ts.IfStatement; lesser: string; greater: string; margin: string | undefined }[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && n !== term.fn) return;
    if (ts.isIfStatement(n)) {
      const c = compareYaw(n.expression);
      if (c) comparisons.push({ stmt: n, ...c });
    }
    ts.forEachChild(n, visit);
  };
  term.fn.body.forEachChild(visit);
  // The bonus: one entry's |yaw| smaller than the other's (turned towards it), paying positive.
  const turnedTowards = comparisons.find((c) => paysPositive(c.stmt.thenStatement));
  if (!turnedTowards) throw new PatchUnavailable('the dense term has no bonus for turning towards a target (a shrinking |yaw|)');
  const { stmt, lesser, greater, margin } = turnedTowards;
  if (comparisons.some((c) => c.lesser === greater && c.greater === lesser))
    throw new PatchUnavailable('the turning bonus already has a matching penalty for turning away');
  const then = stmt.thenStatement;
  if (!(ts.isReturnStatement(then) && then.expression && ts.isNumericLiteral(then.expression))) {
    throw new PatchUnavailable('the turning bonus is not a plain `return <number>`, so its mirror cannot be written');
  }
  const indent = src.indentAt(stmt.getStart(src.sf));
  const nl = src.text.indexOf('\n', stmt.end);
  const at = nl < 0 ? src.text.length : nl + 1;
  const condition = `Math.abs(${lesser}[1]) > Math.abs(${greater}[1])${margin ? ` + ${margin}` : ''}`;
  edits.push({
    start: at,
    end: at,
    text: `${indent}if (${condition}) return -${then.expression.text}; // turned away from it (analyzer: ${req.why})${src.eol}`,
  });
}

/** Python: `abs(E[1])` (or `np.abs`, `math.fabs`), the magnitude of a nearest entry's yaw: the entry's text. */
function pythonAbsYawOf(e: PythonNode | null): string | undefined {
  if (e?.type !== 'call' || !/^((np|numpy|math)\.)?f?abs$/.test(e.childForFieldName('function')?.text ?? '')) return undefined;
  const args = e.childForFieldName('arguments')?.namedChildren ?? [];
  const arg = args[0];
  if (args.length !== 1 || arg?.type !== 'subscript' || arg.childForFieldName('subscript')?.text !== '1') return undefined;
  return arg.childForFieldName('value')?.text;
}

/** Python: `abs(A[1]) < abs(B[1]) - margin` (or with `>`) as the lesser and greater entries and the margin. */
function pythonCompareYaw(cond: PythonNode | null): { lesser: string; greater: string; margin: string | undefined } | undefined {
  while (cond?.type === 'parenthesized_expression') cond = cond.namedChildren[0] ?? null;
  if (cond?.type !== 'comparison_operator' || cond.namedChildren.length !== 2) return undefined;
  const op = cond.children.find((c) => c && ['<', '<=', '>', '>='].includes(c.type))?.type;
  if (!op) return undefined;
  const side = (e: PythonNode): { entry: string | undefined; margin: string | undefined } => {
    const operator = e.type === 'binary_operator' ? e.childForFieldName('operator')?.type : undefined;
    const right = e.childForFieldName('right');
    if ((operator === '-' || operator === '+') && (right?.type === 'integer' || right?.type === 'float'))
      return { entry: pythonAbsYawOf(e.childForFieldName('left')), margin: right.text };
    return { entry: pythonAbsYawOf(e), margin: undefined };
  };
  const [l, r] = [side(cond.namedChildren[0]!), side(cond.namedChildren[1]!)];
  const [lesser, greater] = op.startsWith('<') ? [l, r] : [r, l];
  return lesser.entry && greater.entry ? { lesser: lesser.entry, greater: greater.entry, margin: lesser.margin ?? greater.margin } : undefined;
}

function pythonMirrorTurningBonus(src: py.PythonSource, term: py.PythonDenseTerm, req: SymmetricTurningRequest, edits: Edit[]): void {
  if (term.kind !== 'function') throw new PatchUnavailable('the dense term is a variable; the turning bonus must be in a dense function');
  const comparisons: { stmt: PythonNode; lesser: string; greater: string; margin: string | undefined }[] = [];
  for (const n of py.ownNodes(term.def.childForFieldName('body')!)) {
    const c = n.type === 'if_statement' ? pythonCompareYaw(n.childForFieldName('condition')) : undefined;
    if (c) comparisons.push({ stmt: n, ...c });
  }
  // The bonus: one entry's |yaw| smaller than the other's (turned towards it), paying positive.
  const turnedTowards = comparisons.find((c) => py.paysPositive(c.stmt.childForFieldName('consequence')!));
  if (!turnedTowards) throw new PatchUnavailable('the dense term has no bonus for turning towards a target (a shrinking |yaw|)');
  const { stmt, lesser, greater, margin } = turnedTowards;
  if (comparisons.some((c) => c.lesser === greater && c.greater === lesser))
    throw new PatchUnavailable('the turning bonus already has a matching penalty for turning away');
  const body = stmt.childForFieldName('consequence')!.namedChildren.filter((c) => c?.type !== 'comment');
  const value = body.length === 1 && body[0]!.type === 'return_statement' ? body[0]!.namedChildren[0] : undefined;
  if (!value || (value.type !== 'integer' && value.type !== 'float') || stmt.childForFieldName('alternative'))
    throw new PatchUnavailable('the turning bonus is not a plain `if …: return <number>`, so its mirror cannot be written');
  const row = stmt.endPosition.row + 1;
  const condition = `abs(${lesser}[1]) > abs(${greater}[1])${margin ? ` + ${margin}` : ''}`;
  const lines = [`# Analyzer: ${req.why}`, `if ${condition}:`, `\treturn -${value.text}  # turned away from it`];
  edits.push({ start: src.lineStart(row), end: src.lineStart(row), text: src.block(src.indentOf(stmt.startPosition.row), lines) });
}

export const symmetricTurning = definePatch<SymmetricTurningRequest>({
  kind: 'symmetric-turning',
  write: mirrorTurningBonus,
  python: pythonMirrorTurningBonus,
});

export const turningFarmed = defineFinding({
  meta: {
    id: 'turning-farmed',
    kinds: ['turning-farmed'],
    description: 'failed episodes that turned on the spot and were paid for it',
    needs: ['failed'],
  },
  find: (ctx) => turningFarmFinding(ctx.failed),
  patch: symmetricTurning,
});
