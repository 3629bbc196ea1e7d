// Messages from the extension host to the dashboard webview. The live run arrives as the runner's own events;
// past runs arrive as their on-disk records, read by the host (the webview has no file access).
import type { RunnerEvent } from '../../../runner/src/events';
import type { PlaybackRecord, RunSummary, UpdateMetrics } from '../../../runner/src/records';

/** A failed evaluation episode reduced to what the map draws. */
export interface FailedPath {
  episode: number;
  steps: number;
  died: boolean;
  death_cause: string | null;
  /** Top-down [x, z] per step. */
  path: [number, number][];
  /** Its record carries its actions: `rewardsmith playback` can re-simulate it. */
  playable: boolean;
}

/** One of the analyzer's findings on a run, with the episodes (and steps) it cites as evidence. */
export interface FindingEvidence {
  id: string;
  /** The message's first line. */
  message: string;
  evidence: { episode: number; steps?: [number, number]; note: string; playable: boolean }[];
}

export interface PastRun {
  /** Folder name, shown as the run's label. */
  name: string;
  dir: string;
  summary: RunSummary;
  metrics: UpdateMetrics[];
  failed: FailedPath[];
  /** The analyzer's findings (suggestions.json), when the run was analysed. */
  findings: FindingEvidence[];
}

export type DashboardMessage =
  /** A new live run starts: the webview clears its live section. */
  | { type: 'live-start'; label: string }
  | { type: 'event'; event: RunnerEvent }
  | { type: 'past-runs'; runs: PastRun[] }
  /** An episode's playback is being re-simulated, has arrived, or could not be had. */
  | { type: 'playback-loading'; run: string; episode: number }
  /** `step`: open it at that step (a finding's evidence), else at the start. */
  | { type: 'playback'; run: string; record: PlaybackRecord; step?: number }
  | { type: 'playback-error'; run: string; episode: number; message: string }
  /** An improvement loop's iteration table (its results.txt, as the CLI prints it). */
  | { type: 'loop-results'; label: string; table: string };

/** Messages from the webview to the host. */
export type WebviewMessage = { type: 'ready' } | { type: 'play'; dir: string; episode: number; step?: number };
