import { escapeHtml } from '../escape';

// The report's markup. Every value reaches the page through `html`, which escapes it with `escapeHtml` (escape.ts),
// the one escape of the report's modules (a run folder is untrusted input: a name, a task, a note, even a field that
// should be a number may hold markup). Only markup that `html` built, a constant of the report's modules, or
// markup a report module built with `escapeHtml` (the playback players) is inserted as is, through `trusted`.

/** Markup that is safe to insert: built by `html`, or wrapped by `trusted`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

function insert(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(insert).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/** A template of markup: each `${value}` is escaped unless it is Html (arrays are joined, null/undefined/false insert nothing). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => (out += insert(v) + strings[i + 1]!));
  return new Html(out);
}

/** Markup by construction: a constant of the report's modules (style sheet, script), or markup built with escapeHtml. */
export const trusted = (text: string) => new Html(text);

/** `join` for markup: items and separators stay Html. */
export const joinHtml = (items: Html[], separator = '') => new Html(items.map((h) => h.text).join(separator));
