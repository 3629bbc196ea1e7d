// A real Minecraft name of the wrong kind for its dict (`inventory_change['diamond_ore']`,
// `current_nearest_blocks['diamond']`): the dict never has it, so the term it feeds never fires.
import type { DictKeys } from '../context';
import { badNames, pythonBadNames, type BadName } from '../names';
import { defineRule, type RuleMeta } from '../rule';

const KIND_WORDS: Record<DictKeys, string> = { nearby: 'a block or mob', item: 'an item', mob: 'a mob' };

const messages = {
  wrongKind: (name: string, what: string, keys: DictKeys, dictText: string, didYouMean: string) =>
    `'${name}' is ${what}, not ${KIND_WORDS[keys]}: ${dictText} never has it.${didYouMean}`,
};

const meta = {
  id: 'wrong-kind-name',
  severity: 'error',
  description: 'a real name of the wrong kind (an item as a nearest-blocks key, …)',
  docs: 'Each dict holds one kind of name: nearest blocks hold blocks and mobs, inventory changes hold items, kills hold mobs. Mined `diamond_ore` drops the item `diamond`; a block such as `water` is never an item. The fixes offer the names of the right kind.',
  fixable: true,
} as const satisfies RuleMeta;

export const wrongKindName = defineRule({
  meta,
  end(ctx) {
    for (const b of badNames(ctx)) if (b.kinds.length > 0) ctx.report(meta, b.keyNode, wrongKindMessage(b), b.fixes);
  },
  python(ctx) {
    for (const b of pythonBadNames(ctx)) if (b.kinds.length > 0) ctx.report(meta, b.keyNode, wrongKindMessage(b), b.fixes);
  },
});

function wrongKindMessage(b: Pick<BadName, 'kinds' | 'keys' | 'name' | 'dictText' | 'didYouMean'>): string {
  const what = b.kinds.includes('block') ? (b.keys === 'item' ? 'a block that is never an item' : 'a block') : b.kinds.includes('item') ? 'an item' : 'a mob';
  return messages.wrongKind(b.name, what, b.keys, b.dictText, b.didYouMean);
}
