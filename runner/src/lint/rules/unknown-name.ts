// A dict key that is not a Minecraft name at all (`cnb['magma']`): the entry is never there, so the term it
// feeds is silently zero. Did-you-mean fixes from the schema's names and aliases.
import type { DictKeys } from '../context';
import { badNames, pythonBadNames } from '../names';
import { defineRule, type RuleMeta } from '../rule';

const KIND_PLURALS: Record<DictKeys, string> = { nearby: 'block and mob names', item: 'item names', mob: 'mob names' };

const messages = {
  unknown: (name: string, gameVersion: string, dictText: string, keys: DictKeys, didYouMean: string) =>
    `'${name}' is not a Minecraft ${gameVersion} name (${dictText} keys are ${KIND_PLURALS[keys]}).${didYouMean}`,
};

const meta = {
  id: 'unknown-name',
  severity: 'error',
  description: 'a key that is not a Minecraft name of the kind the dict holds',
  docs: "The observation dicts are keyed by Minecraft 1.16.5 names (`oak_log`, `cow`, `diamond`). A key that is no such name never appears, so every term that reads it is zero or undefined. The fixes rename it to the closest names and the schema's aliases (`wood` → `oak_log`), in every place it is written.",
  fixable: true,
} as const satisfies RuleMeta;

export const unknownName = defineRule({
  meta,
  end(ctx) {
    for (const b of badNames(ctx)) {
      if (b.kinds.length === 0) ctx.report(meta, b.keyNode, messages.unknown(b.name, ctx.schema.gameVersion, b.dictText, b.keys, b.didYouMean), b.fixes);
    }
  },
  python(ctx) {
    for (const b of pythonBadNames(ctx)) {
      if (b.kinds.length === 0) ctx.report(meta, b.keyNode, messages.unknown(b.name, ctx.schema.gameVersion, b.dictText, b.keys, b.didYouMean), b.fixes);
    }
  },
});
