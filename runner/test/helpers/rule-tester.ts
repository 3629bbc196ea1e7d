// RuleTester for the reward lint rules (ESLint's pattern): each rule's test file, beside the rule, lists code
// the rule must stay quiet on and code it must flag, with the message and the preferred fix's result.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { lintText, loadPythonParser, type RewardDiagnostic, type TextEdit } from '../../src/lint/rules';
import type { LintRule } from '../../src/lint/rule';

/** A reward file around `body`, with the contract's six parameters; the body starts on line 2. */
export function reward(body: string): string {
  return `export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {\n${body}\n}\n`;
}

/** A Python reward file around `body` (indented by the caller), with the contract's six parameters; the body starts on line 2. */
export function pyReward(body: string): string {
  return `def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):\n${body}\n`;
}

export interface InvalidCase {
  name: string;
  code: string;
  /** One entry per diagnostic of this rule, in order: its 1-based line and a pattern of its message. */
  errors: { line: number; message: RegExp }[];
  /** The file after applying the first diagnostic's preferred fix (omit when there is none). */
  output?: string;
}

export function applyEdits(text: string, edits: TextEdit[]): string {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  const offset = (p: { line: number; character: number }) => (starts[p.line] ?? text.length) + p.character;
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  return text;
}

/** `language: 'python'` lints the cases as `*.reward.py` files (the rule's `python` hook). */
export function testRule(
  rule: LintRule,
  cases: { valid: { name: string; code: string }[]; invalid: InvalidCase[] },
  language: 'typescript' | 'python' = 'typescript',
): void {
  const fileName = (name: string) => `${name.replace(/\W+/g, '-')}.reward.${language === 'python' ? 'py' : 'ts'}`;
  const of = (ds: RewardDiagnostic[]) => ds.filter((d) => d.code === rule.meta.id);
  describe(`lint rule ${rule.meta.id}${language === 'python' ? ' (Python)' : ''}`, () => {
    if (language === 'python') before(() => loadPythonParser());
    it('has its metadata', () => {
      assert.ok(rule.meta.description.length > 0 && rule.meta.docs.length > 0);
    });
    for (const c of cases.valid) {
      it(`quiet: ${c.name}`, () => {
        assert.deepEqual(
          of(lintText(fileName(c.name), c.code)).map((d) => `${d.range.start.line + 1}: ${d.message}`),
          [],
        );
      });
    }
    for (const c of cases.invalid) {
      it(`flags: ${c.name}`, () => {
        const found = of(lintText(fileName(c.name), c.code));
        assert.equal(found.length, c.errors.length, found.map((d) => `${d.range.start.line + 1}: ${d.message}`).join('\n'));
        found.forEach((d, i) => {
          assert.equal(d.range.start.line + 1, c.errors[i]!.line, d.message);
          assert.match(d.message, c.errors[i]!.message);
          assert.equal(d.severity, rule.meta.severity);
        });
        if (c.output !== undefined) {
          const fix = found[0]!.fixes.find((f) => f.preferred) ?? found[0]!.fixes[0];
          assert.ok(fix, 'has a fix');
          assert.equal(applyEdits(c.code, fix.edits), c.output);
        }
      });
    }
  });
}
