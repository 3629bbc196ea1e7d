// The improvement loop (the paper's Algorithm 1). Each iteration: design (K candidates) → static checks → critic
// → train → evaluate → keep the best candidate → analyze (programmatic + LLM) → the next iteration's design
// prompt. Every step's result is a file in the experiment folder, written once it is complete (`cached`), so an
// interrupted loop resumes where it stopped and the user can read every reward, critique, run and analysis
// afterwards. Its options and records are declared in loop-types.ts, its table in loop-results.ts, its
// command in loop-command.ts.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { makeEvent } from '../events';
import { isInsideFolder, makeFolderBelow, readRecordBytes, writeAtomic } from '../files';
import {
  checkpointHeldOut,
  LOOP_FILES,
  rateRecord,
  readEpisodes,
  readRecordJson,
  readRecordObject,
  readSummary,
  requireTrainingSummary,
  RUN_FILES,
  RunRecordError,
  type RunSummary,
  sha256Hex,
} from '../records';
import type { RewardError } from '../reward/compile';
import { analyzeWithLlm, statisticsText, type LlmAnalysis, type ProgrammaticFinding } from './analyzer';
import { resolveLlmConfig, type LlmLog } from './client';
import { designAndReview, type DesignRequest, type ReviewedReward } from './designer';
import { analyzeRun, readAnalysis, type Analysis, type Suggestion } from '../analyze/analyze';
import { patchReward, PatchUnavailable, preparePatches, type PatchRequest } from '../analyze/patches';
import { compareRates, DECISION_ALPHA, formatDifference } from '../stats';
import { hash32 } from '../seeds';
import type { TrainOutcome } from './train-step';
import { belowStartText, bestMeasured, candidateSuccess, heldOut, rateText, resultsTable, runConfig, suggestionOutcomes } from './loop-results';
import { runsSavedByProbes, screenReward } from './screen';
import { languageOf, type RewardLanguage } from './prompts';
import type {
  CandidateResult,
  DecisionLook,
  ExtraEvaluation,
  IterationDecision,
  IterationResult,
  LoopOptions,
  LoopResult,
  LoopStart,
  RunSteps,
  SuggestionRecord,
} from './loop-types';

/** Candidates one after another, or all at once when an engine trains them as separate jobs. */
const eachCandidate = async <T>(n: number, parallel: boolean, f: (k: number) => Promise<T>): Promise<T[]> => {
  if (parallel) return Promise.all(Array.from({ length: n }, (_, i) => f(i + 1)));
  const out: T[] = [];
  for (let k = 1; k <= n; k++) out.push(await f(k));
  return out;
};

/** Designer fixes of run-time reward errors per candidate (each goes through the review again). */
const MAX_EXECUTION_FIXES = 2;

// Loaded on first use: training pulls in TensorFlow, which a loop that fails its checks never needs.
const REAL_STEPS: RunSteps = {
  train: async (o) => (await import('./train-step')).trainReward(o),
  evaluate: async (o) => {
    const { evaluateCheckpoint } = await import('../runs/train');
    const r = await evaluateCheckpoint({ ...o, backend: o.backend as Parameters<typeof evaluateCheckpoint>[0]['backend'] });
    return { success: r.summary.success, death: r.summary.death, seeds: r.episodes.map((e) => e.seed) };
  },
};

/**
 * Looks of the loop's decision: the candidates' own held-out evaluations, then, while the decision is close
 * (the best candidate ahead but not shown better), up to two more evaluations of both rewards on as many fresh
 * held-out worlds each (100 → 200 → 300 episodes at the default). Each look tests at alpha / (looks × candidates)
 * (Bonferroni over the looks and over picking the best of the candidates), so the chance of keeping a reward that
 * is no better stays within 5 % in all.
 */
export const DECISION_LOOKS = 3;
// Salt of the extra looks' evaluation streams (a look's seed: hash32(run seed, iteration, look, salt)).
const LOOK_SALT = 0x100c5;

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';

/**
 * The designed (LLM) loop goes on from each iteration's best candidate; each candidate still shows its difference
 * to the reward in force (the previous iteration's) by the decision rule, at 5 % over the candidates compared.
 */
function designedCandidates(candidates: CandidateResult[], chosen: CandidateResult, prev: IterationResult | undefined, start: LoopStart): CandidateResult[] {
  const current = prev?.candidates.find((c) => c.candidate === prev.chosen);
  const trained = candidates.filter((c) => c.summary).length;
  return candidates.map((c) => {
    if (!c.summary) return { ...c, decision: `failed: ${(c.failure ?? 'not trained').split('\n')[0]}` };
    const versus = current?.summary ? compareRates(heldOut(c.summary), heldOut(current.summary), DECISION_ALPHA / trained) : null;
    const decision =
      c === chosen
        ? trained > 1
          ? `kept: the best of ${trained} candidates`
          : 'kept'
        : versus?.verdict === 'worse'
          ? 'not kept: worse than the reward in force'
          : `not kept: candidate ${chosen.candidate} did better`;
    return withBelowStart({ ...c, versus_current: versus, decision }, start);
  });
}

