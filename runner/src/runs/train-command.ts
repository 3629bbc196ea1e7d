// `rewardsmith train`: the command line over `train()`, with the reward's check before anything is written, the
// terminal's progress and result table, and `--resume` of a run that has already finished.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommandError, noteRunFolder, runCommand } from '../args';
import { makeEvent } from '../events';
import { RUN_FILES } from '../records';
import { resolveTask } from '../tasks';
import { parseTrainArgs } from './config';
import { asCommandError, belowStartingPolicy, Reporter, resultTable } from './reporter';
import { finishedRun } from './run-folder';
import { train, type LiveAnalysis, type RewardGate } from './train';

export async function trainCommand(argv: string[], hooks: { liveAnalysis?: LiveAnalysis; gate?: RewardGate } = {}): Promise<number> {
  let reporter = new Reporter(false);
  return runCommand('train', async () => {
    const inv = parseTrainArgs(argv);
    reporter = new Reporter(inv.events);
    const c = inv.config;
    const finished = inv.resume ? finishedRun(inv.out) : null;
    if (finished) {
      // Resuming it would only evaluate the policy again and overwrite its results: say so instead.
      const message =
        `${path.resolve(inv.out)} has finished: ${finished.train.frames.toLocaleString('en-US')} of ${finished.train.frames.toLocaleString('en-US')} frames trained ` +
        `and ${finished.eval.episodes} held-out episodes evaluated; nothing to resume. Evaluate it again with ` +
        `\`rewardsmith eval ${inv.out} --episodes N --out DIR\`, or train longer in a new run (--init ${path.join(inv.out, RUN_FILES.checkpoint)}).`;
      reporter.emit(makeEvent({ type: 'log', level: 'info', message }));
      reporter.emit(makeEvent({ type: 'finished', ok: true, run_dir: path.resolve(inv.out), summary: path.join(path.resolve(inv.out), RUN_FILES.summary) }));
      if (!reporter.events) {
        const reward = finished.reward_file ? path.basename(finished.reward_file) : '-';
        process.stdout.write(`${resultTable([{ task: finished.task, reward, summary: finished }])}\n`);
      }
      return 0;
    }
    // The reward is read once: the text checked is the text trained, whatever happens to the file meanwhile.
    const rewardBytes = hooks.gate && inv.check && !inv.resume && inv.rewardFile && existsSync(inv.rewardFile) ? readFileSync(inv.rewardFile) : undefined;
    if (hooks.gate && rewardBytes)
      await checkBeforeTraining(hooks.gate, { file: inv.rewardFile!, text: rewardBytes.toString('utf8') }, c.task, reporter, inv.out);
    try {
      const summary = await train({
        rewardFile: inv.rewardFile,
        rewardBytes,
        rewardSha256: inv.rewardSha256,
        task: c.task || undefined,
        steps: c.steps,
        seed: c.seed,
        out: inv.out,
        envs: c.envs,
        backend: c.backend,
        // On resume, only an --init named now: the one config.json records is not loaded on its word (train.ts initRoot).
        init: (inv.resume && !inv.explicit.has('init') ? null : c.init) ?? undefined,
        resume: inv.resume,
        overwrite: inv.overwrite,
        evalEpisodes: c.evalEpisodes,
        workers: c.workers ?? undefined,
        rolloutSteps: c.rolloutSteps,
        trainEpisodeSteps: c.trainEpisodeSteps ?? undefined,
        checkpointEvery: c.checkpointEvery,
        hyperparameters: c.hyperparameters,
        config: c,
        emit: reporter.emit,
        onEvalEpisode: reporter.evalProgress,
        // Streamed suggestions are for editors reading events; the terminal gets the analysis after evaluation.
        liveAnalysis: reporter.events ? hooks.liveAnalysis : undefined,
      });
      if (!reporter.events) {
        const reward = summary.reward_file ? path.basename(summary.reward_file) : '-';
        const below = c.init ? belowStartingPolicy(summary, c.init) : null;
        process.stdout.write(
          `\n${resultTable([{ task: summary.task, reward, summary }])}\n${below ? `\n${below}\n` : ''}\nrun folder: ${path.resolve(inv.out)}\n`,
        );
      }
      noteRunFolder(inv.out, reporter.events);
      return 0;
    } catch (err) {
      throw asCommandError(err, reporter, 'the same command with --resume continues from the last checkpoint');
    }
  });
}

/**
 * Refuses a reward the check finds errors in, before the run folder exists (exit 1, the diagnostics on stderr, the
 * first error in the message for a sweep job's one line, a `finished` event with check_errors for an editor).
 */
async function checkBeforeTraining(gate: RewardGate, reward: { file: string; text: string }, taskName: string, reporter: Reporter, out: string): Promise<void> {
  const rewardFile = reward.file;
  const { report, errors } = await gate(reward, resolveTask(taskName));
  for (const line of report) process.stderr.write(`${line}\n`);
  if (errors > 0) {
    const first = report.find((line) => /:\d+:\d+.*\berror\b/.test(line));
    const message = `${rewardFile}: ${errors} error(s) found before training (above${first ? `; the first: ${first.trim()}` : ''}), so nothing was trained or written; fix them, or pass --no-check to train anyway`;
    reporter.emit(makeEvent({ type: 'finished', ok: false, run_dir: path.resolve(out), summary: null, error: message, check_errors: errors }));
    throw new CommandError(message);
  }
}
