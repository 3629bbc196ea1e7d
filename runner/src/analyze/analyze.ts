// `rewardsmith analyze RUN_DIR [--reward FILE] [--events ndjson]`: the trajectory analyzer that needs no LLM.
// Reads a run's evaluation episodes, finds failure patterns (findings.ts), turns each into a suggestion with
// evidence and, where the fix is code, a patch to the reward file that parses and lints clean (patches.ts);
// writes RUN_DIR/suggestions.json and prints a summary (or streams `suggestion` events).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeAtomic } from '../files';
import { CommandError, noteRunFolder, parseCommandArgs, requireExisting, runCommand, terminalText } from '../args';
import { makeEvent, type RunnerEvent } from '../events';
import { formatRate, wilson } from '../stats';
import {
  readEpisodes,
  readRunRewardCopy,
  readSuggestions,
  readSummary,
  runTaskRef,
  RUN_FILES,
  RunRecordError,
  type RewardCopy,
  type RunSummary,
  type SuggestionRecord,
  type SuggestionsRecord,
} from '../records';
import { resolveTask, type TaskSpec } from '../tasks';
import { findFailures, type EpisodeEvidence, type Finding, type FindingKind, type RewardFacts } from './findings';
import { denseLines, patchReward, PatchUnavailable, preparePatches, type PatchRequest } from './patches';
import { rerunReward } from './rerun';

/** A suggestion as the analyzer builds it: suggestions.json's record, with the analyzer's own types. */
export interface Suggestion extends SuggestionRecord {
  kind: FindingKind;
  episodes: EpisodeEvidence[];
  /** The change the diff makes, as a request patchReward understands (the no-LLM loop composes these). */
  patch?: PatchRequest;
}

export interface Analysis extends SuggestionsRecord {
  suggestions: Suggestion[];
}

/** `DIR/suggestions.json` as `rewardsmith analyze` writes it (records.ts checks it); undefined when the run has none. */
export function readAnalysis(runDir: string): Analysis | undefined {
  return readSuggestions(runDir) as Analysis | undefined;
}

/** The run's task from its summary (its task file when it had one, else its built-in id), or why it cannot be had. */
function taskOf(summary: RunSummary | undefined): { task?: TaskSpec; error?: string } {
  if (!summary?.task) return {};
  try {
    return { task: resolveTask(runTaskRef(summary)) };
  } catch (err) {
    // A task file that moved or broke: the target-based findings need the task's names, everything else works.
    return { error: `${runTaskRef(summary)}: ${(err as Error).message}` };
  }
}

/**
 * The reward file to patch and its text: the one given, else the run's copy (`copy`, read checked within the
 * run folder); a run that recorded a reward but holds no copy needs it given.
 */
function rewardFor(
  runDir: string,
  summary: RunSummary | undefined,
  copy: RewardCopy | undefined,
  given: string | undefined,
): { file: string; text: string } | undefined {
  const read = (file: string) => ({ file, text: readFileSync(file, 'utf8') });
  if (given) {
    if (!existsSync(given)) throw new RunRecordError(`${given}: reward file not found`);
    return read(given);
  }
  if (copy) return copy;
  // The reward_file the summary names is not read on its word (the folder may be someone else's): --reward names it.
  if (summary?.reward_file)
    throw new RunRecordError(
      `${path.join(runDir, RUN_FILES.summary)}: the run has no reward copy (${RUN_FILES.rewardCopy} or ${RUN_FILES.pythonRewardCopy}); name the reward it trained on: --reward FILE`,
    );
  return undefined;
}

/** Whether `text` is the reward the run's episodes were recorded with (its summary's hash, else its copy). */
function isRecordedReward(summary: RunSummary | undefined, copy: RewardCopy | undefined, text: string): boolean {
  if (summary?.reward_sha256) return createHash('sha256').update(text).digest('hex') === summary.reward_sha256;
  return !copy || copy.text === text;
}

function evidenceText(items: EpisodeEvidence[]): string {
  return items.map((e) => `episode ${e.episode} (seed ${e.seed})${e.steps ? `, steps ${e.steps[0]}–${e.steps[1]}` : ''}: ${e.note}`).join('\n');
}