/**
 * Runs `compute` unless its result file exists from an earlier (interrupted) run of the loop. A result that
 * `keep` rejects (a failure worth retrying on the next run) is returned but not recorded. `root` is the loop's
 * folder: a recorded result is read only from inside it, and the result's folder is made below it with no link
 * at any level, so that neither `compute`'s files nor the result are written out of the folder.
 */
async function cached<T>(root: string, file: string, compute: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
  if (existsSync(file)) return readRecordJson(file, root) as T;
  makeFolderBelow(root, path.dirname(file));
  const value = await compute();
  if (keep(value)) writeAtomic(root, file, json(value));
  return value;
}

/** Better = more evaluation success, then fewer deaths, then a higher training return. */
function better(a: RunSummary, b: RunSummary): boolean {
  if (a.eval.success_rate !== b.eval.success_rate) return a.eval.success_rate > b.eval.success_rate;
  if (a.eval.death_rate !== b.eval.death_rate) return a.eval.death_rate < b.eval.death_rate;
  return a.train.mean_return > b.train.mean_return;
}

/** A run-time reward error as the designer sees it, located in the candidate file (the run trains a copy of it). */
function errorText(e: ReturnType<RewardError['toJSON']>, rewardFile: string): string {
  return `${path.basename(rewardFile)}:${e.line}:${e.column}: ${e.kind === 'throw' ? 'threw' : e.kind}: ${e.message}`;
}

/**
 * Up to `k` patch sets from the analyzer's suggestions (those with a patch request, most widespread first):
 * all of them composed, then each prefix of one, two, … patches, then single patches; each set's patches
 * are applied one after another (a patch that no longer applies is left out), sets already `tried` are skipped.
 */
export function patchSets(file: string, text: string, suggestions: Suggestion[], k: number, tried: ReadonlySet<string>): { ids: string[]; text: string }[] {
  // Findings whose patches are the same change (the approach patch answers gamed, not-approached and lost) are
  // one patch; applying it applies each of them, so all their ids are recorded.
  const sharing = new Map<string, string[]>();
  const patchable = suggestions
    .filter((s): s is Suggestion & { patch: PatchRequest } => !!s.patch)
    .sort((a, b) => (b.episode_ids?.length ?? 0) - (a.episode_ids?.length ?? 0))
    .filter((s) => {
      const key = JSON.stringify({ ...s.patch, why: '' });
      const ids = sharing.get(key);
      if (ids) ids.push(s.id);
      else sharing.set(key, [s.id]);
      return !ids;
    });
  const alsoApplied = (s: Suggestion) => sharing.get(JSON.stringify({ ...s.patch, why: '' }))?.slice(1) ?? [];
  const orders: Suggestion[][] = [patchable, ...patchable.map((_, n) => patchable.slice(0, n + 1)), ...patchable.map((s) => [s])];
  const out: { ids: string[]; text: string }[] = [];
  const made = new Set<string>();
  for (const order of orders) {
    if (out.length >= k) break;
    let patched = text;
    const ids: string[] = [];
    for (const s of order) {
      try {
        patched = patchReward(file, patched, s.patch!).patched;
        ids.push(s.id, ...alsoApplied(s));
      } catch (err) {
        if (!(err instanceof PatchUnavailable)) throw err;
      }
    }
    const key = ids.join('+');
    if (ids.length === 0 || made.has(key) || tried.has(key)) continue;
    made.add(key);
    out.push({ ids, text: patched });
  }
  return out;
}

/** The candidate with `below_start` set when its held-out success is worse than the starting policy's by the decision rule. */
function withBelowStart(c: CandidateResult, start: LoopStart): CandidateResult {
  const success = candidateSuccess(c);
  if (!success || !start.held_out) return c;
  const versus = compareRates(success, start.held_out);
  return { ...c, below_start: versus.verdict === 'worse' ? versus : null };
}

/** "held-out success 11.0 % [6.3–18.6 %] of 100, below the foundation's 22.0 % [15.0–31.1 %] of 100": a progress line's result. */
function heldOutText(summary: RunSummary, start: LoopStart): string {
  const success = heldOut(summary);
  const versus = start.held_out && success.n > 0 ? compareRates(success, start.held_out) : null;
  const note = belowStartText(start, versus?.verdict === 'worse' ? versus : null);
  return `held-out success ${rateText(success)}${note ? `, ${note}` : ''}`;
}

/** Worlds a run has seen: its training worlds (checkpoint state) and its held-out evaluation's; a missing record adds none. */
function seedsSeen(runDir: string): number[] {
  const seeds: number[] = [];
  try {
    const state = readRecordJson(path.join(runDir, RUN_FILES.checkpoint, 'state.json'), runDir) as { trainingSeeds?: number[] };
    seeds.push(...(state.trainingSeeds ?? []));
  } catch {
    // no checkpoint state: no training worlds to leave out
  }
  try {
    seeds.push(...readEpisodes(runDir).map((e) => e.seed));
  } catch {
    // no evaluation records
  }
  return seeds;
}

/** A condition the user must act on (settings changed, nothing trainable); reported without a stack. */
export class LoopError extends Error {}

