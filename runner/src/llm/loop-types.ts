// What the improvement loop takes and records: its options, its two contacts with the training code, and the
// shape of results.json (iterations, candidates, decisions, suggestion outcomes). `loop.ts` runs it,
// `loop-results.ts` reports it, the editor reads it.
import type { RunnerEvent } from '../events';
import type { RateRecord, RunSummary } from '../records';
import type { RateComparison } from '../stats';
import type { Engine } from '../sweep/engine';
import type { TaskSpec } from '../tasks';
import type { LlmAnalysis, ProgrammaticFinding } from './analyzer';
import type { LlmConfig } from './client';
import type { RewardLanguage } from './prompts';
import type { TrainOutcome, TrainStepOptions } from './train-step';

export interface LoopOptions {
  task: TaskSpec;
  iterations: number;
  out: string;
  /** Rewards sampled per iteration; the best by evaluation success is kept. */
  candidates: number;
  /** Training budget per candidate, environment frames. */
  steps: number;
  seed: number;
  /** A reward file to start from instead of the designer's first design. */
  startReward?: string;
  /** The rewards' language (the designer writes it, the loop's reward files have its extension): default the start reward's. */
  language?: RewardLanguage;
  /** Extra `train` options passed through (envs, eval episodes, backend; init: start every candidate from this checkpoint). */
  train?: { envs?: number; evalEpisodes?: number; backend?: string; init?: string; engine?: Engine; taskArg?: string; signal?: AbortSignal };
  /**
   * Without `train.init`: build the task's foundation policy once in DIR/foundation (`pretrain` with these
   * demonstrations, resumable) and fine-tune every candidate from it. Absent: candidates train from scratch.
   */
  foundation?: { demos?: number };
  llm?: Partial<LlmConfig>;
  /**
   * No LLM: each iteration's candidates are sets of the analyzer's patches to the current reward; the best is
   * kept only when the loop's decision rule (`DECISION_LOOKS`) shows it better than the reward in force.
   */
  noLlm?: boolean;
  emit?: (event: RunnerEvent) => void;
  /** Progress lines (the command shows them on stderr and, with --events, sends each as a `log` event). */
  say?: (line: string) => void;
  /** How candidates are trained and evaluated again (tests script outcomes here); the real train and evaluation by default. */
  runSteps?: RunSteps;
}

/** A trained run's policy evaluated on more held-out worlds (the decision's extra looks). */
export interface ExtraEvaluation {
  runDir: string;
  task: TaskSpec;
  episodes: number;
  /** Seed of the evaluation stream; both rewards of a look share it. */
  seed: number;
  /** Worlds not to evaluate on: both runs' training worlds and every world evaluated before. */
  excludeSeeds: number[];
  /** Folder for the episode records. */
  out: string;
  backend?: string;
}

/** Training one candidate and evaluating a trained policy again: the loop's two contacts with the training code. */
export interface RunSteps {
  train(o: TrainStepOptions): Promise<TrainOutcome>;
  evaluate(o: ExtraEvaluation): Promise<{ success: RateRecord; death: RateRecord; seeds: number[] }>;
}

export interface CandidateResult {
  candidate: number;
  /** Reward file trained on (relative to the experiment folder), or null when no candidate became trainable. */
  reward: string | null;
  criticPassed: boolean;
  executionFixes: number;
  run: string | null;
  summary: RunSummary | null;
  failure: string | null;
  /** No-LLM loop: the analyzer suggestions (ids in the previous run's suggestions.json) this candidate applies. */
  applied?: string[];
  /** Held-out success over every episode it was evaluated on: its run's evaluation, plus a decision's extra looks. */
  success?: RateRecord | null;
  /** Its difference to the reward in force (candidate − current) by the decision rule; null without one (iteration 1). */
  versus_current?: RateComparison | null;
  /** Its difference to the starting policy when it is worse than it by the same rule (a fine-tuning that lost ground). */
  below_start?: RateComparison | null;
  /** "kept", "not better: difference …", "not kept: candidate 2 did better", "failed: …". */
  decision?: string;
}

/** One look of a decision: both rewards' held-out success so far and their difference. */
export interface DecisionLook {
  candidate: RateRecord;
  current: RateRecord;
  comparison: RateComparison;
}

/** How the no-LLM loop decided whether an iteration's best candidate replaces the reward in force. */
export interface IterationDecision {
  candidate: number;
  /** The reward in force: the iteration that trained it and its run. */
  current: { iteration: number; reward: string; run: string };
  /** One-sided significance of each look (5 % / (looks × candidates)). */
  alpha_per_look: number;
  looks: DecisionLook[];
  kept: boolean;
  reason: string;
}

export interface SuggestionRecord {
  id: string;
  source: 'llm' | 'analyzer';
  message: string;
  line?: number;
  endLine?: number;
  diff?: string;
}

export interface SuggestionOutcome extends SuggestionRecord {
  /** The iteration whose analysis made it, and the run analysed. */
  iteration: number;
  analysed_run: string | null;
  /** Every later candidate that applied it, with its measured success, its difference to the reward in force and whether it was kept. */
  applied_in: { iteration: number; candidate: number; success: RateRecord | null; versus_current: RateComparison | null; kept: boolean }[];
  /** Some candidate applied it; false: none did; null: no later candidate said what it applied. */
  applied: boolean | null;
  /** A candidate that applied it was kept as better than the reward in force; null if not applied. */
  helped: boolean | null;
}

export interface IterationResult {
  iteration: number;
  chosen: number | null;
  reward: string | null;
  /** Held-out success of the iteration's reward (its evaluation), with count, episodes and Wilson 95 % interval. */
  success_rate: number | null;
  success?: RateRecord | null;
  death_rate: number | null;
  avg_steps: number | null;
  critic_passed: boolean;
  /** No-LLM loop: the kept reward is the previous one (no candidate was shown better than it). */
  kept_previous?: boolean;
  /** No-LLM loop: how the best candidate was compared with the reward in force (null in iteration 1). */
  decision?: IterationDecision | null;
  /** The run of the reward in force after this iteration (the one its analysis is of). */
  run?: string | null;
  candidates: CandidateResult[];
  analysis: { llm: LlmAnalysis | null; findings: ProgrammaticFinding[]; suggestions: SuggestionRecord[] } | null;
}

/** The policy every candidate starts from, with the fine-tuning setup `train --init` applies to it. */
export interface LoopStart {
  /** foundation: the task's behaviour-cloned policy the loop built; init: a checkpoint the user gave; scratch: none. */
  kind: 'foundation' | 'init' | 'scratch';
  /** The checkpoint folder (absolute), null from scratch. */
  checkpoint: string | null;
  /** Its held-out success where it has an evaluation (a foundation always has one). */
  held_out: RateRecord | null;
  /** Demonstration episodes behind a foundation the loop built. */
  demos: number | null;
  /** What fine-tuning from it adds (the paper's setup): KL weight to it, value pre-training updates, return normalisation. */
  fine_tuning: { kl_coef: number; value_pretrain_updates: number; return_norm: boolean } | null;
}

export interface LoopResult {
  /** Run with `--no-llm`: no critic reviewed any candidate (each iteration's critic_passed is then false). */
  no_llm: boolean;
  start?: LoopStart;
  iterations: IterationResult[];
  suggestion_outcomes: SuggestionOutcome[];
  /** The best reward measured in the whole loop (highest held-out success), kept or not. */
  best?: { iteration: number; candidate: number; reward: string; success: RateRecord; kept: boolean; decision: string } | null;
  /** Candidates the probe screen refused before training (see screen.ts): training runs saved. */
  runs_saved_by_probes?: number;
}
