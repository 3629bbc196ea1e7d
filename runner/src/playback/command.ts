// `rewardsmith playback RUN --episode N`: one recorded episode of a run re-simulated (replay.ts), written as
// an animated GIF (`--out ep.gif`) or as JSON for the dashboard (`--format json`, the PlaybackRecord of
// records.ts), else summarised in a few lines. Also the run-level helpers the report uses.
import path from 'node:path';
import { CommandError, didYouMean, parseCommandArgs, requireExisting, runCommand, terminalText, UsageError, type CommandIo, PROCESS_IO } from '../args';
import { taskOfReward } from '../lint/check';
import { probeBankAsync } from '../probe/index';
import { readRewardFile, UnreadableRewardFile } from '../reward/compile';
import { bankBehaviours, probeEpisodeIndex, probePlayback } from './probe';
import { readEpisodes, readSuggestions, readSummary, RunRecordError, runTaskRef, type EpisodeRecord, type PlaybackRecord, type RunSummary } from '../records';
import { writeAtomic } from '../files';
import { resolveTask, type TaskSpec } from '../tasks';
import { framesPng, playbackGif } from './encode';
import { MAX_FRAMES, PlaybackError, replayEpisode, type Playback } from './replay';

/** The task a run's episodes are re-simulated in; a PlaybackError saying why when they cannot be. */
export function playbackTask(summary: Pick<RunSummary, 'task' | 'task_file' | 'env'> | null | undefined): TaskSpec {
  if (!summary) throw new PlaybackError('the run has no summary.json naming its task');
  // A server's world (its mobs, its chunks) is not the simulator's, so frames re-simulated
  // here would show another world; nothing is shown rather than something wrong.
  if (summary.env === 'mineflayer')
    throw new PlaybackError(
      'the run used the mineflayer backend: its episodes were played on a Minecraft server, whose world the simulator does not re-create, so they cannot be re-simulated (playback covers simulator runs)',
    );
  try {
    return resolveTask(runTaskRef(summary));
  } catch (err) {
    throw new PlaybackError(`its task ${runTaskRef(summary)} cannot be loaded: ${(err as Error).message}`);
  }
}

/** A playback as the JSON the dashboard reads (frames as one base64 palette PNG). */
export function playbackRecord(p: Playback): PlaybackRecord {
  return {
    version: 1,
    episode: p.episode,
    seed: p.seed,
    task: p.task,
    steps: p.steps,
    outcome: p.outcome,
    width: p.width,
    height: p.height,
    every: p.every,
    frame_count: p.frames.length,
    frames_png: framesPng(p).toString('base64'),
    rows: p.rows,
    notes: p.notes,
    remarks: p.remarks,
    reproduced: p.reproduced,
    ...(p.probe ? { probe: p.probe } : {}),
  };
}

export const PLAYBACK_SPEC = {
  command: 'playback',
  summary:
    "Re-simulates one recorded episode of a run from its seed and actions and shows what the agent saw: an animated GIF\n(--out FILE.gif), JSON for the dashboard (--format json), or a summary of its timeline. With --probe, RUN is a\nreward file and the episode one of its task's probe bank (what `rewardsmith lint` probes it on), with its rewards.",
  positionals: 'RUN | REWARD_FILE --probe N',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    episode: { type: 'int', min: 0, max: 1e9, valueName: 'N', description: "the episode's number in eval/episodes.ndjson (default: the first failed one)" },
    probe: {
      type: 'string',
      valueName: 'N|BEHAVIOUR',
      description: "a probe episode of the reward file's task: its number in a probe finding, or a behaviour (still, turn, …)",
    },
    task: { type: 'string', valueName: 'TASK', description: "with --probe: the task (built-in id or task file) instead of the file's `// task:` header" },
    out: { type: 'string', valueName: 'FILE.gif', description: 'write the episode as an animated GIF' },
    format: { type: 'string', choices: ['text', 'json'], default: 'text', description: 'json: the playback record on stdout (frames as a base64 PNG)' },
    'max-frames': {
      type: 'int',
      min: 1,
      max: 5000,
      default: MAX_FRAMES,
      valueName: 'N',
      description: 'frames at most; a longer episode shows one frame every k steps',
    },
  },
} as const;

function pickEpisode(episodes: EpisodeRecord[], wanted: number | undefined, file: string): EpisodeRecord {
  if (wanted === undefined) {
    const failed = episodes.find((e) => !e.success);
    if (!failed) throw new CommandError(`${file}: no failed episode; name one with --episode N`);
    return failed;
  }
  const ep = episodes.find((e) => e.episode === wanted);
  if (!ep) {
    const ids = episodes.map((e) => e.episode);
    throw new UsageError(`--episode ${wanted}: no such episode in ${file} (episodes ${Math.min(...ids)}–${Math.max(...ids)})`);
  }
  return ep;
}