/** The subfolder of the experiment that holds the foundation policy the loop builds. */
export const FOUNDATION_DIR = 'foundation';

/** "from the foundation (foundation/)" / "from scratch" / "from CHECKPOINT", for progress lines. */
function startText(start: LoopStart, out: string): string {
  if (start.kind === 'scratch' || !start.checkpoint) return 'from scratch';
  const where = path.relative(out, start.checkpoint);
  return start.kind === 'foundation' ? `from the foundation policy (${where})` : `from ${isInsideFolder(out, start.checkpoint) ? where : start.checkpoint}`;
}

/** Runs the improvement loop; results.json and results.txt (the table) are in `o.out` afterwards. */
export function runLoop(o: LoopOptions): Promise<LoopResult> {
  return new Loop(o).run();
}

class Loop {
  private readonly log: LlmLog;
  /** The starting policy, prepared when the first candidate is about to train (a loop that fails before never builds it). */
  private startPromise: Promise<LoopStart> | undefined;
  private readonly language: RewardLanguage;
  /** The name of every reward file the loop writes: `<task>.reward.ts`, or `.py` for Python rewards. */
  private readonly rewardName: string;
  constructor(private readonly o: LoopOptions) {
    this.log = { dir: o.out };
    this.language = o.language ?? languageOf(o.startReward);
    this.rewardName = `${o.task.id}.reward.${this.language === 'python' ? 'py' : 'ts'}`;
  }

  /**
   * The policy every candidate starts from: the checkpoint given, else the task's foundation policy (built once in
   * DIR/foundation with `pretrain`; a folder whose pretrain finished is reused, an interrupted one is built again),
   * else none (from scratch).
   */
  private startPolicy(): Promise<LoopStart> {
    this.startPromise ??= this.prepareStart();
    return this.startPromise;
  }

  private async prepareStart(): Promise<LoopStart> {
    const o = this.o;
    if (o.train?.init) {
      const checkpoint = path.resolve(o.train.init);
      return { kind: 'init', checkpoint, held_out: checkpointHeldOut(checkpoint), demos: null, fine_tuning: null };
    }
    if (!o.foundation) return { kind: 'scratch', checkpoint: null, held_out: null, demos: null, fine_tuning: null };
    // Loaded on first use: pretraining pulls in TensorFlow, which a loop from a checkpoint never needs.
    const { pretrain, PRETRAIN_FILE, DEFAULT_DEMOS } = await import('../pretrain/pretrain');
    const dir = path.join(o.out, FOUNDATION_DIR);
    const demos = o.foundation.demos ?? DEFAULT_DEMOS;
    let summary = existsSync(path.join(dir, PRETRAIN_FILE)) ? readSummary(dir) : undefined;
    let record = summary ? (readRecordJson(path.join(dir, PRETRAIN_FILE)) as { demos: number }) : undefined;
    if (summary && record && record.demos !== demos)
      throw new LoopError(`${dir} holds a foundation of ${record.demos} demonstrations, not ${demos}: use a new --out folder, or the same --demos to resume`);
    if (!summary || !record) {
      this.say(
        `building the task's foundation policy in ${this.rel(dir)}: ${demos} demonstrations of the scripted teacher, behaviour cloning, held-out evaluation (once; a resumed loop reuses it)`,
      );
      const built = await pretrain({
        task: o.task,
        out: dir,
        demos,
        seed: o.seed,
        evalEpisodes: o.train?.evalEpisodes,
        backend: o.train?.backend as Parameters<typeof pretrain>[0]['backend'],
        overwrite: true,
        log: (line) => this.say(`  ${line}`),
      });
      summary = built.summary;
      record = built.record;
    }
    const start: LoopStart = { kind: 'foundation', checkpoint: dir, held_out: heldOut(summary), demos: record.demos, fine_tuning: null };
    this.say(
      `start: the task's foundation policy (${this.rel(dir)}, ${record.demos} demonstrations), held-out success ${rateText(start.held_out!)}; every candidate is fine-tuned from it with the KL term to it, value pre-training and return normalisation`,
    );
    return start;
  }

  /** One candidate's training run from the loop's start policy, with the loop's budget, on the text screened here (the
   * job reads the file later, in its own process, and refuses it, naming the file, unless its sha256 is this text's). */
  private async train(reward: { file: string; text: string }, runDir: string, start: LoopStart): Promise<TrainOutcome> {
    makeFolderBelow(this.o.out, runDir);
    return (this.o.runSteps ?? REAL_STEPS).train({
      rewardFile: reward.file,
      rewardSha256: sha256Hex(reward.text),
      task: this.o.task,
      steps: this.o.steps,
      seed: this.o.seed,
      out: runDir,
      ...this.o.train,
      init: start.checkpoint ?? undefined,
      emit: this.o.emit,
    });
  }

  private say(line: string): void {
    this.o.say?.(line);
  }

  private rel(p: string): string {
    return path.relative(this.o.out, p);
  }

