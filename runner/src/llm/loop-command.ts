// `rewardsmith loop`: the improvement loop (loop.ts) as a command: its options, where candidates train, and the
// iteration table at the end.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROCESS_IO, UsageError, type CommandIo } from '../args';
import { makeEvent } from '../events';
import { MAX_ENVS } from '../runs/config';
import { BACKEND_CHOICES } from '../ppo/backend';
import { RUN_FILES } from '../records';
import { resolveTask } from '../tasks';
import { cancellableOnSignal, ENGINE_CHOICE, ENGINE_SETTINGS, engineFromOptions } from '../sweep/engine-options';
import { LlmNotConfiguredError, LLM_LOG_FILE, resolveLlmConfig, isLlmConfigured } from './client';
import { EVENTS_OPTION, runLlmCommand } from './command';
import { runLoop } from './loop';
import { localTrainEngine } from './train-step';
import { languageOf } from './prompts';
import { resultsTable } from './loop-results';
import type { LoopOptions } from './loop-types';

export const LOOP_SPEC = {
  command: 'loop',
  summary: `Runs design → lint → critic → train → evaluate → analyze N times (the paper's Algorithm 1). Every
iteration's reward files, critiques, run and analysis stay in DIR; running the same command again resumes an
interrupted loop. --candidates K samples K rewards per iteration and keeps the best by evaluation success.
Each candidate trains as a \`rewardsmith train\` job, on this machine one at a time; --engine local|slurm trains each
iteration's candidates at once, as processes or Slurm jobs (with the options \`sweep\` and \`table\` take). An
interrupted loop waits for the jobs it left running.
--reward FILE starts from your reward instead of a fresh design. At the end, prints a table of iterations.
--no-llm (with --reward) needs no LLM: each iteration trains K sets of the analyzer's patches to the current
reward, every candidate from the same starting policy, and keeps the best only if its held-out success is
better than the current reward's by a one-sided test at 5 % (Newcombe's interval of the difference); a close
call evaluates both on up to twice as many fresh held-out worlds first. The table shows every candidate, its
difference to the reward in force, the decision and why, and the best reward measured (kept or not).
Every candidate starts from the task's foundation policy, as in the paper: the loop builds it once in
DIR/foundation (\`rewardsmith pretrain\` with --demos demonstrations, evaluated on held-out worlds) and fine-tunes
from it as \`train --init\` does (KL term to it, value pre-training, return normalisation). --init CHECKPOINT
starts from your policy instead; --from-scratch from none.
LLM: OPENAI_API_KEY, OPENAI_BASE_URL, REWARDSMITH_MODEL; every call is logged to DIR/${LLM_LOG_FILE}.`,
  options: {
    task: { type: 'string', valueName: 'TASK', description: 'built-in task id or a task file' },
    iterations: { type: 'int', min: 1, max: 1000, description: 'iterations of the loop' },
    out: { type: 'string', valueName: 'DIR', description: 'experiment folder' },
    candidates: { type: 'int', min: 1, max: 64, default: 1, description: 'rewards sampled per iteration' },
    steps: { type: 'int', min: 1, max: 1e10, default: 256_000, description: 'training frames per candidate' },
    reward: { type: 'string', valueName: 'FILE', description: 'start from this reward instead of a fresh design' },
    language: { type: 'string', choices: ['ts', 'py'], description: "the rewards' language (default: --reward's, else ts)" },
    seed: { type: 'int', min: 0, max: 2 ** 31 - 1, default: 0, description: 'run seed' },
    envs: { type: 'int', min: 1, max: MAX_ENVS, description: 'parallel environments of each training run' },
    'eval-episodes': { type: 'int', min: 1, max: 100_000, description: 'held-out evaluation episodes of each run' },
    backend: { type: 'string', choices: BACKEND_CHOICES, description: 'network engine (see train --help)' },
    init: { type: 'string', valueName: 'CHECKPOINT', description: "start every candidate from this policy instead of the task's foundation" },
    'from-scratch': { type: 'boolean', description: "train every candidate from scratch instead of the task's foundation policy" },
    demos: { type: 'int', min: 1, max: 10_000, valueName: 'N', description: 'demonstrations behind the foundation the loop builds (default: as pretrain)' },
    'no-llm': { type: 'boolean', description: "improve --reward with the analyzer's patches, without an LLM" },
    engine: {
      ...ENGINE_CHOICE,
      description: "train each iteration's candidates at once, as processes or Slurm jobs (default: one after another, in this process)",
    },
    ...ENGINE_SETTINGS,
    events: EVENTS_OPTION,
  },
} as const;

