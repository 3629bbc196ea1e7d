// Failed episodes that ended without a tool the task starts with: it wore out (a tool breaks at its
// minecraft-data maxDurability; an iron pickaxe lasts 250 blocks in 1.16.5), and with it went the episode's
// digging, so every block dug off the way was tunnel not dug. The evidence is the digging's yield: blocks
// collected against distinct 1 m columns entered (a 1 × 2 tunnel takes 2 a column). No patch: which digging
// is progress depends on the task and the reward's intent.
import minecraftData from 'minecraft-data';
import type { EpisodeRecord } from '../../records';
import { DEFAULT_GAME_VERSION } from '../../schema';
import type { TaskSpec } from '../../tasks';
import { cellsVisited, defineFinding, fmt, KEEP_EVIDENCE, median, pct, plural, type EpisodeEvidence, type FindingOf } from '../finding';

const ITEMS = minecraftData(DEFAULT_GAME_VERSION).itemsByName;

/** The task's starting items that wear out, with their uses. */
function startingTools(task: TaskSpec | undefined): { name: string; uses: number }[] {
  if (!task) return [];
  return Object.keys(task.inventory)
    .map((name) => ({ name, uses: ITEMS[name]?.maxDurability ?? 0 }))
    .filter((t) => t.uses > 0);
}

function toolWornOutFinding(failed: EpisodeRecord[], task: TaskSpec | undefined): FindingOf<'tool-worn-out'> | undefined {
  const tools = startingTools(task);
  if (tools.length === 0) return undefined;
  const evidence: EpisodeEvidence[] = [];
  const collected: number[] = [];
  const columns: number[] = [];
  const wornNames = new Set<string>();
  for (const ep of failed) {
    const inventory = ep.final.inventory;
    const worn = tools.filter((t) => !((inventory[t.name] ?? 0) > 0));
    if (worn.length === 0) continue;
    for (const t of worn) wornNames.add(t.name);
    // What the digging yielded: every item gained over the episode (blocks broken with the right tool drop one).
    let gained = 0;
    for (const [name, count] of Object.entries(inventory)) gained += Math.max(0, count - (task!.inventory[name] ?? 0));
    const entered = cellsVisited(ep, 1);
    collected.push(gained);
    columns.push(entered);
    // Where the recorded last steps show the tool go (its count −1), say when.
    const broke = ep.lastSteps.find((s) => worn.some((t) => (s.inventory_change[t.name] ?? 0) < 0));
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [broke?.step ?? ep.steps, ep.steps],
      note: `ended without its ${worn.map((t) => t.name).join(', ')}${broke ? ` (worn out at step ${broke.step})` : ''}${ep.died ? `; died of ${ep.deathCause ?? 'other'}` : ep.truncated ? `; timed out at step ${ep.steps}` : ''}; ${gained} blocks collected, ${plural(entered, 'distinct 1 m column')} entered`,
    });
  }
  if (evidence.length === 0) return undefined;
  const affected = evidence.length;
  const share = affected / failed.length;
  const names = [...wornNames];
  const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const uses = names.map((n) => `${n} ${tools.find((t) => t.name === n)!.uses}`).join(', ');
  return {
    id: 'tool-worn-out',
    kind: 'tool-worn-out',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) ended with their ${names.join(', ')} worn out (uses before it breaks, minecraft-data ${DEFAULT_GAME_VERSION}: ${uses}); they collected a median ${fmt(median(collected), 0)} blocks and entered a median ${fmt(median(columns), 0)} distinct 1 m columns: ${fmt(total(collected) / Math.max(1, total(columns)))} blocks a column over all of them, where a 1 × 2 tunnel takes 2.`,
    suggestion:
      "The tool's uses bound how much rock an episode can dig, so a reward that pays digging as such (mined blocks, or new 3D cells, which a shaft straight down pays as well as a tunnel and which ends on bedrock that no tool breaks) spends them: pay new ground reached per block dug instead, e.g. dense +1 on the first entry to each 1 m column and −1 when more than 3 blocks were dug since the last new column (inventory_change counts them), with the feet kept in a band around the start height both ways.",
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    noPatch: 'which digging counts as progress depends on the task and on what the reward means to pay for',
  };
}

export const toolWornOut = defineFinding({
  meta: {
    id: 'tool-worn-out',
    kinds: ['tool-worn-out'],
    description: 'failed episodes that ended without a tool the task starts with (worn out), with what its uses dug',
    needs: ['failed'],
  },
  find: (ctx) => toolWornOutFinding(ctx.failed, ctx.task),
});
