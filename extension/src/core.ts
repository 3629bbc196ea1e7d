// The extension's editor-independent logic (no `vscode` import), so it is tested without a browser: where the
// task of a reward file comes from, how the runner's stdout becomes events, and how an analyzer patch applies.
import { parseEvent, type RunnerEvent } from '../../runner/src/events';

/** `// task: <id>` in the file's leading comment block names the task to train on. */
const TASK_HEADER = /^\s*\/\/\s*task\s*:\s*([A-Za-z0-9_.\/-]+)\s*$/;

/** Task id from the header comments (before the first line of code), or undefined. */
export function taskFromHeader(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const m = TASK_HEADER.exec(line);
    if (m) return m[1];
    const trimmed = line.trim();
    if (trimmed !== '' && !trimmed.startsWith('//') && !trimmed.startsWith('/*') && !trimmed.startsWith('*')) return undefined;
  }
  return undefined;
}

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

export class PatchError extends Error {}

interface Hunk {
  oldStart: number;
  lines: string[];
}

function parseHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  for (const line of diff.split(/\r?\n/)) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (header) {
      current = { oldStart: Number(header[1]), lines: [] };
      hunks.push(current);
    } else if (current && (line.startsWith(' ') || line.startsWith('-') || line.startsWith('+'))) {
      if (line.startsWith('---') && current.lines.length === 0) continue;
      current.lines.push(line);
    } else if (current && line === '') {
      // Some writers drop the leading space of an empty context line.
      current.lines.push(' ');
    } else if (line.startsWith('\\')) {
      // "\ No newline at end of file"
    } else {
      current = undefined;
    }
  }
  // A trailing empty line after the last hunk is the diff's own final newline, not context.
  for (const h of hunks) while (h.lines.length > 0 && h.lines[h.lines.length - 1] === ' ') h.lines.pop();
  if (hunks.length === 0) throw new PatchError('the suggestion has no hunks (@@ … @@) to apply');
  return hunks;
}

/**
 * Applies a unified diff to `text`. Each hunk must match its context and removed lines exactly (trailing
 * whitespace aside); if the file moved since the analysis, the hunk is searched for nearby, as `patch` does.
 * Throws PatchError naming the hunk that no longer applies.
 */
export function applyUnifiedDiff(text: string, diff: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const hunks = parseHunks(diff);
  const same = (a: string | undefined, b: string) => a !== undefined && a.trimEnd() === b.trimEnd();
  let shift = 0;
  hunks.forEach((hunk, index) => {
    const before = hunk.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
    const after = hunk.lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1));
    const expected = Math.max(0, hunk.oldStart - 1 + shift - (before.length === 0 ? -1 : 0));
    const matchesAt = (at: number) => at >= 0 && at + before.length <= lines.length && before.every((l, i) => same(lines[at + i], l));
    let at = -1;
    for (let d = 0; d <= lines.length; d++) {
      if (matchesAt(expected - d)) { at = expected - d; break; }
      if (matchesAt(expected + d)) { at = expected + d; break; }
    }
    if (at < 0) throw new PatchError(`hunk ${index + 1} of the patch (at line ${hunk.oldStart}) no longer matches the file`);
    lines.splice(at, before.length, ...after);
    shift += after.length - before.length + (at - expected);
  });
  return lines.join(eol);
}

const pct1 = (x: number) => (x * 100).toFixed(1);

/** A rate with its interval and count as the editor shows it: "25.0 % [17.5–34.1 %] of 120 episodes"; "—" without episodes. */
export function rateText(rate: number | null, ci95: [number, number], n: number, noun = 'episodes'): string {
  if (rate === null || n === 0) return `— (no ${noun} yet)`;
  return `${pct1(rate)} % [${pct1(ci95[0])}–${pct1(ci95[1])} %] of ${n} ${noun}`;
}

/** Training success from a progress event: over episodes that started in a window and have all ended. */
export function trainingSuccessText(e: { successRate: number | null; successCi95: [number, number]; successEpisodes: number }): string {
  return `train success ${rateText(e.successRate, e.successCi95, e.successEpisodes, 'started episodes')}`;
}