export function toSuggestion(f: Finding, reward: { file: string; text: string } | undefined, mainDeathCause: string | null): Suggestion {
  const s: Suggestion = {
    id: f.id,
    kind: f.kind,
    share: f.share,
    message: `${f.id === `death-${mainDeathCause}` ? `Main death cause: ${mainDeathCause}. ` : ''}${f.message} ${f.suggestion}`,
    evidence: evidenceText(f.evidence),
    episodes: f.evidence,
    episode_ids: f.episodeIds,
  };
  if (f.noPatch) s.patchUnavailable = f.noPatch;
  if (!reward) {
    if (f.patch) s.patchUnavailable = 'no reward file (pass --reward FILE)';
    return s;
  }
  if (f.patch?.kind === 'hazard-penalty') {
    // The reward may already handle the hazard; the deaths say that handling is not enough, so point at it.
    const lines = reward.text.split(/\r?\n/);
    const mentions = lines.flatMap((l, i) =>
      f.patch!.kind === 'hazard-penalty' && f.patch!.names.some((n) => l.includes(`'${n}'`) || l.includes(`"${n}"`)) ? [i + 1] : [],
    );
    if (mentions.length > 0)
      s.message += ` The reward already reads ${f.patch.names.length === 1 ? f.patch.names[0] : 'these names'} (line ${mentions.slice(0, 3).join(', ')}), and the agents died anyway: that check fires too late or too rarely.`;
  }
  if (f.patch) {
    try {
      const p = patchReward(reward.file, reward.text, f.patch);
      s.diff = p.diff;
      s.lines = p.lines;
      s.patch = f.patch;
    } catch (err) {
      if (!(err instanceof PatchUnavailable)) throw err;
      s.patchUnavailable = err.message;
    }
  }
  if (!s.lines) {
    const lines = denseLines(reward.file, reward.text);
    if (lines) s.lines = lines;
  }
  return s;
}

/** Analyses a finished run folder; `rewardFile` is the file the patches are made against. */
export async function analyzeRun(runDir: string, opts: { rewardFile?: string; task?: TaskSpec } = {}): Promise<Analysis> {
  const summary = readSummary(runDir);
  const episodes = readEpisodes(runDir);
  const resolved = opts.task ? { task: opts.task } : taskOf(summary);
  const task = resolved.task;
  // The run's copy is read once, checked (no link out of the run folder); its text is what is compared and re-run.
  const copy = readRunRewardCopy(runDir);
  const reward = rewardFor(runDir, summary, copy, opts.rewardFile);
  const file = reward?.file;
  if (file) await preparePatches(file);
  const failed = episodes.filter((e) => !e.success);
  const deathCauses: Record<string, number> = {};
  for (const e of episodes) if (e.died) deathCauses[e.deathCause ?? 'other'] = (deathCauses[e.deathCause ?? 'other'] ?? 0) + 1;
  const main = Object.entries(deathCauses).sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  // A rollout without a reward (a random policy, say) records zeros; the reward's sign then means nothing.
  const rewarded = !summary || !!summary.reward_file || copy !== undefined;
  let facts: RewardFacts | undefined;
  let rerunError: string | undefined;
  if (reward && rewarded) {
    facts = { names: namesRead(reward.text) };
    if (task && failed.length > 0) {
      // Another reward than the episodes were recorded with (`--reward` after a patch): their recorded
      // returns are not this reward's, so every episode is re-run and its returns compared instead.
      const recordedWith = isRecordedReward(summary, copy, reward.text);
      const r = await rerunReward(reward.file, recordedWith ? failed : episodes, task.attack, reward.text);
      if ('error' in r) rerunError = r.error;
      else {
        facts = { ...facts, rerun: r.steps, rerunSource: 'sandbox' };
        if (!recordedWith) facts.returns = new Map([...r.steps].map(([id, steps]) => [id, steps.reduce((t, s) => t + s.reward, 0)]));
      }
    }
  }
  const findings = findFailures(episodes, task, rewarded, facts);
  const explained = new Set(findings.flatMap((f) => f.episodeIds));
  const causes: Record<string, number> = {};
  for (const f of findings) causes[f.kind] = (causes[f.kind] ?? 0) + f.episodeIds.length;
  return {
    runDir,
    task: summary?.task ?? null,
    rewardFile: file ?? null,
    episodes: episodes.length,
    failed: failed.length,
    successRate: (episodes.length - failed.length) / episodes.length,
    deathRate: episodes.filter((e) => e.died).length / episodes.length,
    deathCauses,
    mainDeathCause: main,
    failed_episodes: failed.length,
    explained_episodes: failed.filter((e) => explained.has(e.episode)).length,
    unexplained_episode_ids: failed.filter((e) => !explained.has(e.episode)).map((e) => e.episode),
    causes,
    ...(rerunError ? { rerunError } : {}),
    ...(resolved.error ? { taskError: resolved.error } : {}),
    suggestions: findings.map((f) => toSuggestion(f, reward, main)),
  };
}