  /**
   * A reward or run the loop's records name (`iteration-2/candidate-1/attempt-1/reward.ts`), as a path in the
   * loop's folder: the records may be someone else's, so a name that leads out of the folder is refused.
   */
  private inLoop(name: string): string {
    const file = path.join(this.o.out, name);
    if (!isInsideFolder(this.o.out, file)) throw new RunRecordError(`${file}: named by ${this.o.out}'s records, but outside that folder; not read`);
    return file;
  }

  /** The text of a reward the loop's records name, read within the loop's folder (`inLoop`, `readRecordBytes`). */
  private readInLoop(name: string): string {
    return readRecordBytes(this.inLoop(name), this.o.out).toString('utf8');
  }

  /** One candidate: review (design → lint → critic), train; a run-time reward error goes back to the designer. */
  private async candidate(iterDir: string, k: number, base: DesignRequest, firstDraft: string | undefined): Promise<CandidateResult> {
    const dir = path.join(iterDir, `candidate-${k}`);
    let request = base;
    let draft = firstDraft;
    let criticPassed = false;
    for (let attempt = 1; attempt <= 1 + MAX_EXECUTION_FIXES; attempt++) {
      const attemptDir = path.join(dir, `attempt-${attempt}`);
      const reviewed = await cached<ReviewedReward>(
        this.o.out,
        path.join(attemptDir, 'review.json'),
        () => designAndReview({ task: this.o.task, request, firstDraft: draft, dir: attemptDir, llm: this.o.llm, log: this.log, language: this.language }),
        (r) => r.source !== null,
      );
      draft = undefined;
      for (const s of reviewed.steps) {
        const last = s === reviewed.steps[reviewed.steps.length - 1];
        if (s.errors.length > 0)
          this.say(
            `  candidate ${k}: draft ${s.draft} has ${s.errors.length} static error(s); ${last && reviewed.source === null ? 'giving up on this candidate' : 'sent back to the designer'}`,
          );
        else if (s.critique)
          this.say(
            `  candidate ${k}: critic ${s.critique.success ? 'passed' : 'failed'} draft ${s.draft}${s.critique.critique ? `: ${s.critique.critique.split('\n')[0]}` : ''}`,
          );
      }
      if (reviewed.source === null) {
        return { candidate: k, reward: null, criticPassed: false, executionFixes: attempt - 1, run: null, summary: null, failure: reviewed.failure };
      }
      criticPassed = reviewed.criticPassed;
      const reward = this.candidateReward(attemptDir, reviewed.source);
      const rewardFile = reward.file;
      const runDir = path.join(attemptDir, 'run');
      // The probes' findings go back to the designer as a run-time error would, without a training run.
      const refused = await screenReward(reward, this.o.task);
      if (refused) {
        this.say(`  candidate ${k}: not trained; ${refused.split('\n').join(' ')}`);
        request = { kind: 'fix-error', previous: reviewed.source, error: refused };
        continue;
      }
      const start = await this.startPolicy();
      this.say(`  candidate ${k}: training on ${this.rel(rewardFile)} for ${this.o.steps} frames ${startText(start, this.o.out)}`);
      const outcome = await cached<TrainOutcome>(this.o.out, path.join(attemptDir, 'train.json'), () => this.train(reward, runDir, start));
      if (outcome.ok) {
        const summary = requireTrainingSummary(runDir);
        this.say(`  candidate ${k}: ${heldOutText(summary, start)}, deaths ${rateText(summary.eval.death)}`);
        return { candidate: k, reward: this.rel(rewardFile), criticPassed, executionFixes: attempt - 1, run: this.rel(runDir), summary, failure: null };
      }
      this.say(`  candidate ${k}: the reward failed while training: ${errorText(outcome.error, rewardFile)}`);
      request = { kind: 'fix-error', previous: reviewed.source, error: errorText(outcome.error, rewardFile) };
    }
    return {
      candidate: k,
      reward: null,
      criticPassed,
      executionFixes: MAX_EXECUTION_FIXES,
      run: null,
      summary: null,
      failure: `the reward still failed at run time after ${MAX_EXECUTION_FIXES} fixes`,
    };
  }

  private async analyze(iterDir: string, chosen: CandidateResult): Promise<NonNullable<IterationResult['analysis']>> {
    const runDir = this.inLoop(chosen.run!);
    const rewardFile = this.inLoop(chosen.reward!);
    const rewardSource = this.readInLoop(chosen.reward!);
    // The programmatic analysis is the run's suggestions.json, as `rewardsmith analyze` writes it.
    const programmatic = await cached<Analysis & { version: number }>(this.o.out, path.join(runDir, RUN_FILES.suggestions), async () => ({
      version: 1,
      ...(await analyzeRun(runDir, { rewardFile, task: this.o.task })),
    }));
    const found: ProgrammaticFinding[] = programmatic.suggestions;
    const llm = this.o.noLlm
      ? null
      : await cached<LlmAnalysis>(this.o.out, path.join(iterDir, 'llm-analysis.json'), () =>
          analyzeWithLlm({
            task: this.o.task,
            rewardSource,
            summary: chosen.summary!,
            episodes: readEpisodes(runDir),
            findings: found,
            llm: this.o.llm,
            log: this.log,
          }),
        );
    this.say(
      `  analyzer: ${programmatic.explained_episodes ?? '?'} of ${programmatic.failed_episodes ?? '?'} failed episodes explained by ${programmatic.suggestions.length} finding(s)`,
    );
    const suggestions = this.suggestionRecords(llm, programmatic);
    for (const s of suggestions) {
      this.o.emit?.(
        makeEvent({
          type: 'suggestion',
          id: `${path.basename(iterDir)}/${s.id}`,
          message: s.message,
          ...(s.line ? { lines: [s.line, s.endLine ?? s.line] as [number, number] } : {}),
          ...(s.diff ? { diff: s.diff } : {}),
        }),
      );
    }
    return { llm, findings: found, suggestions };
  }

