// The extension's editor-independent logic (no `vscode` import), so it is tested without a browser: where the
// entry line of a reward file is and how the runner's stdout becomes events.
import { parseEvent, type RunnerEvent } from '../../runner/src/events';
import type { PlaybackRecord } from '../../runner/src/records';
import { percent } from '../../runner/src/stats';

/** 0-based line of the reward's entry point (`reward_function`, else `dense`), where the CodeLens goes. */
export function rewardEntryLine(text: string): number | undefined {
  const lines = text.split(/\r?\n/);
  for (const name of ['reward_function', 'dense']) {
    const decl = new RegExp(`^\\s*(export\\s+)?(default\\s+)?(async\\s+)?(function\\s*\\*?\\s*${name}\\b|(const|let|var)\\s+${name}\\s*=)`);
    const i = lines.findIndex((l) => decl.test(l));
    if (i >= 0) return i;
  }
  return undefined;
}

/**
 * Splits a child's stdout into lines as chunks arrive and hands each runner event on; anything else on
 * stdout (a library's stray print) goes to `other` so it still reaches the output channel.
 */
export class NdjsonEventReader {
  private pending = '';
  constructor(
    private readonly onEvent: (e: RunnerEvent) => void,
    private readonly other: (line: string) => void,
  ) {}

  push(chunk: string): void {
    this.pending += chunk;
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      this.line(this.pending.slice(0, nl).replace(/\r$/, ''));
      this.pending = this.pending.slice(nl + 1);
    }
  }

  /** Call when the stream ends: a last line without a newline is still an event. */
  end(): void {
    if (this.pending !== '') this.line(this.pending);
    this.pending = '';
  }

  private line(line: string): void {
    if (line.trim() === '') return;
    const e = parseEvent(line);
    if (e) this.onEvent(e);
    else this.other(line);
  }
}

/** A rate with its interval and count as the editor shows it: "25.0 % [17.5–34.1 %] of 120 episodes"; "—" without episodes. */
export function rateText(rate: number | null, ci95: [number, number], n: number, noun = 'episodes'): string {
  if (rate === null || n === 0) return `— (no ${noun} yet)`;
  return `${percent(rate)} % [${percent(ci95[0])}–${percent(ci95[1])} %] of ${n} ${noun}`;
}

/** Training success (a progress event's or metrics.ndjson's `success`): over episodes that started in a window and have all ended. */
export function trainingSuccessText(success: { rate: number | null; ci95: [number, number]; n: number }): string {
  return `train success ${rateText(success.rate, success.ci95, success.n, 'started episodes')}`;
}

/** Most frames a playback may bring to the dashboard, and the most text its JSON may take. */
export const PLAYBACK_LIMITS = { frames: 5000, chars: 32 * 2 ** 20 } as const;

/**
 * `rewardsmith playback --format json` output, checked before it reaches the webview: the version, the frame
 * size and count, one row per frame, a base64 PNG. Throws an Error saying what is wrong.
 */
export function parsePlaybackRecord(text: string): PlaybackRecord {
  if (text.length > PLAYBACK_LIMITS.chars) throw new Error(`the playback is ${text.length} characters, more than ${PLAYBACK_LIMITS.chars}`);
  let r: Partial<PlaybackRecord>;
  try {
    r = JSON.parse(text) as Partial<PlaybackRecord>;
  } catch (err) {
    throw new Error(`the runner's playback is not JSON (${(err as Error).message})`);
  }
  if (!r || typeof r !== 'object' || r.version !== 1) throw new Error('not a playback record of version 1');
  const int = (v: unknown, max: number) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max;
  if (!int(r.width, 512) || !int(r.height, 512) || !int(r.frame_count, PLAYBACK_LIMITS.frames) || !int(r.episode, 1e9) || !int(r.steps, 1e9))
    throw new Error('the playback record has no valid frame size, frame count, episode or steps');
  if (!Array.isArray(r.rows) || r.rows.length !== r.frame_count) throw new Error('the playback record needs one timeline row per frame');
  if (typeof r.frames_png !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(r.frames_png)) throw new Error('the playback record has no base64 PNG of its frames');
  if (!Array.isArray(r.notes) || !Array.isArray(r.remarks)) throw new Error('the playback record lacks notes or remarks');
  return r as PlaybackRecord;
}
