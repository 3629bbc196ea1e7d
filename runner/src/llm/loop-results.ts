// What the improvement loop reports: the iteration table (one row per candidate: its held-out success, its
// difference to the reward in force by the loop's decision rule, the patches it applied, the decision and why),
// what became of each suggestion, and the best reward measured in the whole loop. The CLI prints it, the loop
// writes it beside results.json (results.txt) for the editor's loop view.
import path from 'node:path';
import { readRecordBytes } from '../files';
import { rateRecord, type RateRecord, type RunSummary } from '../records';
import { readStoredConfig, type TrainConfig } from '../runs/config';
import { formatDifference, type RateComparison } from '../stats';
import { appliedSuggestions } from './designer';
import type { CandidateResult, IterationResult, LoopResult, LoopStart, SuggestionOutcome } from './loop-types';

/** Held-out success of a run with its interval (runs written before the summary carried one are recomputed). */
export function heldOut(s: RunSummary): RateRecord {
  return s.eval.success ?? rateRecord(Math.round(s.eval.success_rate * s.eval.episodes), s.eval.episodes);
}

/** A candidate's held-out success over every episode it was evaluated on (its run's, plus a decision's extra looks). */
export function candidateSuccess(c: CandidateResult): RateRecord | null {
  return c.success ?? (c.summary ? heldOut(c.summary) : null);
}

export const rateText = (r: RateRecord) =>
  r.rate === null ? '— (no episodes)' : `${(r.rate * 100).toFixed(1)} % [${(r.ci95[0] * 100).toFixed(1)}–${(r.ci95[1] * 100).toFixed(1)} %] of ${r.n}`;

/** "the foundation's", "the starting checkpoint's": whose held-out success a fine-tuned result is compared with. */
export function startOwner(start: LoopStart): string {
  return start.kind === 'foundation' ? "the foundation's" : "the starting checkpoint's";
}

/** "below the foundation's 22.0 % [15.0–31.1 %] of 100", for a result worse than the start by the decision rule. */
export function belowStartText(start: LoopStart | undefined, below: RateComparison | null | undefined): string {
  return below && start?.held_out ? `below ${startOwner(start)} ${rateText(start.held_out)}` : '';
}

/** A trained candidate's configuration (its run's config.json); null when it has no run or the run predates the file. */
export function runConfig(out: string, c: CandidateResult): TrainConfig | null {
  return c.summary && c.run ? readStoredConfig(path.join(out, c.run)) : null;
}

/** Where a candidate started, from its run's own record. */
function candidateStartText(out: string, c: CandidateResult, start: LoopStart | undefined): string {
  const config = runConfig(out, c);
  if (!config) return '—';
  if (config.init === null) return 'scratch';
  if (start?.kind === 'foundation' && start.checkpoint && path.resolve(config.init) === path.resolve(start.checkpoint)) return 'foundation';
  return path.basename(config.init);
}

function startLine(start: LoopStart): string {
  const held = start.held_out ? `, held-out success ${rateText(start.held_out)}` : '';
  const ft = start.fine_tuning
    ? `; fine-tuned with KL ${start.fine_tuning.kl_coef} to it, ${start.fine_tuning.value_pretrain_updates} value pre-training updates, return normalisation ${start.fine_tuning.return_norm ? 'on' : 'off'}`
    : '';
  if (start.kind === 'scratch') return 'Start: every candidate trains from scratch (no initial policy).';
  if (start.kind === 'foundation')
    return `Start: the task's foundation policy (${start.checkpoint}, behaviour-cloned from ${start.demos} demonstrations${held})${ft}.`;
  return `Start: the checkpoint ${start.checkpoint}${held}${ft}.`;
}

/** The decision of a candidate, for iterations recorded before candidates carried one. */
function decisionText(it: IterationResult, c: CandidateResult): string {
  if (c.decision) return c.decision;
  if (c.failure) return `failed: ${c.failure.split('\n')[0]}`;
  return it.chosen === c.candidate ? 'kept' : 'not kept';
}

/** The best reward measured in the whole loop (highest held-out success, kept or not; the earliest on a tie). */
export function bestMeasured(result: Pick<LoopResult, 'iterations'>): LoopResult['best'] {
  let best: NonNullable<LoopResult['best']> | null = null;
  for (const it of result.iterations)
    for (const c of it.candidates) {
      const success = candidateSuccess(c);
      if (!success || success.rate === null || !c.reward) continue;
      if (best && best.success.rate! >= success.rate) continue;
      best = { iteration: it.iteration, candidate: c.candidate, reward: c.reward, success, kept: it.chosen === c.candidate, decision: decisionText(it, c) };
    }
  return best;
}

/**
 * What became of each suggestion: the candidates of later iterations that applied it (the no-LLM loop's patch
 * sets name them; a designed reward names them in its "Applied suggestions:" line), each with its measured
 * difference to the reward in force and whether it was kept. A suggestion of an analysis that stayed in force
 * over several iterations (no candidate was kept) is one suggestion, applied by any of them.
 */
