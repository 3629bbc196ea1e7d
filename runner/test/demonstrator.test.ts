// The scripted teacher behind `pretrain` digs with its quickest tool: when something slower is in hand (the
// recording noise pressed `equip`, which moves to the next inventory item), it equips its way back before it
// attacks. Before, it went on attacking stone with cobblestone in hand (150 ticks a block against 8 with the
// iron pickaxe, 1.16.5's hand speed for a block that needs a pickaxe) and the foundation learned to do the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GAME_FACTS } from '../src/schema';
import { SimEnv } from '../src/env/sim/sim';
import { Demonstrator } from '../src/pretrain/demonstrator';
import { recordDemonstrations } from '../src/pretrain/pretrain';
import { resolveTask } from '../src/tasks';
import { hash32 } from '../src/seeds';

const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;

test('with a block in hand the teacher equips its pickaxe again before it digs, and digs with it', () => {
  const task = resolveTask('explore-diamond');
  const env = new SimEnv(task);
  const features = new Float32Array(env.featureSize);
  let s = hash32(3, 0x7ea);
  const teacher = new Demonstrator(task, () => (s = hash32(s, 1)) / 2 ** 32);
  env.reset(3, features, 0);
  teacher.reset(env);
  // What the recording noise does: cobblestone picked up, then an `equip` that puts it in hand.
  env.inventory.set('cobblestone', 5);
  env.step(A.equip, features, 0);
  assert.equal(env.heldItem, 'cobblestone');
  let equips = 0,
    attacks = 0;
  for (let t = 0; t < 400 && attacks < 20; t++) {
    const action = teacher.act(env);
    if (action === A.equip) equips++;
    if (action === A.attack) {
      attacks++;
      assert.equal(env.heldItem, 'iron_pickaxe', `step ${t}: the teacher attacks a block with ${env.heldItem} in hand`);
    }
    if (env.step(action, features, 0).info.done) break;
  }
  assert.ok(equips >= 1, 'it equips the pickaxe back');
  assert.ok(attacks >= 1, 'and then digs');
});

test("explore-diamond's demonstrations: no attack with a block in hand where the pickaxe is quicker", () => {
  const demos = recordDemonstrations(resolveTask('explore-diamond'), 2, 7);
  assert.ok(demos.episodes.every((e) => e.success));
  const attacks = demos.actions.filter((a) => a === A.attack).length;
  const equips = demos.actions.filter((a) => a === A.equip).length;
  // The noise presses equip about once in 93 steps; each time the labels show the way back.
  assert.ok(equips > 0, 'the demonstrations hold equip labels');
  assert.ok(attacks < 0.75 * demos.actions.length, `attack is ${attacks} of ${demos.actions.length} labels`);
});
