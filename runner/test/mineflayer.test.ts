// The mineflayer backend against a real embedded flying-squid over the real protocol: the server serves the
// simulator's generated world, the rules plugin makes lava kill (flying-squid alone has no lava damage) and
// the episode restarts at the spawn with full health, an external server is reachable by host:port, and a
// server that dies mid-episode gives a clear error within a bounded time instead of a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Vec3 } from 'vec3';
import { BUILTIN_TASKS } from '../src/tasks';
import { GAME_FACTS } from '../src/schema';
import { blockStateAt } from '../src/env/game/worldgen';
import { S, mcData } from '../src/env/game/registry';
import { createMineflayerEnv, parseServerAddress, ServerConnectionError } from '../src/env/mineflayer/index';
import { startEmbeddedServer } from '../src/env/mineflayer/server';

async function waitFor(ready: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const act = (a: (typeof GAME_FACTS.actions)[number]) => GAME_FACTS.actions.indexOf(a);
/* eslint-disable @typescript-eslint/no-explicit-any -- reaching into the live bot and server */

test('embedded flying-squid: generated world, lava kills with cause lava, the episode restarts; a killed server fails the step within seconds', {
  timeout: 60_000,
}, async () => {
  const task = BUILTIN_TASKS['explore-diamond']!;
  const seed = 3;
  // 20 s for each wait on the server: generating the episode's world took over 10 s on this 2-core machine with
  // another test run beside it. The killed server below is still held to failing the step within 5 s.
  const env: any = await createMineflayerEnv({ task, numEnvs: 1, seed, backend: 'mineflayer' }, { timeoutMs: 20_000 });
  let closed = false;
  try {
    const first = await env.reset([seed]);
    const agent = env.agents[0];
    const bot = agent.bot;
    // The bot's world is the generator's world: compare a block column around the spawn.
    const [x0, y0, z0] = first.obs[0].position.map(Math.floor);
    let compared = 0;
    for (let dx = -6; dx <= 6; dx += 3) {
      for (let dz = -6; dz <= 6; dz += 3) {
        for (let y = y0 - 8; y <= y0 + 8; y += 2) {
          assert.equal(
            bot.world.getBlockStateId(new Vec3(x0 + dx, y, z0 + dz)),
            blockStateAt('underground', seed, x0 + dx, y, z0 + dz),
            `block at ${[x0 + dx, y, z0 + dz]}`,
          );
          compared++;
        }
      }
    }
    assert.ok(compared > 100);
    assert.equal(first.obs[0].health, 10);
    assert.deepEqual(Object.fromEntries(bot.inventory.items().map((i: any) => [i.name, i.count])), { iron_pickaxe: 1 });

    // Lava at the feet (server side): the plugin burns 4 hp per hurt period; the agent dies of lava and the
    // env starts the next episode at full health.
    const serv = env.servers[0].serv;
    const player = serv.players[0];
    await serv.setBlock(player.world, new Vec3(x0, y0, z0), S.lava);
    let death: any = null;
    const healths: number[] = [];
    for (let i = 0; i < 120 && !death; i++) {
      const r = await env.step(Int32Array.of(act('no_op')));
      healths.push(r.obs[0].health);
      if (r.info[0].done) death = r;
    }
    assert.ok(death, `no death in lava; health went ${healths.join(',')}`);
    assert.equal(death.info[0].died, true);
    assert.equal(death.info[0].deathCause, 'lava');
    assert.equal(death.obs[0].health, 0);
    assert.ok(healths.length >= 3, 'lava takes several hurt periods to kill from full health');
    assert.equal(death.resetObs[0].health, 10, 'the next episode starts at full health');
    assert.equal(bot.world.getBlockStateId(new Vec3(x0, y0, z0)) === S.lava, false, 'the next episode is on a fresh world');

    // flying-squid's own respawn leaves the player where it died; the plugin's puts it at the spawn, healed.
    const [sx, sy, sz] = death.resetObs[0].position;
    const spawn = new Vec3(sx, sy, sz);
    player.sendSelfPosition(spawn.offset(1.25, 0, 0));
    await waitFor(() => bot.entity.position.distanceTo(spawn) > 1, 'the bot to be moved off the spawn');
    player.updateHealth(0);
    await waitFor(() => bot.health === 0, 'the bot to see its death');
    bot.respawn();
    await waitFor(() => bot.health === 20 && bot.entity.position.distanceTo(spawn) < 1e-6, 'a respawn at the spawn with full health');

    // Kill the server's sockets mid-episode: the next steps fail with a clear error, fast.
    const started = Date.now();
    for (const client of Object.values(serv._server.clients) as any[]) client.socket.destroy();
    serv._server.socketServer.close();
    let error: unknown = null;
    for (let i = 0; i < 100 && !error; i++) {
      try {
        await env.step(Int32Array.of(act('forward')));
      } catch (e) {
        error = e;
      }
    }
    const elapsed = Date.now() - started;
    assert.ok(error instanceof ServerConnectionError, `expected a ServerConnectionError, got ${String(error)}`);
    assert.match((error as Error).message, /mineflayer env 0 \(server 127\.0\.0\.1:\d+, embedded flying-squid\): connection (closed|error)/);
    assert.ok(elapsed < 5_000, `error after ${elapsed} ms`);
    await assert.rejects(env.step(Int32Array.of(act('no_op'))), ServerConnectionError, 'later steps keep failing');
    await env.close();
    closed = true;
  } finally {
    if (!closed) await env.close();
  }
});

test('an external server given as host:port is used as it is: the bot steps where the server spawned it', { timeout: 40_000 }, async () => {
  assert.deepEqual(parseServerAddress('127.0.0.1:25565'), { host: '127.0.0.1', port: 25565 });
  assert.throws(() => parseServerAddress('localhost'), /--server must be host:port/);
  const task = BUILTIN_TASKS['approach-tree']!;
  const server = await startEmbeddedServer('plains', 11, { x: 0.5, y: 80, z: 0.5, yaw: 0 });
  const env = await createMineflayerEnv({ task, numEnvs: 1, seed: 0, backend: 'mineflayer', server: `127.0.0.1:${server.port}` }, { timeoutMs: 10_000 });
  try {
    const first = await env.reset([0]);
    let last = first.obs[0]!;
    for (let i = 0; i < 10; i++) last = (await env.step(Int32Array.of(act('forward')))).obs[0]!;
    const moved = Math.hypot(last.position[0] - first.obs[0]!.position[0], last.position[2] - first.obs[0]!.position[2]);
    assert.ok(moved > 0.5 || last.position[1] < first.obs[0]!.position[1], `the bot neither walked nor fell: ${first.obs[0]!.position} → ${last.position}`);
  } finally {
    await env.close();
    await server.close();
  }
});

test('attack-cow on flying-squid: hits deal damage, the kill is reported and ends the episode with success', { timeout: 40_000 }, async () => {
  const task = BUILTIN_TASKS['attack-cow']!;
  const env: any = await createMineflayerEnv({ task, numEnvs: 1, seed: 5, backend: 'mineflayer' }, { timeoutMs: 10_000 });
  try {
    await env.reset([5]);
    const serv = env.servers[0].serv;
    const agent = env.agents[0];
    // A cow 1.5 m straight ahead; looking 15° down puts it under the crosshair.
    const e = agent.entity;
    const at = new Vec3(e.pos.x - Math.sin(e.yaw) * 1.5, e.pos.y, e.pos.z - Math.cos(e.yaw) * 1.5);
    const cow = serv.spawnMob(mcData.entitiesByName.cow!.id, serv.players[0].world, at);
    cow.gravity = new Vec3(0, 0, 0);
    cow.health = 10;
    await env.step(Int32Array.of(act('turn_down')));
    await waitFor(() => Object.values(agent.bot.entities).some((x: any) => x.name === 'cow' && x.position.distanceTo(at) < 0.1), 'the cow to reach the client');
    let dealt = 0;
    let end: any = null;
    for (let i = 0; i < 40 && !end; i++) {
      const r = await env.step(Int32Array.of(act('attack')));
      dealt += r.obs[0].damage_dealt;
      if (r.info[0].done) end = r;
    }
    assert.ok(end, `the cow did not die; damage dealt ${dealt}`);
    assert.deepEqual(end.obs[0].kill_entity, { cow: 1 });
    assert.equal(end.info[0].success, true);
    assert.equal(dealt, 10, "damage dealt adds up to the cow's 10 hp");
  } finally {
    await env.close();
  }
});
