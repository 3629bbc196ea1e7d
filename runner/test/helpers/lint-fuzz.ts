// Malformed reward files for the linter's robustness checks: the bundled rewards mutated the ways an editor
// buffer and an LLM's answer go wrong (deleted and inserted spans, truncation, unbalanced brackets, stray
// unicode and control characters, runaway nesting). Deterministic for a seed; shared by the test (a few
// hundred cases) and `npm run bench lint` (10,000 and more).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const BUNDLED_REWARDS = path.join(__dirname, '..', '..', 'rewards');

export function bundledRewards(): { name: string; text: string }[] {
  return readdirSync(BUNDLED_REWARDS)
    .filter((f) => /\.reward\.(ts|js)$/.test(f))
    .sort()
    .map((f) => ({ name: f, text: readFileSync(path.join(BUNDLED_REWARDS, f), 'utf8') }));
}

/** mulberry32: small, fast, good enough to pick mutations. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SNIPPETS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  "'",
  '`',
  '${',
  '/*',
  '*/',
  '//',
  '\n',
  ';',
  ',',
  '=>',
  'return',
  'function',
  'if (',
  'else',
  'GLOBAL_DATA[',
  "current_nearest_blocks['",
  'past_agent_positions[past_agent_positions.length - 2]',
  'async ',
  'await ',
  'export ',
  'import x from "y";',
  ' and ',
  ' not ',
  'def ',
  ':',
  '?.',
  '??=',
  '...',
  '🙂',
  'é',
  '\u202e',
  '\u0000',
  '\u001b[2J',
  '\uFEFF',
  '\ud800',
  'ß',
  '中文',
  '\t',
  '\r\n',
];

export type Mutation = 'delete' | 'insert' | 'truncate' | 'unbalanced' | 'unicode' | 'duplicate' | 'nesting';
export const MUTATIONS: readonly Mutation[] = ['delete', 'insert', 'truncate', 'unbalanced', 'unicode', 'duplicate', 'nesting'];

/** One mutated file: `steps` mutations (1–3) of `text`, the kinds applied, for a failure message. */
export function mutate(text: string, random: () => number): { text: string; kinds: Mutation[] } {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const at = () => Math.floor(random() * (text.length + 1));
  const kinds: Mutation[] = [];
  const steps = 1 + Math.floor(random() * 3);
  for (let s = 0; s < steps; s++) {
    const kind = pick(MUTATIONS);
    kinds.push(kind);
    const i = at();
    switch (kind) {
      case 'delete':
        text = text.slice(0, i) + text.slice(Math.min(text.length, i + 1 + Math.floor(random() * 80)));
        break;
      case 'insert':
        text = text.slice(0, i) + pick(SNIPPETS) + text.slice(i);
        break;
      case 'truncate':
        text = text.slice(0, i);
        break;
      case 'unbalanced':
        text = text.slice(0, i) + pick(['{', '}', '(', ')', '[', ']']).repeat(1 + Math.floor(random() * 8)) + text.slice(i);
        break;
      case 'unicode':
        text = text.slice(0, i) + String.fromCodePoint(Math.floor(random() * 0x2ffff)) + text.slice(i);
        break;
      case 'duplicate': {
        const j = at();
        text = text.slice(0, i) + text.slice(Math.min(i, j), Math.max(i, j)).slice(0, 400) + text.slice(i);
        break;
      }
      case 'nesting': {
        const n = Math.floor(random() * 1500);
        text = text.slice(0, i) + '('.repeat(n) + '1' + ')'.repeat(random() < 0.5 ? n : 0) + text.slice(i);
        break;
      }
    }
  }
  return { text, kinds };
}