  /** An analysis's suggestions as the loop records them: the LLM's, then the analyzer's findings. */
  private suggestionRecords(llm: LlmAnalysis | null, programmatic: Analysis): SuggestionRecord[] {
    // Without an LLM the kept candidate names the analyzer findings it applied by their ids, so the records keep them.
    return [
      ...(llm?.suggestions ?? []).map((s) => ({ ...s, source: 'llm' as const })),
      ...programmatic.suggestions.map((f, i) => ({
        id: this.o.noLlm ? f.id : `P${i + 1}`,
        source: 'analyzer' as const,
        message: f.message,
        ...(f.lines ? { line: f.lines[0], endLine: f.lines[1] } : {}),
        ...(f.diff ? { diff: f.diff } : {}),
      })),
    ];
  }

  /**
   * A recorded iteration's analysis as its run holds it now: a run analysed again since (`rewardsmith analyze`
   * rewrites its suggestions.json) is listed, designed from and patched from as it is now, not as the iteration
   * recorded it. The LLM's analysis is the one recorded; a run without suggestions.json keeps the recorded copy.
   * An iteration that kept the reward in force has the analysis of the iteration before (`prev`, read already).
   */
  private analysisNow(it: IterationResult, prev: IterationResult | undefined): IterationResult['analysis'] {
    if (!it.analysis || !it.run) return it.analysis;
    if (it.chosen === 0) return prev?.analysis ?? it.analysis;
    const programmatic = readAnalysis(this.inLoop(it.run));
    if (!programmatic) return it.analysis;
    return { llm: it.analysis.llm, findings: programmatic.suggestions, suggestions: this.suggestionRecords(it.analysis.llm, programmatic) };
  }

  private updateRequest(prev: IterationResult): DesignRequest | null {
    const chosen = prev.candidates.find((c) => c.candidate === prev.chosen);
    if (!chosen?.summary || !prev.analysis) return null;
    return {
      kind: 'update',
      previous: this.readInLoop(chosen.reward!),
      statistics: statisticsText(chosen.summary),
      // The programmatic findings reach the designer as P-suggestions (below), with their patches.
      analysis: prev.analysis.llm?.analysis ?? 'No analysis.',
      suggestions:
        prev.analysis.suggestions.length === 0
          ? 'None.'
          : prev.analysis.suggestions
              .map(
                (s) =>
                  `- ${s.id}: ${s.message}${s.line ? ` (lines ${s.line}${s.endLine ? `-${s.endLine}` : ''})` : ''}${s.diff ? `\n  proposed patch:\n${s.diff.replace(/^/gm, '    ')}` : ''}`,
              )
              .join('\n'),
    };
  }

  /**
   * A candidate's reward file in `attemptDir`, written from `source` unless an interrupted loop wrote it there
   * already. A kept one is read checked (a plain file inside the experiment folder, which may be shared), so a
   * link put in its place is a RunRecordError naming it, never screened or trained.
   */
  private candidateReward(attemptDir: string, source: string): { file: string; text: string } {
    const file = path.join(attemptDir, this.rewardName);
    if (!existsSync(file)) {
      writeAtomic(this.o.out, file, source);
      return { file, text: source };
    }
    return { file, text: readRecordBytes(file, this.o.out).toString('utf8') };
  }

  /** Trains one no-LLM candidate: a reward file written from patched text. */
  private async trainCandidate(
    iterDir: string,
    k: number,
    source: string,
    applied: string[],
    patched?: { file: string; text: string },
  ): Promise<CandidateResult> {
    const attemptDir = path.join(iterDir, `candidate-${k}`, 'attempt-1');
    makeFolderBelow(this.o.out, attemptDir);
    const reward = this.candidateReward(attemptDir, source);
    const rewardFile = reward.file;
    const refused = patched && (await screenReward(reward, this.o.task, patched));
    if (refused) {
      this.say(`  candidate ${k} (${applied.join(' + ')}): not trained; ${refused.split('\n').join(' ')}`);
      return { candidate: k, reward: this.rel(rewardFile), criticPassed: false, executionFixes: 0, run: null, summary: null, failure: refused, applied };
    }
    const runDir = path.join(attemptDir, 'run');
    const start = await this.startPolicy();
    this.say(
      `  candidate ${k}${applied.length ? ` (${applied.join(' + ')})` : ''}: training on ${this.rel(rewardFile)} for ${this.o.steps} frames ${startText(start, this.o.out)}`,
    );
    const outcome = await cached<TrainOutcome>(
      this.o.out,
      path.join(attemptDir, 'train.json'),
      () => this.train(reward, runDir, start),
      // A sandbox host that died (not the reward's own error) is not recorded: resuming the loop retries it.
      (r) => r.ok || !/sandbox host exited/.test(r.error.message),
    );
    if (!outcome.ok) {
      this.say(`  candidate ${k}: the reward failed while training: ${errorText(outcome.error, rewardFile)}`);
      return {
        candidate: k,
        reward: this.rel(rewardFile),
        criticPassed: false,
        executionFixes: 0,
        run: null,
        summary: null,
        failure: errorText(outcome.error, rewardFile),
        applied,
      };
    }
    const summary = requireTrainingSummary(runDir);
    this.say(`  candidate ${k}: ${heldOutText(summary, start)}`);
    return { candidate: k, reward: this.rel(rewardFile), criticPassed: false, executionFixes: 0, run: this.rel(runDir), summary, failure: null, applied };
  }

