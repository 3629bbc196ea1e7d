// The TypeScript server plugin on TypeScript's own LanguageService (the one tsserver gives it): on a reward
// file, nothing TypeScript offers may delete, prefix, restructure or rename reward_function's parameters,
// and those parameters are not reported as unused; other fixes and other files are left alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import ts from 'typescript';
import init, { contractSafeLanguageService, RENAME_REFUSED } from '../src/ts-plugin';

const fixture = readFileSync(new URL('fixtures/unused-parameters.reward.ts', import.meta.url), 'utf8');

/** A LanguageService over one in-memory file, with the options VS Code's implicit project uses. */
function serviceFor(fileName: string, text: string): ts.LanguageService {
  const files = new Map([[fileName, text]]);
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => [...files.keys()],
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => {
      const t = files.get(f) ?? ts.sys.readFile(f);
      return t === undefined ? undefined : ts.ScriptSnapshot.fromString(t);
    },
    getCompilationSettings: () => ({ target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, allowJs: true, strict: false, noEmit: true }),
    getCurrentDirectory: () => '/',
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => files.has(f) || ts.sys.fileExists(f),
    readFile: (f) => files.get(f) ?? ts.sys.readFile(f),
  };
  return ts.createLanguageService(host);
}

const REWARD = '/ws/approach-tree.reward.ts';
const raw = serviceFor(REWARD, fixture);
const wrapped = contractSafeLanguageService(ts, raw);
/** Where `needle` first occurs in the code (from the helper on: the header comments name the parameters too). */
const at = (needle: string) => {
  const i = fixture.indexOf(needle, fixture.indexOf('function closer'));
  assert.ok(i >= 0, needle);
  return i;
};
const FORMAT = ts.getDefaultFormatCodeSettings();
const fixesAt = (service: ts.LanguageService, name: string) => {
  const start = at(name);
  return service.getCodeFixesAtPosition(REWARD, start, start + name.length, [6133], FORMAT, {});
};
const unusedAt = (service: ts.LanguageService) =>
  service
    .getSuggestionDiagnostics(REWARD)
    .filter((d) => d.code === 6133)
    .map((d) => fixture.slice(d.start!, d.start! + d.length!));
/** The reward_function line after applying some text changes (to see what a fix would do to the contract). */
const signatureAfter = (changes: readonly ts.FileTextChanges[]) => {
  let text = fixture;
  const edits = changes.flatMap((c) => c.textChanges).sort((a, b) => b.span.start - a.span.start);
  for (const e of edits) text = text.slice(0, e.span.start) + e.newText + text.slice(e.span.start + e.span.length);
  return /export function reward_function\(([^)]*)\)/.exec(text)?.[1];
};
const CONTRACT = 'current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA';

describe('the TypeScript plugin on a reward file', () => {
  it("does not report reward_function's unread parameters as unused (they would be faded), but still an unused local", () => {
    // TypeScript alone reports them: the plugin is what hides them.
    assert.deepEqual(unusedAt(raw).sort(), ['GLOBAL_DATA', 'inventory_change', 'past_agent_positions', 'unused_threshold']);
    assert.deepEqual(unusedAt(wrapped), ['unused_threshold']);
  });

  it('offers no fix that removes or prefixes a contract parameter', () => {
    const before = fixesAt(raw, 'inventory_change');
    assert.ok(
      before.some((f) => f.fixId === 'unusedIdentifier_delete') && before.some((f) => f.fixId === 'unusedIdentifier_prefix'),
      `TypeScript alone offers: ${before.map((f) => f.description).join('; ')}`,
    );
    for (const name of ['inventory_change', 'past_agent_positions', 'GLOBAL_DATA']) assert.deepEqual(fixesAt(wrapped, name), [], name);
  });

  it('keeps an unused local\'s own fix, without a "Delete all unused declarations" that would take the parameters along', () => {
    const rawFix = fixesAt(raw, 'unused_threshold').find((f) => f.fixId === 'unusedIdentifier_delete');
    assert.ok(rawFix?.fixAllDescription, 'TypeScript alone offers the fix-all');
    const all = raw.getCombinedCodeFix({ type: 'file', fileName: REWARD }, 'unusedIdentifier_delete', FORMAT, {});
    assert.notEqual(signatureAfter(all.changes), CONTRACT, 'TypeScript alone would delete parameters');

    const fixes = fixesAt(wrapped, 'unused_threshold');
    const remove = fixes.find((f) => /Remove unused declaration for: 'unused_threshold'/.test(f.description));
    assert.ok(remove, fixes.map((f) => f.description).join('; '));
    assert.equal(remove.fixAllDescription, undefined);
    assert.ok(fixes.every((f) => !f.fixAllDescription || !/unused/i.test(f.fixAllDescription)));
  });

  it('a "fix all" asked for anyway leaves the parameter list as it is', () => {
    for (const fixId of ['unusedIdentifier_delete', 'unusedIdentifier_prefix', 'unusedIdentifier_infer']) {
      const all = wrapped.getCombinedCodeFix({ type: 'file', fileName: REWARD }, fixId, FORMAT, {});
      assert.equal(signatureAfter(all.changes), CONTRACT, fixId);
    }
    const deleted = wrapped.getCombinedCodeFix({ type: 'file', fileName: REWARD }, 'unusedIdentifier_delete', FORMAT, {});
    assert.ok(
      deleted.changes.some((c) => c.textChanges.length > 0),
      'the unused local still goes',
    );
  });

  it('refuses to rename a contract parameter, at its declaration and at a use, and still renames a local', () => {
    const declared = wrapped.getRenameInfo(REWARD, at('health'), {});
    assert.deepEqual(declared, { canRename: false, localizedErrorMessage: RENAME_REFUSED });
    assert.equal(wrapped.getRenameInfo(REWARD, at('health <= 0'), {}).canRename, false);
    assert.equal(raw.getRenameInfo(REWARD, at('health'), {}).canRename, true);
    assert.equal(wrapped.getRenameInfo(REWARD, at('previous_log'), {}).canRename, true);
    // A helper's parameters are the user's to rename.
    assert.equal(wrapped.getRenameInfo(REWARD, at('before'), {}).canRename, true);
  });

  it("does not offer to turn reward_function's parameters into a destructured object", () => {
    const names = (s: ts.LanguageService) => s.getApplicableRefactors(REWARD, at('inventory_change'), {}).map((r) => r.name);
    assert.ok(names(raw).includes('Convert parameters to destructured object'), names(raw).join('; '));
    assert.ok(!names(wrapped).includes('Convert parameters to destructured object'));
  });
});

describe('the TypeScript plugin elsewhere', () => {
  it('leaves other TypeScript files alone', () => {
    const file = '/ws/util.ts';
    const text = fixture.replace('export function reward_function', 'export function score');
    const service = contractSafeLanguageService(ts, serviceFor(file, text));
    const start = text.indexOf('inventory_change');
    const fixes = service.getCodeFixesAtPosition(file, start, start + 16, [6133], FORMAT, {});
    assert.ok(fixes.some((f) => f.fixId === 'unusedIdentifier_delete'));
    assert.ok(service.getSuggestionDiagnostics(file).some((d) => d.code === 6133 && text.slice(d.start!, d.start! + d.length!) === 'inventory_change'));
  });

  it('is the factory tsserver loads', () => {
    const plugin = init({ typescript: ts });
    const service = plugin.create({ languageService: raw } as unknown as ts.server.PluginCreateInfo);
    assert.deepEqual(fixesAt(service, 'inventory_change'), []);
  });
});