export function loopCommand(argv: string[], terminal: CommandIo = PROCESS_IO): Promise<number> {
  return runLlmCommand(LOOP_SPEC, argv, terminal, async (values, { emit, progress, result: print }) => {
    if (!values.task || !values.out || !values.iterations) throw new UsageError('--task, --iterations and --out are required');
    const task = resolveTask(values.task);
    const noLlm = values['no-llm'] === true;
    if (noLlm && !values.reward) throw new UsageError('--no-llm improves a reward you give: pass --reward FILE');
    if (!noLlm && !isLlmConfigured(resolveLlmConfig())) throw new LlmNotConfiguredError();
    if (values.reward && !existsSync(values.reward)) throw new UsageError(`--reward ${values.reward}: no such file`);
    const language = values.language ? (values.language === 'py' ? 'python' : 'typescript') : languageOf(values.reward);
    if (values.reward && language !== languageOf(values.reward)) throw new UsageError(`--reward ${values.reward} is not in --language ${values.language}`);
    const fromScratch = values['from-scratch'] === true;
    if (fromScratch && values.init) throw new UsageError('--init and --from-scratch exclude each other: start from your policy, or from none');
    if (values.demos !== undefined && (fromScratch || values.init))
      throw new UsageError(`--demos sizes the foundation the loop builds, which ${fromScratch ? '--from-scratch' : '--init'} replaces`);
    if (values.init && !existsSync(values.init)) throw new UsageError(`--init ${values.init}: no such checkpoint`);
    const engine = await engineFromOptions(values);
    const out = path.resolve(values.out);
    const options: LoopOptions = {
      task,
      iterations: values.iterations,
      out,
      candidates: values.candidates,
      steps: values.steps,
      seed: values.seed,
      startReward: values.reward ? path.resolve(values.reward) : undefined,
      language,
      noLlm,
      ...(fromScratch || values.init ? {} : { foundation: { demos: values.demos } }),
      train: {
        envs: values.envs,
        evalEpisodes: values['eval-episodes'],
        backend: values.backend,
        init: values.init,
        // The jobs take the task as the command did: a built-in id, or the task file's path.
        taskArg: existsSync(values.task) ? path.resolve(values.task) : values.task,
        ...(engine ? { engine } : {}),
      },
      emit,
      say: progress,
    };
    emit?.(
      makeEvent({
        type: 'started',
        command: 'loop',
        task: task.id,
        reward_file: options.startReward ?? null,
        run_dir: out,
        backend: values.backend ?? 'auto',
        env: 'sim',
        total_frames: options.steps * options.iterations * options.candidates,
        num_envs: options.train?.envs ?? 0,
        resumed_from_frames: 0,
      }),
    );
    // Ctrl-C stops the training jobs (without --engine: the one running on this machine); the same command resumes.
    const { value: result } = await cancellableOnSignal('loop', engine ?? localTrainEngine(), progress, (signal) =>
      runLoop({ ...options, train: { ...options.train, signal } }),
    );
    print('\n' + resultsTable(result, out) + `\n\nExperiment folder: ${out}\n`);
    const last = result.iterations[result.iterations.length - 1]!;
    const lastChosen = last.candidates.find((c) => c.candidate === last.chosen);
    return { out, summary: lastChosen?.run ? path.join(out, lastChosen.run, RUN_FILES.summary) : null };
  });
}
