// `rewardsmith design`: one reward file for a task from the LLM designer, reviewed by the linter and the critic.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { CommandError, PROCESS_IO, UsageError, type CommandIo } from '../args';
import { makeFolderBelow, writeAtomic } from '../files';
import { resolveTask } from '../tasks';
import { LlmNotConfiguredError, resolveLlmConfig, isLlmConfigured } from './client';
import { EVENTS_OPTION, runLlmCommand } from './command';
import { designAndReview } from './designer';

export const DESIGN_SPEC = {
  command: 'design',
  summary: `Asks the LLM designer for a reward file for task T (a built-in id or a task file), checks it with the
linter (errors go back to the designer) and the LLM critic (up to 3 rounds), and writes it to FILE.
The drafts, critiques and LLM calls are kept in FILE's folder under .rewardsmith-design/<name>/.
LLM: OPENAI_API_KEY, OPENAI_BASE_URL, REWARDSMITH_MODEL.`,
  options: {
    task: { type: 'string', valueName: 'TASK', description: 'built-in task id or a task file' },
    out: { type: 'string', valueName: 'FILE', description: 'reward file to write' },
    language: { type: 'string', choices: ['ts', 'py'], description: "the reward's language (default: py when FILE ends in .py, else ts)" },
    events: EVENTS_OPTION,
  },
} as const;

export function designCommand(argv: string[], terminal: CommandIo = PROCESS_IO): Promise<number> {
  return runLlmCommand(DESIGN_SPEC, argv, terminal, async (values, { progress }) => {
    if (!values.task || !values.out) throw new UsageError('--task and --out are required');
    const task = resolveTask(values.task);
    if (!isLlmConfigured(resolveLlmConfig())) throw new LlmNotConfiguredError();
    const out = path.resolve(values.out);
    const workDir = path.join(path.dirname(out), '.rewardsmith-design', path.basename(out).replace(/\.reward\.(ts|js|py)$/, ''));
    const language = (values.language ?? (/\.py$/i.test(out) ? 'py' : 'ts')) === 'py' ? 'python' : 'typescript';
    if ((language === 'python') !== /\.py$/i.test(out))
      throw new UsageError(`--out ${values.out} does not end in .${language === 'python' ? 'py' : 'ts'}, the extension of --language ${values.language}`);
    // The work folder lies in the folder of --out, which may be shared: a linked .rewardsmith-design is refused
    // before anything in it is removed (rm follows a link on the way, not one in the last place).
    makeFolderBelow(path.dirname(out), path.dirname(workDir));
    rmSync(workDir, { recursive: true, force: true });
    progress(`designing a reward for ${task.id}`);
    const reviewed = await designAndReview({ task, request: { kind: 'initial' }, dir: workDir, log: { dir: workDir }, language });
    writeAtomic(path.dirname(out), path.join(workDir, 'review.json'), JSON.stringify(reviewed, null, 2) + '\n');
    for (const s of reviewed.steps) {
      if (s.errors.length > 0) progress(`draft ${s.draft}: ${s.errors.length} static error(s), sent back to the designer`);
      else if (s.critique) progress(`draft ${s.draft}: critic ${s.critique.success ? 'passed' : `failed: ${s.critique.critique?.split('\n')[0] ?? ''}`}`);
    }
    if (reviewed.source === null) throw new CommandError(reviewed.failure ?? 'the designer produced no usable reward');
    writeAtomic(path.dirname(out), out, reviewed.source);
    progress(`wrote ${out}${reviewed.criticPassed ? '' : ' (the critic still had objections after 3 rounds; see the review in ' + workDir + ')'}`);
    return { out, summary: null };
  });
}