  /**
   * One no-LLM iteration. Iteration 1 trains the starting reward. Later ones build K patch sets from the kept
   * run's analyzer suggestions (all of them, then the most widespread alone, then growing prefixes, …, skipping
   * sets tried before), train each from the same starting policy, and keep the best only if the decision rule
   * shows it better than the reward in force (`decide`).
   */
  private async patchIteration(i: number, iterDir: string, prev: IterationResult | undefined, done: IterationResult[]): Promise<IterationResult> {
    const o = this.o;
    const start = await this.startPolicy();
    const result = (
      chosen: CandidateResult | null,
      candidates: CandidateResult[],
      keptPrevious: boolean,
      analysis: IterationResult['analysis'],
      decision: IterationDecision | null,
    ): IterationResult => ({
      iteration: i,
      chosen: chosen?.candidate ?? null,
      reward: chosen ? this.rel(path.join(iterDir, this.rewardName)) : null,
      success_rate: chosen?.summary?.eval.success_rate ?? null,
      success: chosen?.summary ? heldOut(chosen.summary) : null,
      death_rate: chosen?.summary?.eval.death_rate ?? null,
      avg_steps: chosen?.summary?.eval.avg_steps ?? null,
      critic_passed: false,
      kept_previous: keptPrevious,
      decision,
      run: chosen?.run ?? null,
      candidates: candidates.map((c) => withBelowStart(c, start)),
      analysis,
    });
    if (!prev) {
      this.say(`iteration 1: training the starting reward ${o.startReward}`);
      const c = await this.trainCandidate(iterDir, 1, readFileSync(o.startReward!, 'utf8'), []);
      if (!c.summary) return result(null, [c], false, null, null);
      c.decision = 'kept (the starting reward)';
      writeAtomic(this.o.out, path.join(iterDir, this.rewardName), this.readInLoop(c.reward!));
      return result(c, [c], false, await this.analyze(iterDir, c), null);
    }
    // The reward in force: the latest iteration that kept a new one (an iteration that kept the previous one has chosen 0).
    const keeper = [...done].reverse().find((it) => it.chosen !== 0)!;
    const current = keeper.candidates.find((c) => c.candidate === keeper.chosen)!;
    const currentFile = this.inLoop(prev.reward!);
    const currentText = this.readInLoop(prev.reward!);
    const analysis = readAnalysis(this.inLoop(current.run!));
    if (!analysis) throw new RunRecordError(`${path.join(o.out, current.run!, RUN_FILES.suggestions)}: the run has not been analysed`);
    const suggestions = analysis.suggestions as Suggestion[];
    const tried = new Set(done.flatMap((it) => it.candidates.map((c) => (c.applied ?? []).join('+'))));
    await preparePatches(currentFile);
    const sets = patchSets(currentFile, currentText, suggestions, o.candidates, tried);
    this.say(
      `iteration ${i}: ${sets.length} patch set(s) from ${suggestions.filter((s) => s.patch).length} patchable finding(s) of ${this.rel(path.join(o.out, current.run!, RUN_FILES.suggestions))}`,
    );
    const candidates = await eachCandidate(sets.length, Boolean(o.train?.engine), (k) =>
      this.trainCandidate(iterDir, k, sets[k - 1]!.text, sets[k - 1]!.ids, { file: currentFile, text: currentText }),
    );
    const trained = candidates.filter((c) => c.summary);
    let best: CandidateResult | null = null;
    for (const c of trained) if (!best || better(c.summary!, best.summary!)) best = c;
    const decision = best ? await this.decide(i, iterDir, best, current, keeper.iteration, trained.length) : null;
    // Every candidate with its difference to the reward in force (the best one's over all the decision's looks).
    const alpha = decision?.alpha_per_look ?? DECISION_ALPHA;
    for (const c of candidates) {
      if (!c.summary) {
        c.decision = `failed: ${(c.failure ?? 'not trained').split('\n')[0]}`;
        continue;
      }
      if (c === best && decision) {
        const last = decision.looks[decision.looks.length - 1]!;
        c.success = last.candidate;
        c.versus_current = last.comparison;
        c.decision = decision.reason;
      } else {
        c.versus_current = compareRates(heldOut(c.summary), heldOut(current.summary!), alpha);
        c.decision = c.versus_current.verdict === 'worse' ? 'not kept: worse than the reward in force' : `not kept: candidate ${best!.candidate} did better`;
      }
    }
    if (!decision?.kept) {
      this.say(
        `iteration ${i}: ${decision ? decision.reason : candidates.length === 0 ? 'no untried patch set left' : 'no candidate could be trained'}; keeping the reward in force (${this.rel(currentFile)})`,
      );
      writeAtomic(this.o.out, path.join(iterDir, this.rewardName), currentText);
      // The current reward's run stays the one analysed; its suggestions.json is in its run folder.
      const kept = { ...current, candidate: 0 };
      return { ...result(kept, candidates, true, prev.analysis, decision), chosen: 0 };
    }
    this.say(`iteration ${i}: candidate ${best!.candidate} ${decision.reason}`);
    writeAtomic(this.o.out, path.join(iterDir, this.rewardName), this.readInLoop(best!.reward!));
    return result(best, candidates, false, await this.analyze(iterDir, best!), decision);
  }

