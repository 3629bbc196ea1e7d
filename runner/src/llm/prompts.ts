// Prompt rendering. The wording lives in `prompts/*.md` (templates with `{{placeholder}}`s); every fact the
// templates state about the game, the inputs, the names and the reward contract is generated here from the
// schema and task modules, so prompts and linter can never disagree.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { NAME_ALIASES, NEAREST_ENTRY, PARAMETERS, POSITION_ENTRY, SCALE_RULE, gameFactsText, loadSchema, parameterNames, type Range } from '../schema';
import { REWARD_LIMITS } from '../reward/index';
import { successTargets, taskDescriptionText, type TaskSpec } from '../tasks';

export const TEMPLATE_NAMES = [
  'context',
  'designer-system',
  'designer-initial',
  'designer-update',
  'designer-fix-critique',
  'designer-fix-lint',
  'designer-fix-error',
  'critic-system',
  'critic',
  'analyzer-system',
  'analyzer',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** `prompts/` of this checkout or installed package: from runner/src/llm (tsx) or dist/ (bundle). */
function findPromptsDir(): string {
  const fromEnv = process.env.REWARDSMITH_PROMPTS_DIR;
  if (fromEnv) return fromEnv;
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'prompts', 'critic.md'))) return path.join(dir, 'prompts');
    dir = path.dirname(dir);
  }
  throw new Error(`cannot find the prompts/ folder above ${__dirname} (set REWARDSMITH_PROMPTS_DIR)`);
}

const templateCache = new Map<TemplateName, string>();

export function loadTemplate(name: TemplateName): string {
  let text = templateCache.get(name);
  if (text === undefined) {
    text = readFileSync(path.join(findPromptsDir(), `${name}.md`), 'utf8').trimEnd();
    templateCache.set(name, text);
  }
  return text;
}

/** Fills `{{name}}` placeholders; a placeholder without a value, or a value without a placeholder, is a bug. */
export function renderTemplate(name: TemplateName, values: Record<string, string>): string {
  const template = loadTemplate(name);
  const used = new Set<string>();
  const out = template.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`prompt template ${name}.md uses {{${key}}} but no value was given`);
    used.add(key);
    return value;
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length > 0) throw new Error(`prompt template ${name}.md has no placeholder for ${unused.map((k) => `{{${k}}}`).join(', ')}`);
  return out;
}

const formatRange = (r: Range) => {
  const n = (v: number) => (Math.abs(v) === Math.PI ? `${v < 0 ? '-' : ''}π` : Math.abs(v) === Math.PI / 2 ? `${v < 0 ? '-' : ''}π/2` : String(v));
  return `${n(r.min)}..${n(r.max)} ${r.unit}`;
};

export function parametersText(attack: boolean): string {
  return PARAMETERS.filter((p) => attack || !p.attackOnly)
    .map((p) => `- \`${p.name}\`${p.range ? ` (${formatRange(p.range)})` : ''}: ${p.doc}`)
    .join('\n');
}

const entryText = (entries: typeof NEAREST_ENTRY) => entries.map((e) => `- [${e.index}] ${e.name} (${formatRange(e.range)}): ${e.doc}`).join('\n');

export function rewardSignature(attack: boolean): string {
  return `export function reward_function(${parameterNames(attack).join(', ')})`;
}

/** The reward languages the designer writes and the critic reviews. */
export type RewardLanguage = 'typescript' | 'python';

/** The language of a reward file by its name (`*.py`: Python). */
export function languageOf(file: string | undefined): RewardLanguage {
  return file && /\.py$/i.test(file) ? 'python' : 'typescript';
}

