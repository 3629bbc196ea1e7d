// The reward ignores names the task's success counts (approach-tree counts birch logs; a reward that reads only
// oak_log cannot see them): the patch widens every read of a known target to the nearest of all of them.
import ts from 'typescript';
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import {
  defineFinding,
  fmt,
  KEEP_EVIDENCE,
  nearestOf,
  pct,
  plural,
  rewardSummary,
  targetNames,
  type EpisodeEvidence,
  type FindingOf,
  type RewardFacts,
} from '../finding';
import { definePatch, nearestTargetHelper, PatchUnavailable, type Edit, type RewardSource } from '../patch';
import * as py from '../python-patch';
import { pythonString } from '../../lint/python';
import { walk, type PythonNode } from '../../reward/python-syntax';

/**
 * The reward reads only some of the names the task's success counts (`known`): every read of one of them from a
 * nearest-blocks dict becomes the nearest of all `targets`.
 */
export interface TargetNamesRequest {
  kind: 'target-names';
  known: string[];
  targets: string[];
  why: string;
}

/** The reward ignores names the task's success counts: failed episodes in which only an ignored target was in view. */
function misalignmentFinding(
  failed: EpisodeRecord[],
  task: TaskSpec | undefined,
  reward: RewardFacts | undefined,
): FindingOf<'reward-misaligned', TargetNamesRequest> | undefined {
  const targets = targetNames(task);
  if (!reward || targets.length === 0) return undefined;
  const known = targets.filter((t) => reward.names.has(t));
  const ignored = targets.filter((t) => !reward.names.has(t));
  if (ignored.length === 0) return undefined;
  const evidence: EpisodeEvidence[] = [];
  for (const ep of failed) {
    const steps = ep.lastSteps.filter(
      (st) =>
        nearestOf(st.nearest, ignored) && (!nearestOf(st.nearest, known) || nearestOf(st.nearest, ignored)!.distance < nearestOf(st.nearest, known)!.distance),
    );
    if (steps.length === 0) continue;
    const d = steps.map((st) => nearestOf(st.nearest, ignored)!);
    const r = rewardSummary(steps);
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [steps[0]!.step, steps[steps.length - 1]!.step],
      note: `${[...new Set(d.map((x) => x.name))].join('/')} nearer than any ${known.join('/') || 'name the reward reads'} on ${steps.length} of the last ${ep.lastSteps.length} steps (closest ${fmt(Math.min(...d.map((x) => x.distance)))} m); the reward there: ${r.text}`,
    });
  }
  const share = evidence.length / failed.length;
  const criterion = task?.description.success_criteria ?? `success counts ${targets.join(', ')}`;
  return {
    id: 'reward-misaligned',
    kind: 'reward-misaligned',
    share,
    message: `The task's success counts ${targets.join(', ')} ("${criterion}"), but the reward reads only ${known.join(', ') || 'none of them'}: ${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} invisible to it. ${evidence.length > 0 ? `In ${plural(evidence.length, 'failed episode')} of ${failed.length} (${pct(share)}) the nearest target in view was one the reward ignores.` : 'No failed episode had an ignored target nearest in its last steps.'}`,
    suggestion: `Read every name the task's success counts: take the nearest of ${targets.join(', ')} wherever the reward reads ${known.join(' or ') || 'a target'}.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    ...(known.length > 0
      ? {
          patch: {
            kind: 'target-names' as const,
            known,
            targets,
            why: `the task's success counts ${targets.join(', ')}; the reward read only ${known.join(', ')}.`,
          },
        }
      : { noPatch: `the reward reads none of the task's targets (${targets.join(', ')}); there is no read to widen — the approach patch adds one` }),
  };
}

const NEAREST_DICTS = new Set(['current_nearest_blocks', 'previous_nearest_blocks']);

