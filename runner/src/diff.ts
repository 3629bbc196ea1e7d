// Unified diffs, the one implementation: the analyzer writes them (`unifiedDiff`), and the editor previews and
// applies them (`applyUnifiedDiff` for the whole text, `diffTextEdits` for LSP edits). Preview and apply use
// the same hunk search, so a patch that previews also applies. Context and removed lines must match the file
// exactly (line endings aside): a patch never lands on text it was not written for.

export class PatchError extends Error {}

interface Hunk {
  /** 1-based line of the hunk's first old line (for an insertion without context: the line it follows). */
  oldStart: number;
  /** Context and removed lines, as in the old text. */
  before: string[];
  /** Context and added lines, as in the new text. */
  after: string[];
}

/** A replacement of whole lines of the old text: lines [start, end) become `lines` (0-based). */
export interface LineEdit {
  start: number;
  end: number;
  lines: string[];
}

function parseHunks(diff: string): Hunk[] {
  const hunks: { oldStart: number; lines: string[] }[] = [];
  let current: { oldStart: number; lines: string[] } | undefined;
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
  if (hunks.length === 0) throw new PatchError('the suggestion has no hunks (@@ … @@) to apply');
  return hunks.map((h) => {
    // A trailing empty line after the last hunk is the diff's own final newline, not context.
    while (h.lines.length > 0 && h.lines[h.lines.length - 1] === ' ') h.lines.pop();
    return {
      oldStart: h.oldStart,
      before: h.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1)),
      after: h.lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1)),
    };
  });
}

/**
 * Where each hunk of `diff` applies to `text`, as line edits in `text`'s own lines. A hunk is looked for at its
 * line first, shifted by how far the previous hunk moved, then at the nearest line where it matches, as
 * `patch` does; hunks never overlap. Throws PatchError naming the first hunk that no longer matches.
 */
export function diffLineEdits(text: string, diff: string): LineEdit[] {
  const lines = text.split(/\r?\n/);
  const edits: LineEdit[] = [];
  let drift = 0;
  let searchFrom = 0;
  parseHunks(diff).forEach((hunk, index) => {
    const { before, after } = hunk;
    const expected = Math.max(0, hunk.oldStart - (before.length === 0 ? 0 : 1) + drift);
    const matchesAt = (at: number) => at >= searchFrom && at + before.length <= lines.length && before.every((l, i) => lines[at + i] === l);
    let at = -1;
    for (let d = 0; d <= lines.length && at < 0; d++) {
      if (matchesAt(expected - d)) at = expected - d;
      else if (matchesAt(expected + d)) at = expected + d;
    }
    if (at < 0) throw new PatchError(`hunk ${index + 1} of the patch (at line ${hunk.oldStart}) no longer matches the file`);
    edits.push({ start: at, end: at + before.length, lines: after });
    drift += at - expected;
    searchFrom = at + before.length;
  });
  return edits;
}

/** `text` with `diff` applied (its line endings kept). Throws PatchError when a hunk no longer matches. */
export function applyUnifiedDiff(text: string, diff: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  for (const e of diffLineEdits(text, diff).reverse()) lines.splice(e.start, e.end - e.start, ...e.lines);
  return lines.join(eol);
}

/** The diff as LSP text edits (whole lines, 0-based), or undefined when it no longer applies. */
export function diffTextEdits(
  text: string,
  diff: string,
): { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string }[] | undefined {
  let edits: LineEdit[];
  try {
    edits = diffLineEdits(text, diff);
  } catch (err) {
    if (err instanceof PatchError) return undefined;
    throw err;
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  return edits.map((e) => {
    // An edit that reaches the last line (which has no newline after it) replaces up to the end of the text.
    const toEnd = e.end >= lines.length;
    const end = toEnd ? { line: lines.length - 1, character: lines[lines.length - 1]!.length } : { line: e.end, character: 0 };
    const newText = toEnd ? e.lines.join(eol) : e.lines.map((l) => l + eol).join('');
    return { range: { start: { line: e.start, character: 0 }, end }, newText };
  });
}

/** Line-based unified diff (LCS; reward files are a few hundred lines at most) with 3 lines of context. */
export function unifiedDiff(oldText: string, newText: string, name: string): { text: string; oldRange: [number, number] } {
  const split = (t: string) => {
    const lines = t.split(/\r?\n/);
    if (lines[lines.length - 1] === '') lines.pop();
    return lines;
  };
  const a = split(oldText);
  const b = split(newText);
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = LCS length of a[i..] and b[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  type Op = { op: ' ' | '-' | '+'; line: string; ai: number; bi: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ op: ' ', line: a[i]!, ai: i++, bi: j++ });
    else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push({ op: '-', line: a[i]!, ai: i++, bi: j });
    else ops.push({ op: '+', line: b[j]!, ai: i, bi: j++ });
  }
  const CONTEXT = 3;
  const out = [`--- a/${name}`, `+++ b/${name}`];
  let firstChanged = Infinity;
  let lastChanged = -Infinity;
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.op === ' ') {
      k++;
      continue;
    }
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    // Extend the hunk while the next change is within 2 × CONTEXT unchanged lines.
    for (;;) {
      while (end < ops.length && ops[end]!.op !== ' ') end++;
      let next = end;
      while (next < ops.length && ops[next]!.op === ' ') next++;
      if (next < ops.length && next - end <= 2 * CONTEXT) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + CONTEXT);
    const hunk = ops.slice(start, stop);
    const oldLen = hunk.filter((o) => o.op !== '+').length;
    const newLen = hunk.filter((o) => o.op !== '-').length;
    const oldStart = hunk[0]!.ai + (oldLen === 0 ? 0 : 1);
    const newStart = hunk[0]!.bi + (newLen === 0 ? 0 : 1);
    out.push(`@@ -${oldStart},${oldLen} +${newStart},${newLen} @@`);
    for (const o of hunk) {
      out.push(o.op + o.line);
      // A last line without a newline is marked, or `patch` would add one (or refuse the hunk).
      const lastOld = o.op !== '+' && o.ai === n - 1 && !/\n$/.test(oldText);
      const lastNew = o.op !== '-' && o.bi === m - 1 && !/\n$/.test(newText);
      if (lastOld || lastNew) out.push('\\ No newline at end of file');
      if (o.op !== ' ') {
        firstChanged = Math.min(firstChanged, o.ai + 1);
        lastChanged = Math.max(lastChanged, o.op === '-' ? o.ai + 1 : o.ai);
      }
    }
    k = stop;
  }
  if (firstChanged === Infinity) return { text: '', oldRange: [1, 1] };
  const range: [number, number] = [Math.min(firstChanged, n), Math.max(Math.min(lastChanged, n), Math.min(firstChanged, n))];
  return { text: out.join('\n') + '\n', oldRange: range };
}
