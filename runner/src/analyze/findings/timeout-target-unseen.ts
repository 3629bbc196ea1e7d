// Time-outs that never had the target in view at the end: the agent does not search. The patch pays the first
// visit to each cell until a target is first seen.
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import { cellsVisited, defineFinding, fmt, KEEP_EVIDENCE, nearestOf, pct, plural, targetNames, type EpisodeEvidence, type FindingOf } from '../finding';
import {
  addConstant,
  cellBonusLines,
  definePatch,
  ensureParameters,
  insertAtTop,
  nearestTargetHelper,
  PatchUnavailable,
  yieldDense,
  type DenseTerm,
  type Edit,
  type RewardSource,
} from '../patch';
import * as py from '../python-patch';

/** While none of `targets` is in view, pay the first visit to each cell. */
export interface ExplorationBonusRequest {
  kind: 'exploration-bonus';
  cellSize: number;
  targets: string[];
  why: string;
}

function timeoutFinding(failed: EpisodeRecord[], task: TaskSpec | undefined): FindingOf<'timeout-target-unseen', ExplorationBonusRequest> | undefined {
  const targets = targetNames(task);
  if (targets.length === 0) return undefined;
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let cellsTotal = 0;
  for (const ep of failed) {
    if (!ep.truncated || ep.died) continue;
    if (ep.lastSteps.some((s) => nearestOf(s.nearest, targets)) || nearestOf(ep.final.nearest, targets)) continue;
    affected++;
    const cells = cellsVisited(ep, 4);
    cellsTotal += cells;
    const first = ep.lastSteps[0]?.step ?? 1;
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [first, ep.steps],
      note: `timed out after ${ep.steps} steps; no ${targets.join('/')} in view in the last ${ep.lastSteps.length} steps; ${fmt(ep.distanceMoved)} m from the start, ${cells} distinct 4 m cells visited`,
    });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  const meanCells = cellsTotal / affected;
  return {
    id: 'timeout-target-unseen',
    kind: 'timeout-target-unseen',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) ran out of time without the target (${targets.join('/')}) in view at the end; they visited ${fmt(meanCells, 0)} distinct 4 m cells on average.`,
    suggestion:
      'The agent does not search: when the target is not in view, pay the first visit to each cell (a Set of visited cells in GLOBAL_DATA), so that covering new ground is rewarded and revisiting is not.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'exploration-bonus',
      cellSize: 4,
      targets,
      why: `${pct(share)} of failed episodes timed out without ever seeing the target; the first visit to each cell pays when nothing else does.`,
    },
  };
}

function addExplorationBonus(src: RewardSource, term: DenseTerm, req: ExplorationBonusRequest, edits: Edit[]): void {
  const bodyText = (term.kind === 'function' ? term.fn.body : term.before.parent).getText(src.sf);
  if (/GLOBAL_DATA/.test(bodyText) && /new Set\(/.test(bodyText)) throw new PatchUnavailable('the dense term already pays for visiting new cells');
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to search for');
  ensureParameters(src, term, ['current_nearest_blocks', 'past_agent_positions', 'GLOBAL_DATA'], edits);
  const cellSize = addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  const visible = `${nearestTargetHelper(src, req.targets)}(current_nearest_blocks) !== undefined`;
  // Searching pays only until a target is first seen this episode: after that, wandering to new cells would
  // pay more than walking up to the target.
  const seen = src.fresh('target_seen');
  // At the top of a dense function, so that every path sees it (it only returns when a new cell is entered);
  // for a dense variable, just before the final return, so that it overrides what was computed the same way.
  // The record that a target was seen is a note of its own (patch.ts, isNote): later patches go below it, and
  // one that returns first on the steps with a target in view (the approach patch) would leave it unset.
  insertAtTop(
    src,
    term,
    [
      `// Analyzer: ${req.why}`,
      `if (${visible}) GLOBAL_DATA.${seen} = true; // searching is over once a target was seen`,
      `if (!(${src.quote(seen)} in GLOBAL_DATA)) {`,
      ...cellBonusLines(src, cellSize, [yieldDense(term, 1)]).map((l) => `\t${l}`),
      '}',
    ],
    edits,
  );
}

/** addExplorationBonus in Python. */
function pythonExplorationBonus(src: py.PythonSource, term: py.PythonDenseTerm, req: ExplorationBonusRequest, edits: Edit[]): void {
  const body = term.kind === 'function' ? term.def.text : term.before.parent!.text;
  if (/GLOBAL_DATA/.test(body) && /\bset\(\)/.test(body)) throw new PatchUnavailable('the dense term already pays for visiting new cells');
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to search for');
  py.ensureParameters(term, ['current_nearest_blocks', 'past_agent_positions', 'GLOBAL_DATA'], edits);
  const cellSize = py.addConstant(src, 'CELL_SIZE', req.cellSize, 'metres: the first visit to each cell of this size pays (added by the analyzer)');
  const visible = `${py.nearestTargetHelper(src, req.targets)}(current_nearest_blocks) is not None`;
  // Searching pays only until a target is first seen this episode, recorded by a note of its own (as in TypeScript, above).
  const seen = src.quote(src.fresh('target_seen'));
  const search = py.cellBonusLines(src, cellSize, [py.yieldDense(term, 1)]).map((l) => `\t${l}`);
  const lines = [`if ${visible}:`, `\tGLOBAL_DATA[${seen}] = True  # searching is over once a target was seen`, `if ${seen} not in GLOBAL_DATA:`, ...search];
  py.insertAtTop(src, term, [`# Analyzer: ${req.why}`, ...lines], edits);
}

export const explorationBonus = definePatch<ExplorationBonusRequest>({ kind: 'exploration-bonus', write: addExplorationBonus, python: pythonExplorationBonus });

export const timeoutTargetUnseen = defineFinding({
  meta: {
    id: 'timeout-target-unseen',
    kinds: ['timeout-target-unseen'],
    description: "time-outs without the task's target in view in the last recorded steps",
    needs: ['failed'],
  },
  find: (ctx) => timeoutFinding(ctx.failed, ctx.task),
  patch: explorationBonus,
});
