// The observation schema's facts: names from minecraft-data 1.16.5 by kind, parameter order and ranges,
// the scale rule, the generated TypeScript declarations, and did-you-mean suggestions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import minecraftData from 'minecraft-data';
import ts from 'typescript';
import {
  combineScaled,
  DEFAULT_GAME_VERSION,
  GAME_FACTS,
  loadSchema,
  NEAREST_ENTRY,
  parameterNames,
  PARAMETERS,
  POSITION_ENTRY,
  rewardDeclarations,
  SCALE_RULE,
  suggestNames,
} from '../src/schema';

const schema = loadSchema();
const data = minecraftData('1.16.5');

test('the default game version is 1.16.5', () => {
  assert.equal(DEFAULT_GAME_VERSION, '1.16.5');
  assert.equal(schema.gameVersion, '1.16.5');
});

test('blocks are minecraft-data 1.16.5 block names without the invisible airs', () => {
  const expected = new Set(data.blocksArray.map((b) => b.name));
  for (const air of ['air', 'cave_air', 'void_air']) {
    assert.ok(expected.has(air));
    expected.delete(air);
    assert.ok(!schema.blocks.has(air), `${air} is never seen`);
  }
  assert.deepEqual([...schema.blocks].sort(), [...expected].sort());
  for (const b of ['stone', 'lava', 'water', 'diamond_ore', 'oak_log', 'birch_log', 'grass_block', 'oak_leaves', 'magma_block']) {
    assert.ok(schema.blocks.has(b), b);
  }
});

test('items are minecraft-data 1.16.5 item names without air', () => {
  const expected = new Set(data.itemsArray.map((i) => i.name));
  expected.delete('air');
  assert.deepEqual([...schema.items].sort(), [...expected].sort());
  for (const i of ['diamond', 'beef', 'leather', 'iron_pickaxe', 'oak_log', 'cobblestone']) assert.ok(schema.items.has(i), i);
});

test('mobs are the living entities, including those minecraft-data leaves uncategorised', () => {
  for (const m of [
    'cow',
    'pig',
    'sheep',
    'chicken',
    'zombie',
    'skeleton',
    'creeper',
    'spider',
    'enderman',
    'bee',
    'fox',
    'piglin',
    'zombified_piglin',
    'strider',
    'hoglin',
  ]) {
    assert.ok(schema.mobs.has(m), m);
  }
  for (const notMob of ['item', 'arrow', 'boat', 'minecart', 'experience_orb', 'painting', 'falling_block', 'tnt', 'player']) {
    assert.ok(!schema.mobs.has(notMob), `${notMob} is not a mob`);
  }
  for (const m of schema.mobs) assert.ok(data.entitiesByName[m], `${m} is a minecraft-data entity`);
});

test('nearest-blocks keys are blocks plus mobs; inventory keys are items; kill_entity keys are mobs', () => {
  assert.equal(schema.nearby.size, new Set([...schema.blocks, ...schema.mobs]).size);
  for (const n of schema.nearby) assert.ok(schema.blocks.has(n) || schema.mobs.has(n));
  const byName = Object.fromEntries(PARAMETERS.map((p) => [p.name, p]));
  assert.equal(byName.current_nearest_blocks!.keys, 'nearby');
  assert.equal(byName.previous_nearest_blocks!.keys, 'nearby');
  assert.equal(byName.inventory_change!.keys, 'item');
  assert.equal(byName.kill_entity!.keys, 'mob');
  assert.equal(schema.namesFor('nearby'), schema.nearby);
  assert.equal(schema.namesFor('item'), schema.items);
  assert.equal(schema.namesFor('mob'), schema.mobs);
});

