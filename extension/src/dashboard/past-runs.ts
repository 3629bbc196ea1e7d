// The workspace's past runs as the dashboard shows them, read on the extension host's side from their records
// (the webview has no file access; main.ts never imports this): summary, curves cut to a few hundred points, failed episodes' paths, and the
// analyzer's findings with the episodes they cite. Kept apart from the panel (no vscode import) so tests read
// runs exactly as the host does.
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import {
  readEpisodes,
  readMetrics,
  readSuggestions,
  readSummary,
  RUN_FILES,
  type EpisodeRecord,
  type SuggestionRecord,
  type UpdateMetrics,
} from '../../../runner/src/records';
import type { FailedPath, FindingEvidence, PastRun } from './protocol';

const MAX_PAST_RUNS = 8;
const MAX_CURVE_POINTS = 200;
const MAX_FAILED_PATHS = 20;
/** Findings of a run the dashboard lists, the episodes each cites, and the characters of a message or note. */
const MAX_FINDINGS = 12;
const MAX_EVIDENCE = 6;
const MAX_TEXT = 400;

/** Past runs under `root` (folders holding a summary.json, up to 3 levels deep: loops nest iterations), newest first. */
export function readPastRuns(root: string): PastRun[] {
  const found: { dir: string; mtime: number }[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    if (entries.includes(RUN_FILES.summary)) found.push({ dir, mtime: statSync(path.join(dir, RUN_FILES.summary)).mtimeMs });
    if (depth < 3)
      for (const e of entries)
        if (!e.startsWith('.') && statSync(path.join(dir, e), { throwIfNoEntry: false })?.isDirectory()) walk(path.join(dir, e), depth + 1);
  };
  walk(root, 0);
  found.sort((a, b) => b.mtime - a.mtime);
  const runs: PastRun[] = [];
  for (const { dir } of found.slice(0, MAX_PAST_RUNS)) {
    try {
      const summary = readSummary(dir);
      // A rollout's summary has no training or evaluation to show (the table reads both).
      if (summary?.train && summary.eval) {
        const episodes = recordedEpisodes(dir);
        // Playback re-simulates in the simulator: episodes played on a Minecraft server (mineflayer) get no ▶.
        const playable = (e: EpisodeRecord) => summary.env !== 'mineflayer' && e.actions !== undefined;
        runs.push({
          name: path.relative(root, dir) || path.basename(dir),
          dir,
          summary,
          metrics: curvePoints(dir),
          failed: readFailed(episodes, playable),
          findings: readFindings(dir, episodes, playable),
        });
      }
    } catch {
      // A run being written or a malformed summary: skip it rather than break the dashboard.
    }
  }
  return runs;
}

function curvePoints(dir: string): UpdateMetrics[] {
  const all = readMetrics(dir);
  const step = Math.ceil(all.length / MAX_CURVE_POINTS);
  return step <= 1 ? all : all.filter((_, i) => i % step === 0 || i === all.length - 1);
}

function recordedEpisodes(dir: string): EpisodeRecord[] {
  const recorded = existsSync(path.join(dir, RUN_FILES.episodes)) || existsSync(path.join(dir, RUN_FILES.failedEpisodes));
  return recorded ? readEpisodes(dir) : [];
}

function readFailed(episodes: EpisodeRecord[], playable: (e: EpisodeRecord) => boolean): FailedPath[] {
  return episodes
    .filter((e) => !e.success)
    .slice(0, MAX_FAILED_PATHS)
    .map((e) => ({
      episode: e.episode,
      steps: e.steps,
      died: e.died,
      death_cause: e.deathCause,
      path: e.path.map(([x, , z]) => [x, z] as [number, number]),
      playable: playable(e),
    }));
}

/**
 * The analyzer's findings on a run (its suggestions.json, a shared file: read through the checked reader, cut to
 * size), each with the episodes and steps it cites; an episode plays when the run recorded it with its actions.
 */
function readFindings(dir: string, episodes: EpisodeRecord[], playable: (e: EpisodeRecord) => boolean): FindingEvidence[] {
  let suggestions: SuggestionRecord[];
  try {
    suggestions = readSuggestions(dir)?.suggestions ?? [];
  } catch {
    return []; // a damaged suggestions.json: the run still shows, without findings
  }
  const byId = new Map(episodes.map((e) => [e.episode, e]));
  const cut = (t: string) => (t.length > MAX_TEXT ? `${t.slice(0, MAX_TEXT - 1)}…` : t);
  return suggestions.slice(0, MAX_FINDINGS).map((s) => ({
    id: cut(s.id),
    message: cut(s.message.split('\n')[0] ?? ''),
    evidence: (s.episodes ?? [])
      .filter((e) => Number.isInteger(e.episode) && e.episode >= 0)
      .slice(0, MAX_EVIDENCE)
      .map((e) => {
        const ep = byId.get(e.episode);
        const steps = e.steps?.every((n) => Number.isInteger(n) && n >= 0) ? e.steps : undefined;
        return { episode: e.episode, ...(steps ? { steps } : {}), note: cut(String(e.note ?? '')), playable: ep !== undefined && playable(ep) };
      }),
  }));
}