/** Every `D['name']`, `D.name` and `'name' in D` for a nearest-blocks dict D and a name in `known`, rewritten over all targets. */
function widenTargetNames(src: RewardSource, req: TargetNamesRequest, edits: Edit[]): void {
  const missing = req.targets.filter((t) => !req.known.includes(t));
  if (missing.length === 0) throw new PatchUnavailable('the reward already reads every name the task counts');
  const known = new Set(req.known);
  const found: { node: ts.Node; dict: string; negated: boolean }[] = [];
  const dictOf = (e: ts.Expression) => (ts.isIdentifier(e) && NEAREST_DICTS.has(e.text) ? e.text : undefined);
  const visit = (n: ts.Node) => {
    if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression) && known.has(n.argumentExpression.text) && dictOf(n.expression)) {
      found.push({ node: n, dict: dictOf(n.expression)!, negated: false });
      return;
    }
    if (ts.isPropertyAccessExpression(n) && known.has(n.name.text) && dictOf(n.expression)) {
      found.push({ node: n, dict: dictOf(n.expression)!, negated: false });
      return;
    }
    if (
      ts.isBinaryExpression(n) &&
      n.operatorToken.kind === ts.SyntaxKind.InKeyword &&
      ts.isStringLiteralLike(n.left) &&
      known.has(n.left.text) &&
      dictOf(n.right)
    ) {
      found.push({ node: n, dict: dictOf(n.right)!, negated: true });
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(src.sf);
  if (found.length === 0)
    throw new PatchUnavailable(
      `the reward reads ${req.known.join('/')} in a way the analyzer cannot rewrite (not as current_nearest_blocks[…] or previous_nearest_blocks[…])`,
    );
  const fn = nearestTargetHelper(src, req.targets);
  for (const f of found) {
    const call = `${fn}(${f.dict})`;
    edits.push({ start: f.node.getStart(src.sf), end: f.node.end, text: f.negated ? `(${call} !== undefined)` : call });
  }
  const first = src.line(found[0]!.node.getStart(src.sf));
  const comment = `// Analyzer: ${req.why}${src.eol}`;
  const at = src.sf.getPositionOfLineAndCharacter(first, 0);
  edits.push({ start: at, end: at, text: src.indentAt(at) + comment });
}

/** widenTargetNames in Python: every `D["name"]`, `D.get("name")` and `"name" in D` for a nearest-blocks dict D and a name in `known`, rewritten over all targets. */
function pythonTargetNames(src: py.PythonSource, _term: py.PythonDenseTerm, req: TargetNamesRequest, edits: Edit[]): void {
  if (req.targets.every((t) => req.known.includes(t))) throw new PatchUnavailable('the reward already reads every name the task counts');
  const known = new Set(req.known);
  const dictOf = (n: PythonNode | null | undefined) => (n?.type === 'identifier' && py.NEAREST_DICTS.has(n.text) ? n.text : undefined);
  const keyOf = (n: PythonNode | null | undefined) => {
    const key = pythonString(n);
    return key !== undefined && known.has(key) ? key : undefined;
  };
  const found: { node: PythonNode; rewrite: (call: string) => string }[] = [];
  for (const n of walk(src.root)) {
    if (n.type === 'subscript' && dictOf(n.childForFieldName('value')) && keyOf(n.childForFieldName('subscript'))) {
      if (n.parent?.type === 'assignment' && n.parent.childForFieldName('left')?.id === n.id) continue;
      found.push({ node: n, rewrite: (call) => call });
    } else if (n.type === 'call') {
      const fn = n.childForFieldName('function');
      const args = n.childForFieldName('arguments')?.namedChildren ?? [];
      if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'get' || !dictOf(fn.childForFieldName('object')) || !keyOf(args[0])) continue;
      const fallback = args[1]?.text;
      found.push({ node: n, rewrite: (call) => (fallback === undefined ? call : `(${call} or ${fallback})`) });
    } else if (n.type === 'comparison_operator' && n.namedChildren.length === 2 && keyOf(n.namedChildren[0]) && dictOf(n.namedChildren[1])) {
      const negated = n.children.some((c) => c?.type === 'not in');
      if (!negated && !n.children.some((c) => c?.type === 'in')) continue;
      found.push({ node: n, rewrite: (call) => `(${call} is ${negated ? '' : 'not '}None)` });
    }
  }
  if (found.length === 0)
    throw new PatchUnavailable(
      `the reward reads ${req.known.join('/')} in a way the analyzer cannot rewrite (not as current_nearest_blocks[…], .get(…) or "…" in …)`,
    );
  const fn = py.nearestTargetHelper(src, req.targets);
  for (const f of found) {
    const dict =
      f.node.type === 'comparison_operator'
        ? f.node.namedChildren[1]!
        : f.node.type === 'subscript'
          ? f.node.childForFieldName('value')!
          : f.node.childForFieldName('function')!.childForFieldName('object')!;
    edits.push({ start: f.node.startIndex, end: f.node.endIndex, text: f.rewrite(`${fn}(${dict.text})`) });
  }
  const row = found[0]!.node.startPosition.row;
  edits.push({ start: src.lineStart(row), end: src.lineStart(row), text: `${src.indentOf(row)}# Analyzer: ${req.why}${src.eol}` });
}

export const targetNamesPatch = definePatch<TargetNamesRequest>({
  kind: 'target-names',
  write: (src, _term, req, edits) => widenTargetNames(src, req, edits),
  python: pythonTargetNames,
});

export const rewardMisaligned = defineFinding({
  meta: {
    id: 'reward-misaligned',
    kinds: ['reward-misaligned'],
    description: "a reward that does not read every name the task's success counts",
    needs: ['failed', 'rewarded'],
  },
  find: (ctx) => misalignmentFinding(ctx.failed, ctx.task, ctx.reward),
  patch: targetNamesPatch,
});