  /**
   * Whether `best` replaces the reward in force: its held-out success minus the current reward's, by Newcombe's
   * interval at level 1 − 2·alpha (alpha = 5 % / (looks × candidates)); better when the lower bound is above 0.
   * A close decision (ahead, not yet shown better) evaluates both policies on fresh held-out worlds, as many
   * again as their own evaluation, and looks again with the episodes pooled, up to DECISION_LOOKS looks.
   */
  private async decide(
    i: number,
    iterDir: string,
    best: CandidateResult,
    current: CandidateResult,
    currentIteration: number,
    tested: number,
  ): Promise<IterationDecision> {
    const alpha = DECISION_ALPHA / (DECISION_LOOKS * tested);
    let cand = heldOut(best.summary!);
    let cur = heldOut(current.summary!);
    const step = Math.min(cand.n, cur.n);
    const runs = { candidate: this.inLoop(best.run!), current: this.inLoop(current.run!) };
    const seen = [...seedsSeen(runs.candidate), ...seedsSeen(runs.current)];
    const looks: DecisionLook[] = [];
    for (let look = 1; ; look++) {
      const comparison = compareRates(cand, cur, alpha);
      looks.push({ candidate: cand, current: cur, comparison });
      const close = comparison.verdict !== 'better' && comparison.difference > 0;
      if (!close || look === DECISION_LOOKS || step === 0) break;
      this.say(
        `iteration ${i}: candidate ${best.candidate} is ahead, ${formatDifference(comparison)}, but not shown better; evaluating both rewards on ${step} more held-out worlds (look ${look + 1} of ${DECISION_LOOKS})`,
      );
      const lookDir = path.join(iterDir, 'decision', `look-${look + 1}`);
      const extra = await cached(this.o.out, path.join(lookDir, 'look.json'), async () => {
        const request = (runDir: string, who: string): ExtraEvaluation => ({
          runDir,
          task: this.o.task,
          episodes: step,
          seed: hash32(this.o.seed, i, look + 1, LOOK_SALT),
          excludeSeeds: seen,
          out: path.join(lookDir, who),
          backend: this.o.train?.backend,
        });
        const steps = this.o.runSteps ?? REAL_STEPS;
        return {
          candidate: await steps.evaluate(request(runs.candidate, `candidate-${best.candidate}`)),
          current: await steps.evaluate(request(runs.current, 'current')),
        };
      });
      seen.push(...extra.candidate.seeds, ...extra.current.seeds);
      cand = rateRecord(cand.count + extra.candidate.success.count, cand.n + extra.candidate.success.n);
      cur = rateRecord(cur.count + extra.current.success.count, cur.n + extra.current.success.n);
    }
    const last = looks[looks.length - 1]!.comparison;
    const kept = last.verdict === 'better';
    const over = `over ${cand.n} and ${cur.n} held-out episodes`;
    const reason = kept ? `kept: better by ${formatDifference(last)} ${over}` : `not better: difference ${formatDifference(last)} ${over}`;
    return {
      candidate: best.candidate,
      current: { iteration: currentIteration, reward: current.reward!, run: current.run! },
      alpha_per_look: alpha,
      looks,
      kept,
      reason,
    };
  }

