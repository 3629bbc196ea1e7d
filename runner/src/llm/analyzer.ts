// The trajectory analyzer (LLM): reads a run's statistics, the programmatic analyzer's findings and the
// paper's K = 10 failed episodes truncated to their last L = 32 steps, and answers JSON (analysis +
// suggestions, optionally anchored to reward-file lines), validated like the critic's.
import type { EpisodeRecord, RecordedStep, RunSummary } from '../records';
import type { TaskSpec } from '../tasks';
import { chatValidated, extractJsonObject, type LlmConfig, type LlmLog, type Validation } from './client';
import { contextText, numberedSource, renderTemplate } from './prompts';

/** The paper's K and L. */
export const ANALYZER_EPISODES = 10;
export const ANALYZER_STEPS = 32;
/** Nearest blocks listed for an episode's final state (the nearest ones first). */
const FINAL_NEAREST_SHOWN = 12;

export interface LlmSuggestion {
  /** `S1`, `S2`, … within one analysis; the next design prompt refers to them. */
  id: string;
  message: string;
  /** 1-based lines of the reward file it concerns. */
  line?: number;
  endLine?: number;
}

export interface LlmAnalysis {
  analysis: string;
  suggestions: LlmSuggestion[];
  model: string;
}

/** A finding of the programmatic analyzer, as the LLM and the next design prompt see it. */
export interface ProgrammaticFinding {
  message: string;
  evidence?: unknown;
  /** 1-based inclusive line range of the reward file a patch touches. */
  lines?: [number, number];
  /** Unified diff against the reward file. */
  diff?: string;
}

const round = (v: number, digits = 2) => Number(v.toFixed(digits));
const pct = (v: number) => `${round(v * 100, 1)}%`;

export function statisticsText(summary: RunSummary): string {
  const e = summary.eval;
  const causes = Object.entries(e.death_causes)
    .filter(([, n]) => n > 0)
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  return [
    `- Evaluation: ${e.episodes} episodes, success rate ${pct(e.success_rate)}${e.success ? ` (95 % CI ${pct(e.success.ci95[0])}–${pct(e.success.ci95[1])})` : ''}, death rate ${pct(e.death_rate)}${causes ? ` (causes: ${causes})` : ''}.`,
    `- Average episode length ${round(e.avg_steps, 1)} steps; average distance from start to end ${round(e.avg_distance_moved, 1)} m.`,
    `- Training: ${summary.train.frames} frames, ${summary.train.updates} updates, final mean episode return ${round(summary.train.mean_return)}, training success rate ${summary.train.success_rate === null || summary.train.success_rate === undefined ? 'not yet measured (no window of started episodes had ended)' : `${pct(summary.train.success_rate)} over ${summary.train.success?.n ?? '?'} episodes that started in a window`}.`,
    ...(summary.generalisation_gap ? [`- ${summary.generalisation_gap.message}`] : []),
  ].join('\n');
}