/** Block, item and mob names the reward file reads: quoted strings and property names. */
export function namesRead(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/['"`]([a-z][a-z0-9_]*)['"`]|\.([a-z][a-z0-9_]*)\b/g)) out.add(m[1] ?? m[2]!);
  return out;
}

/** "68 of 75 failed episodes explained (91 %)". */
export function coverageText(a: Pick<Analysis, 'failed_episodes' | 'explained_episodes'>): string {
  if (a.failed_episodes === 0) return 'no failed episodes to explain';
  return `${a.explained_episodes} of ${a.failed_episodes} failed episodes explained (${Math.round((100 * a.explained_episodes) / a.failed_episodes)} %)`;
}

export function formatAnalysis(a: Analysis): string {
  const causes = Object.entries(a.deathCauses)
    .sort((x, y) => y[1] - x[1])
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  const out = [
    `Run ${a.runDir}${a.task ? ` (${a.task})` : ''}: success ${formatRate(wilson(a.episodes - a.failed, a.episodes), 'evaluation episodes')}, deaths ${formatRate(wilson(Math.round(a.deathRate * a.episodes), a.episodes), 'evaluation episodes')}${causes ? ` (${causes})` : ''}.`,
  ];
  if (a.mainDeathCause) out.push(`Main death cause: ${a.mainDeathCause}.`);
  const kinds = Object.entries(a.causes)
    .sort((x, y) => y[1] - x[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  out.push(`Coverage: ${coverageText(a)}${kinds ? `; causes: ${kinds}` : ''}.`);
  if (a.unexplained_episode_ids.length > 0)
    out.push(
      `Unexplained: episode${a.unexplained_episode_ids.length === 1 ? '' : 's'} ${a.unexplained_episode_ids.slice(0, 12).join(', ')}${a.unexplained_episode_ids.length > 12 ? ', …' : ''}.`,
    );
  if (a.taskError) out.push(`The run's task could not be read, so findings about its targets are missing: ${a.taskError}.`);
  if (a.rerunError) out.push(`The reward was not re-run on the recorded steps: ${a.rerunError}.`);
  if (a.suggestions.length === 0) out.push('No failure pattern found.');
  a.suggestions.forEach((s, i) => {
    out.push('', `${i + 1}. [${s.id}] (${s.episode_ids.length} failed episode${s.episode_ids.length === 1 ? '' : 's'}) ${s.message}`);
    for (const e of s.episodes.slice(0, 3)) out.push(`   - episode ${e.episode}${e.steps ? ` steps ${e.steps[0]}–${e.steps[1]}` : ''}: ${e.note}`);
    if (s.episodes.length > 3) out.push(`   - … ${s.episodes.length - 3} more in suggestions.json`);
    if (s.diff)
      out.push(
        `   Patch (lines ${s.lines![0]}–${s.lines![1]} of ${a.rewardFile}):`,
        ...s.diff
          .trimEnd()
          .split('\n')
          .map((l) => `     ${l}`),
      );
    else if (s.patchUnavailable) out.push(`   No patch: ${s.patchUnavailable}.`);
  });
  return out.join('\n') + '\n';
}

export const ANALYZE_SPEC = {
  command: 'analyze',
  summary: `Finds failure patterns in RUN_DIR/${RUN_FILES.episodes} (deaths by cause, standing still, back-and-forth,
extreme pitch, time-outs without the target, tools worn out, bedrock attacked, one-signed rewards), writes
RUN_DIR/${RUN_FILES.suggestions} with evidence and patches to the reward file, and prints a summary.`,
  positionals: 'RUN_DIR',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    reward: {
      type: 'string',
      valueName: 'FILE',
      description: `reward file to patch (default: RUN_DIR/${RUN_FILES.rewardCopy} or ${RUN_FILES.pythonRewardCopy})`,
    },
    events: { type: 'string', choices: ['ndjson'], description: 'stream suggestion events on stdout (the summary goes to stderr)' },
  },
} as const;

export async function analyzeCommand(argv: string[]): Promise<number> {
  return runCommand('analyze', () => analyzeMain(argv));
}

async function analyzeMain(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(ANALYZE_SPEC, argv);
  const runDir = requireExisting(positionals[0]!, 'run folder');
  const rewardFile = values.reward;
  const events = values.events === 'ndjson';
  const emit = (e: RunnerEvent) => process.stdout.write(JSON.stringify(e) + '\n');
  let analysis: Analysis;
  try {
    analysis = await analyzeRun(runDir, rewardFile ? { rewardFile } : {});
  } catch (err) {
    if (!(err instanceof RunRecordError)) throw err;
    if (events) emit(makeEvent({ type: 'log', level: 'error', message: err.message }));
    throw new CommandError(err.message);
  }
  const out = path.join(runDir, RUN_FILES.suggestions);
  writeAtomic(runDir, out, JSON.stringify({ version: 1, ...analysis }, null, 2) + '\n');
  // Diffs quote the reward file, which a model may have written: no control sequence reaches the terminal.
  const text = terminalText(formatAnalysis(analysis) + `\nWrote ${out}\n`);
  if (events) {
    for (const s of analysis.suggestions) {
      emit(makeEvent({ type: 'suggestion', id: s.id, message: s.message, ...(s.lines ? { lines: s.lines } : {}), ...(s.diff ? { diff: s.diff } : {}) }));
    }
    emit(makeEvent({ type: 'log', level: 'info', message: `analyzer: ${analysis.suggestions.length} suggestion(s) written to ${out}` }));
    process.stderr.write(text);
  } else {
    process.stdout.write(text);
  }
  noteRunFolder(runDir, events);
  return 0;
}