  async run(): Promise<LoopResult> {
    const o = this.o;
    mkdirSync(o.out, { recursive: true });
    const experimentFile = path.join(o.out, 'experiment.json');
    const settings = {
      task: o.task.id,
      steps: o.steps,
      candidates: o.candidates,
      seed: o.seed,
      start_reward: o.startReward ?? null,
      no_llm: o.noLlm ?? false,
      // Where candidates start: a checkpoint, the task's foundation (and its demonstrations), or scratch.
      start: o.train?.init ? path.resolve(o.train.init) : o.foundation ? FOUNDATION_DIR : 'scratch',
    };
    if (existsSync(experimentFile)) {
      const earlier = readRecordObject(experimentFile, "a loop's settings") as typeof settings & { iterations: number };
      for (const key of ['task', 'steps', 'candidates', 'seed', 'no_llm', 'start'] as const) {
        // Experiments recorded before a setting existed resume with its value now.
        if (!(key in earlier)) continue;
        if (earlier[key] !== settings[key])
          throw new LoopError(
            `${experimentFile} was started with ${key} = ${earlier[key]}, not ${settings[key]}: use a new --out folder, or the same settings to resume`,
          );
      }
      this.say(`resuming the experiment in ${o.out}`);
    }
    writeAtomic(this.o.out, experimentFile, json({ ...settings, iterations: o.iterations, model: o.noLlm ? null : resolveLlmConfig(o.llm).model }));

    const results: IterationResult[] = [];
    for (let i = 1; i <= o.iterations; i++) {
      const iterDir = path.join(o.out, `iteration-${i}`);
      const iterationFile = path.join(iterDir, 'iteration.json');
      const result = await cached<IterationResult>(
        this.o.out,
        iterationFile,
        async (): Promise<IterationResult> => {
          const prev = results[results.length - 1];
          if (o.noLlm) return this.patchIteration(i, iterDir, prev, results);
          const base = prev ? this.updateRequest(prev) : null;
          const request: DesignRequest = base ?? { kind: 'initial' };
          this.say(
            `iteration ${i}: ${request.kind === 'update' ? 'updating the reward from the analysis' : o.startReward && i === 1 ? `starting from ${o.startReward}` : 'designing a reward'}`,
          );
          const firstDraft = i === 1 && o.startReward ? readFileSync(o.startReward, 'utf8') : undefined;
          // With a starting reward, candidate 1 is the user's file and the others are fresh designs.
          const candidates = await eachCandidate(o.candidates, Boolean(o.train?.engine), (k) =>
            this.candidate(iterDir, k, request, k === 1 ? firstDraft : undefined),
          );
          let chosen: CandidateResult | null = null;
          for (const c of candidates) if (c.summary && (!chosen || better(c.summary, chosen.summary!))) chosen = c;
          if (chosen && o.candidates > 1) this.say(`iteration ${i}: keeping candidate ${chosen.candidate} (best evaluation success)`);
          if (chosen) writeAtomic(this.o.out, path.join(iterDir, this.rewardName), this.readInLoop(chosen.reward!));
          const analysis = chosen ? await this.analyze(iterDir, chosen) : null;
          const annotated = chosen ? designedCandidates(candidates, chosen, prev, await this.startPolicy()) : candidates;
          return {
            iteration: i,
            chosen: chosen?.candidate ?? null,
            reward: chosen ? this.rel(path.join(iterDir, this.rewardName)) : null,
            success_rate: chosen?.summary?.eval.success_rate ?? null,
            success: chosen?.summary ? heldOut(chosen.summary) : null,
            death_rate: chosen?.summary?.eval.death_rate ?? null,
            avg_steps: chosen?.summary?.eval.avg_steps ?? null,
            critic_passed: chosen?.criticPassed ?? false,
            run: chosen?.run ?? null,
            candidates: annotated,
            analysis,
          };
        },
        (r) => r.chosen !== null,
      );
      if (!result || typeof result !== 'object' || !Array.isArray(result.candidates))
        throw new LoopError(`${iterationFile}: not an iteration's record (it has no candidates list); move it away to run iteration ${i} again`);
      // Nothing trainable came out (the designer kept failing the checks): stop; running again retries it.
      if (result.chosen === null) throw new LoopError(`iteration ${i}: no candidate could be trained (${result.candidates.map((c) => c.failure).join('; ')})`);
      results.push({ ...result, analysis: this.analysisNow(result, results[results.length - 1]) });
    }
    const outcomes = suggestionOutcomes(o.out, results);
    // The fine-tuning setup as the runs recorded it (train --init's defaults unless configured otherwise).
    const hp = results
      .flatMap((it) => it.candidates)
      .map((c) => runConfig(o.out, c))
      .find((c) => c !== null)?.hyperparameters;
    const prepared = await this.startPolicy();
    const start: LoopStart = {
      ...prepared,
      fine_tuning:
        prepared.checkpoint && hp
          ? { kl_coef: Number(hp.klCoef), value_pretrain_updates: Number(hp.valuePretrainUpdates), return_norm: hp.normaliseReturns === true }
          : null,
    };
    const saved = runsSavedByProbes(o.out);
    this.say(`the probes kept ${saved} reward(s) with errors or a paid failure mode from training: ${saved} training run(s) saved`);
    const loopResult: LoopResult = {
      no_llm: o.noLlm ?? false,
      start,
      iterations: results,
      suggestion_outcomes: outcomes,
      best: bestMeasured({ iterations: results }),
      runs_saved_by_probes: saved,
    };
    writeAtomic(this.o.out, path.join(o.out, LOOP_FILES.results), json(loopResult));
    writeAtomic(this.o.out, path.join(o.out, LOOP_FILES.table), resultsTable(loopResult, o.out) + '\n');
    return loopResult;
  }
}
