// `rewardsmith lint`: the schema rules and TypeScript's checks without an editor (the language server
// publishes the same diagnostics). Loaded lazily by runner/src/cli.ts.
import { parseCommandArgs, runCommand, terminalJson, terminalText } from '../args';
import { readRewardFile, UnreadableRewardFile } from '../reward/compile';
import { isPythonFile, lintText, loadPythonParser, unanalysableDiagnostic, type RewardDiagnostic } from './rules';

export const LINT_SPEC = {
  command: 'lint',
  summary: `Checks reward files (TypeScript, or Python: *.reward.py) against the observation schema and TypeScript. --format json prints one JSON array of
{file, range, severity, code, message, source} with 0-based lines (LSP's).
Exit code 0: no error; 1: an error in some file; 2: a file could not be read (the others are still linted).`,
  positionals: 'FILE...',
  minPositionals: 1,
  maxPositionals: Number.MAX_SAFE_INTEGER,
  options: {
    format: { type: 'string', choices: ['text', 'json'], default: 'text', description: 'output format' },
  },
} as const;

/** The `--format json` shape: LSP's diagnostic plus the file, without fixes. */
export interface LintJsonDiagnostic {
  file: string;
  range: RewardDiagnostic['range'];
  severity: RewardDiagnostic['severity'];
  code: string;
  message: string;
  source: 'rewardsmith';
}

export async function lintCommand(argv: string[]): Promise<number> {
  return runCommand('lint', async () => {
    const { values, positionals: files } = parseCommandArgs(LINT_SPEC, argv);
    const all: LintJsonDiagnostic[] = [];
    const unreadable: string[] = [];
    if (files.some(isPythonFile)) await loadPythonParser();
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
        found = lintText(file, text);
      } catch (err) {
        found = [unanalysableDiagnostic(text, 0, `Rewardsmith could not check this file: ${(err as Error).message}`)];
      }
      for (const d of found) all.push({ file, range: d.range, severity: d.severity, code: d.code, message: d.message, source: d.source });
    }
    if (values.format === 'json') process.stdout.write(terminalJson(all) + '\n');
    else {
      for (const d of all)
        process.stdout.write(`${d.file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.severity} ${d.code}: ${terminalText(d.message)}\n`);
      const errors = all.filter((d) => d.severity === 'error').length;
      const linted = files.length - unreadable.length;
      const skipped = unreadable.length ? ` (${unreadable.length} not linted: ${unreadable.join(', ')})` : '';
      process.stdout.write(
        `${linted} of ${files.length} file(s) linted${skipped}, ${errors} error(s), ${all.filter((d) => d.severity === 'warning').length} warning(s)\n`,
      );
    }
    if (unreadable.length > 0) return 2;
    return all.some((d) => d.severity === 'error') ? 1 : 0;
  });
}
