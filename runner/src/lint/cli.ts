// `rewardsmith lint`: the schema rules and TypeScript's checks without an editor (the language server
// publishes the same diagnostics), then the probes: each file replayed on its task's probe bank in the real
// sandbox, within a time budget. Loaded lazily by runner/src/cli.ts.
import { parseCommandArgs, runCommand, terminalJson, terminalText } from '../args';
import { readRewardFile, UnreadableRewardFile } from '../reward/compile';
import { checkReward, formatDiagnostic, playProbeCommand, taskOfReward } from './check';
import { unanalysableDiagnostic, type RewardDiagnostic } from './rules';

export const LINT_SPEC = {
  command: 'lint',
  summary: `Checks reward files (TypeScript, or Python: *.reward.py) against the observation schema and TypeScript, then probes
them: each file runs on its task's probe bank (recorded simulator episodes of success and of failure modes: standing still,
turning in place, …) in the real sandbox, reporting run-time errors, names the task never shows, and failure modes the reward
pays more than success, at the line that pays it. The task is --task or the file's \`// task:\` header (\`# task:\`
in Python); a file without one is not probed.
A finding a probe episode shows is followed by the command that plays it (\`rewardsmith playback FILE --probe N\`).
--format json prints one JSON array of {file, range, severity, code, message, source[, probe_episode]} with
0-based lines (LSP's).
Exit code 0: no error; 1: an error in some file; 2: a file could not be read (the others are still linted).`,
  positionals: 'FILE...',
  minPositionals: 1,
  maxPositionals: Number.MAX_SAFE_INTEGER,
  options: {
    format: { type: 'string', choices: ['text', 'json'], default: 'text', description: 'output format' },
    task: { type: 'string', valueName: 'TASK', description: "probe on this task (built-in id or task file) instead of each file's header" },
    'no-probe': { type: 'boolean', description: 'lint only: do not run the files on the probe bank' },
    'probe-budget': {
      type: 'int',
      min: 1,
      max: 3600,
      default: 60,
      valueName: 'SECONDS',
      description: 'stop starting probes once they took this long in all (recording a task’s bank the first time counts)',
    },
  },
} as const;

/** The `--format json` shape: LSP's diagnostic plus the file, without fixes. */
export interface LintJsonDiagnostic {
  file: string;
  range: RewardDiagnostic['range'];
  severity: RewardDiagnostic['severity'];
  code: string;
  message: string;
  source: RewardDiagnostic['source'];
  /** The probe episode that shows a probe finding, 1-based: `rewardsmith playback FILE --probe N` plays it. */
  probe_episode?: number;
}

export async function lintCommand(argv: string[]): Promise<number> {
  return runCommand('lint', async () => {
    const { values, positionals: files } = parseCommandArgs(LINT_SPEC, argv);
    const all: LintJsonDiagnostic[] = [];
    const unreadable: string[] = [];
    const notProbed: string[] = [];
    const started = performance.now();
    for (const file of files) {
      let text: string;
      try {
        text = readRewardFile(file);
      } catch (err) {
        if (!(err instanceof UnreadableRewardFile)) throw err;
        process.stderr.write(`rewardsmith lint: ${err.message}\n`);
        unreadable.push(file);
        continue;
      }
      // Whatever one file does to the checker, every other file still gets its result.
      let found: RewardDiagnostic[];
      try {
        const task = values['no-probe'] ? undefined : taskOfReward(file, text, values.task);
        const inBudget = performance.now() - started < values['probe-budget'] * 1000;
        if (!values['no-probe'] && (!task || !inBudget))
          notProbed.push(`${file} (${task ? 'the probe budget ran out' : 'no task: add a `// task:` header or pass --task'})`);
        const check = await checkReward(file, text, task, { probe: inBudget });
        found = check.diagnostics;
      } catch (err) {
        found = [unanalysableDiagnostic(text, 0, `Rewardsmith could not check this file: ${(err as Error).message}`)];
      }
      for (const d of found)
        all.push({
          file,
          range: d.range,
          severity: d.severity,
          code: d.code,
          message: d.message,
          source: d.source,
          ...(d.probeEpisode === undefined ? {} : { probe_episode: d.probeEpisode }),
        });
    }
    if (values.format === 'json') process.stdout.write(terminalJson(all) + '\n');
    else {
      for (const d of all) {
        process.stdout.write(formatDiagnostic(d.file, d, terminalText) + '\n');
        const watch = playProbeCommand(d.file, { probeEpisode: d.probe_episode });
        if (watch) process.stdout.write(`  watch it: ${terminalText(watch)}\n`);
      }
      const errors = all.filter((d) => d.severity === 'error').length;
      const linted = files.length - unreadable.length;
      const skipped = unreadable.length ? ` (${unreadable.length} not linted: ${unreadable.join(', ')})` : '';
      process.stdout.write(
        `${linted} of ${files.length} file(s) linted${skipped}, ${errors} error(s), ${all.filter((d) => d.severity === 'warning').length} warning(s)\n`,
      );
      if (notProbed.length > 0) process.stdout.write(`not probed: ${notProbed.join('; ')}\n`);
    }
    if (unreadable.length > 0) return 2;
    return all.some((d) => d.severity === 'error') ? 1 : 0;
  });
}