test('names of the wrong kind: diamond is an item, lava a block, cow a mob that can be nearby', () => {
  assert.deepEqual(schema.kindsOf('diamond'), ['item']);
  assert.ok(!schema.nearby.has('diamond'), 'diamond (the gem) is never a nearest block');
  assert.deepEqual(schema.kindsOf('diamond_ore'), ['block', 'item']);
  assert.deepEqual(schema.kindsOf('lava'), ['block']);
  assert.ok(!schema.items.has('lava'), 'lava is never an inventory item (lava_bucket is)');
  assert.ok(schema.items.has('lava_bucket'));
  assert.deepEqual(schema.kindsOf('cow'), ['mob']);
  assert.ok(schema.nearby.has('cow'));
  assert.ok(!schema.items.has('cow'));
  assert.deepEqual(schema.kindsOf('oak_log'), ['block', 'item']);
  assert.deepEqual(schema.kindsOf('magma'), []);
  assert.deepEqual(schema.kindsOf('wood'), []);
  assert.equal(schema.displayName('cow'), 'Cow');
  assert.equal(schema.displayName('diamond_ore'), 'Diamond Ore');
});

test('parameters come in the paper order; attack tasks append damage_dealt and kill_entity', () => {
  const basic = ['current_nearest_blocks', 'previous_nearest_blocks', 'inventory_change', 'health', 'past_agent_positions', 'GLOBAL_DATA'];
  assert.deepEqual(parameterNames(false), basic);
  assert.deepEqual(parameterNames(true), [...basic, 'damage_dealt', 'kill_entity']);
  assert.deepEqual(
    PARAMETERS.filter((p) => p.attackOnly).map((p) => p.name),
    ['damage_dealt', 'kill_entity'],
  );
});

test('parameter ranges: nearest entries, positions, health, damage', () => {
  assert.deepEqual(
    NEAREST_ENTRY.map((e) => [e.name, e.index, e.range.min, e.range.max, e.range.unit]),
    [
      ['distance', 0, 0, 64, 'm'],
      ['yaw', 1, -Math.PI, Math.PI, 'rad'],
      ['pitch', 2, -Math.PI / 2, Math.PI / 2, 'rad'],
    ],
  );
  assert.deepEqual(
    POSITION_ENTRY.map((e) => e.name),
    ['x', 'y', 'z', 'yaw', 'pitch'],
  );
  assert.deepEqual([POSITION_ENTRY[3]!.range.min, POSITION_ENTRY[3]!.range.max, POSITION_ENTRY[3]!.range.unit], [-180, 180, '°']);
  assert.deepEqual([POSITION_ENTRY[4]!.range.min, POSITION_ENTRY[4]!.range.max], [-90, 90]);
  const byName = Object.fromEntries(PARAMETERS.map((p) => [p.name, p]));
  assert.deepEqual([byName.health!.range!.min, byName.health!.range!.max], [0, 10]);
  assert.equal(byName.damage_dealt!.range!.min, 0);
  assert.match(byName.past_agent_positions!.doc, /last entry is the current position/);
  assert.match(byName.GLOBAL_DATA!.doc, /empty object at episode start/);
  assert.equal(GAME_FACTS.viewDistance, NEAREST_ENTRY[0]!.range.max);
  assert.equal(GAME_FACTS.maxHealth, byName.health!.range!.max);
  assert.equal(GAME_FACTS.actions.length, 14);
  assert.deepEqual([GAME_FACTS.fovYawDeg, GAME_FACTS.fovPitchDeg], [35, 30]);
});

test('scale rule: sign(sparse) * 1 + sign(dense) * 0.1 yields exactly the allowed values', () => {
  const produced = new Set<number>();
  for (const dense of [-3, 0, 0.001]) for (const sparse of [-7, 0, 2]) produced.add(combineScaled(dense, sparse));
  assert.deepEqual(
    [...produced].sort((a, b) => a - b),
    [...SCALE_RULE.allowedValues],
  );
  assert.equal(combineScaled(5, -3), -0.9);
  assert.equal(combineScaled(-0.2, 0), -0.1);
  assert.equal(combineScaled(1, 1), 1.1);
  // The expression the prompts and the linter quote computes the same thing (not the paper's swapped one).
  const expr = new Function('dense', 'sparse', `return ${SCALE_RULE.expression};`) as (d: number, s: number) => number;
  for (const d of [-1, 0, 1]) for (const s of [-1, 0, 1]) assert.equal(expr(d, s), combineScaled(d, s));
  assert.equal(combineScaled(1, 0), 0.1, 'dense alone is worth a tenth of sparse');
});