const fmtDict = (d: Record<string, number>) => {
  const entries = Object.entries(d);
  return entries.length === 0 ? '{}' : `{${entries.map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
};

function stepLine(s: RecordedStep): string {
  const [x, y, z, yaw, pitch] = s.position;
  return `  ${s.step} | ${s.action} | ${round(s.reward)} | (${round(x, 1)}, ${round(y, 1)}, ${round(z, 1)}) yaw ${round(yaw, 0)}° pitch ${round(pitch, 0)}° | ${fmtDict(s.inventory_change)} | ${round(s.health, 1)}`;
}

export function episodeText(ep: EpisodeRecord, steps = ANALYZER_STEPS): string {
  const outcome = ep.died ? `died${ep.deathCause ? ` (${ep.deathCause})` : ''}` : ep.truncated ? 'ran out of time' : 'ended without success';
  const nearest = Object.entries(ep.final.nearest)
    .sort((a, b) => a[1][0] - b[1][0])
    .slice(0, FINAL_NEAREST_SHOWN)
    .map(([name, [d, yaw, pitch]]) => `${name} ${round(d, 1)} m (yaw ${round(yaw)} rad, pitch ${round(pitch)} rad)`);
  return [
    `Episode ${ep.episode} (seed ${ep.seed}): ${outcome} after ${ep.steps} steps; return ${round(ep.return)}; moved ${round(ep.distanceMoved, 1)} m from the start.`,
    '  step | action | reward | position | inventory change | health',
    ...ep.lastSteps.slice(-steps).map(stepLine),
    `  final: health ${round(ep.final.health, 1)}, inventory ${fmtDict(ep.final.inventory)}, block under foot ${ep.final.blockUnderFoot}, died ${ep.final.died ? 'yes' : 'no'}`,
    `  final nearest: ${nearest.length > 0 ? nearest.join('; ') : 'nothing visible'}`,
  ].join('\n');
}

/** The failed episodes the LLM sees: the first K failures, spread over causes (deaths first, then the rest). */
export function pickFailedEpisodes(episodes: EpisodeRecord[], k = ANALYZER_EPISODES): EpisodeRecord[] {
  const failed = episodes.filter((e) => !e.success);
  const byCause = new Map<string, EpisodeRecord[]>();
  for (const e of failed) {
    const cause = e.died ? `died:${e.deathCause ?? 'other'}` : e.truncated ? 'timeout' : 'other';
    byCause.set(cause, [...(byCause.get(cause) ?? []), e]);
  }
  // Round-robin over causes so a rare failure mode is not crowded out by a common one.
  const picked: EpisodeRecord[] = [];
  const queues = [...byCause.values()];
  while (picked.length < k && queues.some((q) => q.length > 0)) {
    for (const q of queues) if (q.length > 0 && picked.length < k) picked.push(q.shift()!);
  }
  return picked.sort((a, b) => a.episode - b.episode);
}

function findingText(f: ProgrammaticFinding): string {
  const evidence = f.evidence === undefined ? '' : typeof f.evidence === 'string' ? f.evidence : JSON.stringify(f.evidence);
  return `- ${f.message}${evidence ? `\n  evidence: ${evidence.length > 400 ? evidence.slice(0, 400) + '…' : evidence}` : ''}`;
}

export function parseAnalysis(text: string, lineCount: number): Validation<Omit<LlmAnalysis, 'model'>> {
  const json = extractJsonObject(text);
  if (!json.ok) return json;
  const o = json.value;
  if (typeof o.analysis !== 'string' || o.analysis.trim() === '') return { ok: false, problem: '"analysis" must be a non-empty string' };
  if (o.suggestions !== undefined && !Array.isArray(o.suggestions)) return { ok: false, problem: '"suggestions" must be a list' };
  const clamp = (l: number) => Math.min(Math.max(Math.floor(l), 1), Math.max(lineCount, 1));
  const suggestions: LlmSuggestion[] = [];
  for (const raw of (o.suggestions as unknown[] | undefined) ?? []) {
    const s = typeof raw === 'string' ? { message: raw } : (raw as Record<string, unknown> | null);
    if (!s || typeof s.message !== 'string' || s.message.trim() === '') continue;
    const suggestion: LlmSuggestion = { id: `S${suggestions.length + 1}`, message: s.message.trim() };
    const line = Number(s.line);
    if (s.line !== undefined && s.line !== null && Number.isFinite(line)) {
      suggestion.line = clamp(line);
      const end = Number(s.end_line ?? s.endLine);
      if (Number.isFinite(end) && clamp(end) > suggestion.line) suggestion.endLine = clamp(end);
    }
    suggestions.push(suggestion);
  }
  return { ok: true, value: { analysis: o.analysis.trim(), suggestions } };
}

export interface AnalyzeOptions {
  task: TaskSpec;
  rewardSource: string;
  summary: RunSummary;
  episodes: EpisodeRecord[];
  findings: ProgrammaticFinding[];
  llm?: Partial<LlmConfig>;
  log?: LlmLog;
  signal?: AbortSignal;
}

export function analyzerPrompt(opts: Omit<AnalyzeOptions, 'llm' | 'log' | 'signal'>) {
  const failed = pickFailedEpisodes(opts.episodes);
  return [
    { role: 'system' as const, content: renderTemplate('analyzer-system', {}) },
    {
      role: 'user' as const,
      content: renderTemplate('analyzer', {
        context: contextText(opts.task),
        reward_code_numbered: numberedSource(opts.rewardSource.trimEnd()),
        statistics: statisticsText(opts.summary),
        programmatic_findings: opts.findings.length > 0 ? opts.findings.map(findingText).join('\n') : '- nothing detected',
        episode_count: String(failed.length),
        step_count: String(ANALYZER_STEPS),
        episodes: failed.length > 0 ? failed.map((e) => episodeText(e)).join('\n\n') : 'No episode failed.',
      }),
    },
  ];
}

/** Asks the analyzer LLM about a run. Throws LlmNotConfiguredError or LlmError (after retries). */
export async function analyzeWithLlm(opts: AnalyzeOptions): Promise<LlmAnalysis> {
  const lineCount = opts.rewardSource.trimEnd().split('\n').length;
  const answer = await chatValidated(analyzerPrompt(opts), (text) => parseAnalysis(text, lineCount), {
    role: 'analyzer',
    llm: opts.llm,
    log: opts.log,
    signal: opts.signal,
  });
  return { ...answer.value, model: answer.model };
}
