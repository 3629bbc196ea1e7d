// `inventory_change` counts items. Mining a block gives what its loot table drops, which for many blocks is
// not the block: diamond_ore gives diamond, stone gives cobblestone, grass_block gives dirt. A key that is a
// block which never drops itself (without silk touch, which the agent does not have) stays undefined.
import ts from 'typescript';
import { skipParens, stringKey, type LintContext } from '../context';
import { defineRule, type RuleMeta } from '../rule';

const meta = {
  id: 'inventory-block-drop',
  severity: 'error',
  description: 'an inventory_change key that is a block which never drops itself (diamond_ore → diamond)',
  docs: 'inventory_change has one key per item whose count changed. Many blocks drop something else when mined without silk touch (minecraft-data 1.16.5 block loot tables): diamond_ore → diamond, coal_ore → coal, stone → cobblestone, grass_block → dirt. Such a key is never present, so the reward for mining never pays. Use the dropped item.',
  fixable: true,
} as const satisfies RuleMeta;

export const inventoryBlockDrop = defineRule({
  meta,
  node(node, ctx) {
    let key: ts.Expression | undefined;
    let dict: ts.Expression | undefined;
    if (ts.isElementAccessExpression(node)) [dict, key] = [node.expression, node.argumentExpression];
    else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword) [dict, key] = [node.right, node.left];
    else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'hasOwnProperty' && node.arguments[0])
      [dict, key] = [node.expression.expression, node.arguments[0]];
    if (!dict || !key) return;
    // Cheap checks first: the type of the dict is asked only for a block key that drops something else.
    const name = stringKey(key);
    if (name === undefined) return;
    const drops = ctx.schema.blockDrops(name);
    if (drops === undefined || drops.includes(name) || !isInventoryChange(dict, ctx)) return;
    const what = drops.length === 0 ? 'drops nothing when mined' : `drops ${drops.join(' or ')} when mined`;
    const quote = skipParens(key).getText(ctx.sf)[0] ?? "'";
    ctx.report(
      meta,
      key,
      `'${name}' never appears in inventory_change: the block ${what} without silk touch (minecraft-data block loot), so this is always undefined.`,
      drops.map((d, i) => ({ title: `Change '${name}' to '${d}'`, edits: [ctx.replace(skipParens(key!), `${quote}${d}${quote}`)], preferred: i === 0 })),
    );
  },
});

function isInventoryChange(e: ts.Expression, ctx: LintContext): boolean {
  e = skipParens(e);
  return ctx.dictKeys(e) === 'item';
}