export function rewardContractText(attack: boolean, language: RewardLanguage = 'typescript'): string {
  const values = SCALE_RULE.allowedValues.map(String).join(', ');
  const params = parameterNames(attack).join(', ');
  if (language === 'python')
    return [
      `- The file is Python 3 (the paper's format) and defines one function at its top level with exactly this signature:`,
      `  \`def reward_function(${params}):\``,
      '- It computes a dense value (shaping, every step) and a sparse value (rare events: success, damage, death), typically in helper functions named `dense` and `sparse`, and returns exactly',
      `  \`${SCALE_RULE.expression.replace(/Math\.sign/g, 'np.sign')}\``,
      `  Only the signs of dense and sparse count: sparse weighs ${SCALE_RULE.sparseWeight}, dense ${SCALE_RULE.denseWeight}, so the reward is one of ${values}.`,
      '- It returns a finite number (not None, not a bool) for every possible input, including the first step of an episode (empty `previous_nearest_blocks`, a single entry in `past_agent_positions`); the dicts hold only the names seen this step, so read them with `.get(name)` or test `name in d` first.',
      `- Only \`import math\` and \`import numpy as np\` (a shim: sign, clip, sqrt, abs, mean, linalg.norm, …); no open, eval, exec, getattr or other modules: it runs in a sandbox limited to ${REWARD_LIMITS.callCpuMs} ms per call and ${REWARD_LIMITS.memoryMb} MB of memory. Use \`GLOBAL_DATA\` (a dict) for anything that must be remembered between steps.`,
    ].join('\n');
  return [
    `- The file is TypeScript (plain JavaScript syntax is fine) and exports one function with exactly this signature, parameters unannotated (they get their types from the inputs above):`,
    `  \`${rewardSignature(attack)} { ... }\``,
    '- It computes a dense value (shaping, every step) and a sparse value (rare events: success, damage, death), typically in helper functions named `dense` and `sparse`, and returns exactly',
    `  \`${SCALE_RULE.expression}\``,
    `  Only the signs of dense and sparse count: sparse weighs ${SCALE_RULE.sparseWeight}, dense ${SCALE_RULE.denseWeight}, so the reward is one of ${values}.`,
    '- It returns a finite number for every possible input, including the first step of an episode (empty `previous_nearest_blocks`, `past_agent_positions` holding two entries: the start position and the current one).',
    `- No imports, \`require\`, file, network, timers or \`process\`: it runs in a sandbox limited to ${REWARD_LIMITS.callCpuMs} ms per call and ${REWARD_LIMITS.memoryMb} MB of memory. Use \`GLOBAL_DATA\` for anything that must be remembered between steps.`,
  ].join('\n');
}

/** The valid names a reward for this task is likely to need, and the usual wrong ones, all from the schema. */
export function namesText(task: TaskSpec | undefined): string {
  const schema = loadSchema();
  const attack = task?.attack ?? false;
  const blocks = [...schema.blocks]
    .filter((n) => /(_ore|_log|_leaves)$|^(lava|water|stone|dirt|grass_block|sand|gravel|bedrock|cobblestone|obsidian|fire)$/.test(n))
    .sort();
  const targets = task ? successTargets(task) : [];
  // Only words that are no Minecraft name at all: `diamond` or `beef` are real items, the linter judges their use.
  const mistakes = Object.entries(NAME_ALIASES)
    .filter(([wrong]) => schema.kindsOf(wrong).length === 0)
    .map(([wrong, right]) => `\`${wrong}\` → ${right.map((r) => `\`${r}\``).join(' or ')}`);
  return [
    `Names are Minecraft ${schema.gameVersion} registry ids without the \`minecraft:\` prefix. Keys of the nearest-blocks dictionaries are block and mob names; keys of \`inventory_change\` are item names${attack ? '; keys of `kill_entity` are mob names' : ''}.`,
    ...(targets.length > 0 ? [`- The task's success refers to: ${targets.map((t) => `\`${t}\``).join(', ')}.`] : []),
    `- Common blocks: ${blocks.join(', ')}.`,
    `- Mobs: ${[...schema.mobs].sort().join(', ')}.`,
    `- Not names (use the real ones): ${mistakes.join('; ')}.`,
  ].join('\n');
}

/**
 * The shared context block every role gets: task, game facts, inputs, names, contract. Without a task (a
 * critique of a file with no task header) the attack parameters are included when the source uses them.
 */
export function contextText(task: TaskSpec | undefined, source?: string, language: RewardLanguage = 'typescript'): string {
  const attack = task?.attack ?? /\b(damage_dealt|kill_entity)\b/.test(source ?? '');
  return renderTemplate('context', {
    task_description: task ? taskDescriptionText(task) : 'No task was specified: judge the reward function on its own terms and the facts below.',
    game_facts: gameFactsText(),
    parameters: parametersText(attack),
    nearest_entry: entryText(NEAREST_ENTRY),
    position_entry: entryText(POSITION_ENTRY),
    names: namesText(task),
    reward_contract: rewardContractText(attack, language),
  });
}

/** Source with 1-based line numbers, so roles can anchor findings to lines. */
export function numberedSource(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const width = String(lines.length).length;
  return lines.map((l, i) => `${String(i + 1).padStart(width)}| ${l}`).join('\n');
}
