// Sizes a newcomer can read: no product function over 150 lines and no product file over 800, and one PRNG.
// Today's offenders are listed with their current sizes (a ratchet: one may shrink, and should leave the list
// when it fits, but never grow); anything else over a limit fails. Function lengths come from the TypeScript
// parser (a function's lines include the functions nested in it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const PRODUCT = ['protocol', 'runner/src', 'language-server/src', 'extension/src'];
const MAX_FUNCTION_LINES = 150;
const MAX_FILE_LINES = 800;

/** Functions over the limit today, `file:name` → lines. Shrink the number when one shrinks; remove it when it fits. */
const LONG_FUNCTIONS: Record<string, number> = {};

/** Files over the limit today → lines. The world generator may stay larger: it reads as a list of features. */
const LARGE_FILES: Record<string, number> = {
  'runner/src/env/game/worldgen.ts': 1445,
};

/** Files that may hold a mulberry32 step besides seeds.ts, the one PRNG. */
const PRNG_COPIES = new Set<string>([]);

function productFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) productFiles(file, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.test.ts')) out.push(file);
  }
  return out;
}

const files = PRODUCT.flatMap((d) => productFiles(path.join(ROOT, d))).map((f) => ({
  file: path.relative(ROOT, f).split(path.sep).join('/'),
  text: readFileSync(f, 'utf8'),
}));

/** A function's name as a reader finds it: its own, its variable's or property's, or `<anonymous>` at its line. */
function functionName(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return `${functionName(node.parent, source)}.constructor`;
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return `<anonymous>@${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
}

function functionLengths(): Map<string, number> {
  const lengths = new Map<string, number>();
  for (const { file, text } of files) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const key = `${file}:${functionName(node, source)}`;
        lengths.set(key, Math.max(lengths.get(key) ?? 0, last - first + 1));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return lengths;
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Entries over `limit` that are not allowed, or that grew beyond their allowed size. */
function overLimit(sizes: Map<string, number>, limit: number, allowed: Record<string, number>): string[] {
  return [...sizes]
    .filter(([key, lines]) => lines > limit && lines > (allowed[key] ?? limit))
    .map(([key, lines]) => `${key}: ${lines} lines (${allowed[key] === undefined ? `limit ${limit}` : `allowed ${allowed[key]}: it grew`})`);
}

const longest = (sizes: Map<string, number>) => [...sizes].reduce((a, b) => (b[1] > a[1] ? b : a));

describe('sizes', () => {
  it(`no new function over ${MAX_FUNCTION_LINES} lines, and no listed one grew`, (t) => {
    const lengths = functionLengths();
    const [name, lines] = longest(lengths);
    t.diagnostic(`longest function: ${name}, ${lines} lines; ${[...lengths.values()].filter((n) => n > 100).length} over 100 lines`);
    assert.deepEqual(overLimit(lengths, MAX_FUNCTION_LINES, LONG_FUNCTIONS), []);
  });

  it(`no new file over ${MAX_FILE_LINES} lines, and no listed one grew`, (t) => {
    const sizes = new Map(files.map(({ file, text }) => [file, lineCount(text)]));
    const [name, lines] = longest(sizes);
    t.diagnostic(`largest file: ${name}, ${lines} lines`);
    assert.deepEqual(overLimit(sizes, MAX_FILE_LINES, LARGE_FILES), []);
  });

  it('one PRNG: the mulberry32 step is written only in seeds.ts', () => {
    const copies = files.filter(({ file, text }) => /0x6d2b79f5/i.test(text) && file !== 'runner/src/seeds.ts' && !PRNG_COPIES.has(file)).map((f) => f.file);
    assert.deepEqual(copies, []);
  });

  it('the checker itself: a listed offender that grew fails, one that shrank passes', () => {
    const sizes = new Map([
      ['a.ts:f', 180],
      ['b.ts:g', 140],
      ['c.ts:h', 151],
    ]);
    assert.deepEqual(overLimit(sizes, 150, { 'a.ts:f': 200, 'c.ts:h': 150 }), ['c.ts:h: 151 lines (allowed 150: it grew)']);
    assert.deepEqual(overLimit(sizes, 150, {}), ['a.ts:f: 180 lines (limit 150)', 'c.ts:h: 151 lines (limit 150)']);
  });
});