/** A run's episode, re-simulated (`rewardsmith playback RUN [--episode N]`). */
function runEpisode(dir: string, episode: number | undefined, maxFrames: number): Playback {
  const runDir = requireExisting(dir, 'run folder');
  try {
    const episodes = readEpisodes(runDir);
    const ep = pickEpisode(episodes, episode, path.join(runDir, 'eval', 'episodes.ndjson'));
    const task = playbackTask(readSummary(runDir));
    return replayEpisode(task, ep, { maxFrames, suggestions: readSuggestions(runDir)?.suggestions ?? [] });
  } catch (err) {
    if (err instanceof RunRecordError) throw new CommandError(err.message);
    if (err instanceof PlaybackError) throw new CommandError(`${runDir}: ${err.message}`);
    throw err;
  }
}

/** A probe episode of a reward file's task with the file's rewards (`rewardsmith playback REWARD --probe N`). */
async function probeEpisode(file: string, which: string, taskName: string | undefined, maxFrames: number): Promise<Playback> {
  const rewardFile = requireExisting(file, 'reward file');
  let text: string;
  try {
    text = readRewardFile(rewardFile);
  } catch (err) {
    if (err instanceof UnreadableRewardFile) throw new UsageError(err.message);
    throw err;
  }
  const task = taskOfReward(rewardFile, text, taskName);
  if (!task) throw new UsageError(`${rewardFile} names no task: add a \`// task:\` header or pass --task`);
  const bank = await probeBankAsync(task);
  const index = probeEpisodeIndex(bank, which);
  if (index === undefined) {
    const behaviours = bankBehaviours(bank);
    const [near] = /^\d+$/.test(which) ? [] : didYouMean(which, behaviours);
    throw new UsageError(
      `--probe ${which}: ${task.id}'s probe bank has episodes 1–${bank.episodes.length} and the behaviours ${behaviours.join(', ')}${near ? `; did you mean ${near}?` : ''}`,
    );
  }
  try {
    return await probePlayback(rewardFile, task, index, { bank, maxFrames });
  } catch (err) {
    if (err instanceof PlaybackError) throw new CommandError(`${rewardFile}: ${err.message}`);
    throw err;
  }
}

export async function playbackCommand(argv: string[], io: CommandIo = PROCESS_IO): Promise<number> {
  return runCommand(
    'playback',
    async () => {
      const { values, positionals } = parseCommandArgs(PLAYBACK_SPEC, argv);
      if (values.out !== undefined && !/\.gif$/i.test(values.out)) throw new UsageError(`--out ${values.out}: playback writes an animated GIF; name it *.gif`);
      if (values.episode !== undefined && values.probe !== undefined)
        throw new UsageError("--episode and --probe: choose one (a run's episode, or a probe episode)");
      if (values.task !== undefined && values.probe === undefined) throw new UsageError('--task goes with --probe (a run names its own task)');
      const playback =
        values.probe !== undefined
          ? await probeEpisode(positionals[0]!, values.probe, values.task, values['max-frames'])
          : runEpisode(positionals[0]!, values.episode, values['max-frames']);
      if (values.out !== undefined) {
        writeAtomic(path.dirname(values.out), values.out, playbackGif(playback));
        io.stderr(
          `playback: ${path.resolve(values.out)} (${playback.frames.length} frames, ${playback.every > 1 ? `one every ${playback.every} steps` : 'one per step'})\n`,
        );
      }
      if (values.format === 'json') {
        io.stdout(`${JSON.stringify(playbackRecord(playback))}\n`);
        return 0;
      }
      if (values.out === undefined) io.stdout(summaryText(playback));
      return 0;
    },
    io,
  );
}

/** A few lines about the episode: outcome, return, where the target was closest, the analyzer's notes. */
function summaryText(p: Playback): string {
  const rewards = p.rows.map((r) => r.reward).filter((r): r is number => r !== null);
  const closest = p.rows.reduce<{ d: number; step: number } | null>(
    (best, r) => (r.target !== null && (!best || r.target < best.d) ? { d: r.target, step: r.step } : best),
    null,
  );
  const lines = [
    p.probe
      ? `probe episode ${p.probe.number} of ${p.probe.of} (${p.probe.description}, world ${p.seed}, ${p.task}): ${p.outcome} after ${p.steps} steps`
      : `episode ${p.episode} (seed ${p.seed}, ${p.task}): ${p.outcome} after ${p.steps} steps`,
    rewards.length ? `return ${rewards.reduce((a, b) => a + b, 0).toFixed(3)}` : 'no per-step rewards recorded',
    closest ? `nearest target ${closest.d.toFixed(1)} m away at step ${closest.step}` : 'no target in view at any frame',
    ...p.notes.map((n) => `${n.suggestion}${n.steps ? ` (steps ${n.steps[0]}–${n.steps[1]})` : ''}: ${n.note}`),
    ...p.remarks,
    p.probe ? 'Write it as a GIF with --out FILE.gif.' : 'Write it as a GIF with --out FILE.gif; `rewardsmith report` shows it with its timeline.',
  ];
  // Notes and the task name come from the run's files: nothing in them may drive the terminal.
  return `${terminalText(lines.join('\n'))}\n`;
}