/** Type-checks reward snippets against the generated declarations with the TypeScript compiler API (one program). */
function typeErrors(snippets: Record<string, string>): Record<string, string[]> {
  const files = new Map([['/decl/schema.d.ts', rewardDeclarations(schema)], ...Object.entries(snippets).map(([k, v]) => [`/decl/${k}.ts`, v] as const)]);
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts'], types: [] };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError) => {
    const text = files.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, lang) : read(name, lang, onError);
  };
  host.fileExists = (name) => files.has(name) || ts.sys.fileExists(name);
  host.readFile = (name) => files.get(name) ?? ts.sys.readFile(name);
  const program = ts.createProgram([...files.keys()], options, host);
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(snippets).map((k) => [k, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const key = d.file?.fileName.replace(/^\/decl\/|\.ts$/g, '') ?? '';
    (out[key] ??= []).push(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  return out;
}

test('rewardDeclarations compiles with the TypeScript API and types the parameters by name', () => {
  const decls = rewardDeclarations(schema);
  for (const p of PARAMETERS) assert.ok(decls.includes(`__schema_${p.name}`), p.name);
  const errors = typeErrors({
    good: `
      const nearest: NearestBlocks = { lava: [3, 0.1, -0.2], cow: [10, 0, 0] };
      const inv: InventoryChange = { diamond: 1, beef: -1 };
      const kills: KillEntity = { cow: 1 };
      const pos: AgentPosition = [1, 63, 2, 90, 0];
      const d: number = __schema_current_nearest_blocks.diamond_ore?.[0] ?? 64;
      const h: number = __schema_health + __schema_damage_dealt;
      const g: GlobalData = __schema_GLOBAL_DATA;
      export { nearest, inv, kills, pos, d, h, g };`,
    wrong: `
      const a: NearestBlocks = { magma: [1, 0, 0] };
      const b: InventoryChange = { lava: 1 };
      const c: KillEntity = { diamond: 1 };
      export { a, b, c };`,
  });
  assert.deepEqual(errors['schema.d'] ?? [], [], 'the declarations themselves compile');
  assert.deepEqual(errors.good, []);
  const wrong = errors.wrong!;
  assert.equal(wrong.length, 3, wrong.join('\n'));
  assert.match(wrong.join('\n'), /magma/);
  assert.match(wrong.join('\n'), /lava/);
  assert.match(wrong.join('\n'), /diamond/);
});

test('suggestNames: magma → lava, diamond → diamond_ore, wood → oak_log', () => {
  assert.equal(suggestNames('magma', schema.nearby)[0], 'lava');
  assert.equal(suggestNames('diamond', schema.nearby)[0], 'diamond_ore');
  assert.equal(suggestNames('wood', schema.nearby)[0], 'oak_log');
  assert.equal(suggestNames('wood', schema.items)[0], 'oak_log');
  assert.equal(suggestNames('lava', schema.items).includes('lava'), false, 'never suggests a name of the wrong kind');
  assert.equal(suggestNames('Diamond Ore', schema.nearby)[0], 'diamond_ore');
  assert.equal(suggestNames('minecraft:cow', schema.mobs)[0], 'cow');
  assert.ok(suggestNames('zombie_pigman', schema.mobs).includes('zombified_piglin'));
  assert.ok(suggestNames('cobblestone_pickaxe', schema.items).includes('stone_pickaxe'));
  assert.ok(suggestNames('oak_lgo', schema.nearby).includes('oak_log'), 'a typo is a small edit away');
});