export function suggestionOutcomes(out: string, results: IterationResult[]): SuggestionOutcome[] {
  const outcomes = new Map<string, SuggestionOutcome>();
  const said = new Set<string>();
  for (let j = 0; j < results.length; j++) {
    const basis = results[j - 1];
    const it = results[j]!;
    // Candidates of iteration 1 start from no analysis; the suggestions of iteration j's analysis are made now.
    if (basis?.analysis) {
      const analysed = basis.run ?? `iteration-${basis.iteration}`;
      for (const c of it.candidates) {
        const applied = c.applied ?? (c.reward ? appliedSuggestions(readRewardText(out, c.reward)) : null);
        if (applied === null) continue;
        said.add(analysed);
        for (const id of applied) {
          const o = outcomes.get(`${analysed}#${id}`);
          o?.applied_in.push({
            iteration: it.iteration,
            candidate: c.candidate,
            success: candidateSuccess(c),
            versus_current: c.versus_current ?? null,
            kept: it.chosen === c.candidate,
          });
        }
      }
    }
    if (!it.analysis) continue;
    const analysed = it.run ?? `iteration-${it.iteration}`;
    for (const s of it.analysis.suggestions) {
      const key = `${analysed}#${s.id}`;
      if (!outcomes.has(key)) outcomes.set(key, { ...s, iteration: it.iteration, analysed_run: it.run ?? null, applied: null, helped: null, applied_in: [] });
    }
  }
  const list = [...outcomes.values()];
  for (const o of list) {
    const analysed = o.analysed_run ?? `iteration-${o.iteration}`;
    // null: no later candidate said which suggestions it applied (or the loop ended with this analysis).
    o.applied = o.applied_in.length > 0 ? true : said.has(analysed) ? false : null;
    o.helped = o.applied ? o.applied_in.some((a) => a.kept && a.versus_current?.verdict === 'better') : null;
  }
  return list;
}

/** A candidate's reward text, read within the loop's folder (its records may be someone else's); '' when it cannot be. */
function readRewardText(out: string, reward: string): string {
  try {
    return readRecordBytes(path.join(out, reward), out).toString('utf8');
  } catch {
    return '';
  }
}

/** "10.0 % [5.5–17.4 %]": a rate beside another of the same `n` episodes (said only when it is over other episodes). */
const rateOfSame = (r: RateRecord | undefined, n: number | undefined) =>
  r?.rate == null ? '—' : `${(r.rate * 100).toFixed(1)} % [${(r.ci95[0] * 100).toFixed(1)}–${(r.ci95[1] * 100).toFixed(1)} %]${r.n === n ? '' : ` of ${r.n}`}`;

function suggestionLine(s: SuggestionOutcome, lastIteration: number): string {
  const message = s.message.split('\n')[0]!.slice(0, 100);
  const where = s.applied_in
    .map(
      (a) =>
        `iteration ${a.iteration} candidate ${a.candidate}: ${a.success ? rateText(a.success) : 'not trained'}${a.versus_current ? `, ${formatDifference(a.versus_current)}` : ''}, ${a.kept ? 'kept' : 'not kept'}`,
    )
    .join('; ');
  const what =
    s.applied === true
      ? `applied in ${where}`
      : s.applied === false
        ? 'not applied'
        : s.iteration === lastIteration
          ? 'not tried (the loop ended with this analysis)'
          : 'unknown (no later candidate said which suggestions it applied)';
  return `  ${s.id} (iteration ${s.iteration}'s analysis): ${what} — ${message}`;
}

/** The loop's results as a table; `dir` is the experiment folder the run paths are relative to. */
export function resultsTable(result: LoopResult, dir: string): string {
  const patched = result.iterations.some((it) => it.candidates.some((c) => c.applied !== undefined));
  const rows = result.iterations.flatMap((it) =>
    it.candidates.map((c) => {
      const success = candidateSuccess(c);
      const below = belowStartText(result.start, c.below_start);
      return [
        String(it.iteration),
        String(c.candidate),
        candidateStartText(dir, c, result.start),
        result.no_llm ? '— (no critic)' : c.criticPassed ? 'yes' : 'no',
        String(c.executionFixes),
        success ? `${rateText(success)}${below ? `, ${below}` : ''}` : '—',
        rateOfSame(c.summary?.eval.death, success?.n),
        c.versus_current ? formatDifference(c.versus_current) : '—',
        ...(patched ? [c.applied?.length ? c.applied.join('+') : '—'] : []),
        decisionText(it, c),
        c.reward ?? '—',
      ];
    }),
  );
  const header = [
    'iteration',
    'candidate',
    'start',
    'critic passed',
    'runtime fixes',
    'held-out success [95 % CI] of n',
    'deaths [95 % CI]',
    'difference to the reward in force',
    ...(patched ? ['analyzer patches applied'] : []),
    'decision',
    'reward file',
  ];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  const out = [...(result.start ? [startLine(result.start), ''] : []), line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
  if (result.suggestion_outcomes.length > 0) {
    out.push('', 'Suggestions (the candidates that applied each, their difference to the reward in force, kept or not):');
    const last = result.iterations[result.iterations.length - 1]?.iteration ?? 0;
    for (const s of result.suggestion_outcomes) out.push(suggestionLine(s, last));
  }
  const best = result.best === undefined ? bestMeasured(result) : result.best;
  if (best) {
    const it = result.iterations.find((i) => i.iteration === best.iteration);
    const c = it?.candidates.find((x) => x.candidate === best.candidate);
    const below = belowStartText(result.start, c?.below_start);
    out.push(
      '',
      `Best reward measured: iteration ${best.iteration}, candidate ${best.candidate}: ${rateText(best.success)} held-out${below ? `, ${below}` : ''} (${best.kept ? 'kept' : best.decision}). File: ${path.join(dir, best.reward)}`,
    );
  }
  return out.join('\n');
}
