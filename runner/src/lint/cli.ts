// `rewardsmith lint`: the schema rules and TypeScript's checks without an editor (the language server
// publishes the same diagnostics). Loaded lazily by runner/src/cli.ts.
import { readFileSync } from 'node:fs';
import { terminalJson, terminalText } from '../args';
import { lintText, unanalysableDiagnostic, type RewardDiagnostic } from './rules';

const LINT_USAGE = `usage: rewardsmith lint [--format json|text] FILE...

Checks reward files against the observation schema and TypeScript. --format json prints one JSON array of
{file, range, severity, code, message, source} with 0-based lines (LSP's). Exit code 1 when any error.`;

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
  let format: 'json' | 'text' = 'text';
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--help' || a === '-h') {
      process.stdout.write(LINT_USAGE + '\n');
      return 0;
    }
    if (a === '--format' || a.startsWith('--format=')) {
      const value = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (value !== 'json' && value !== 'text') {
        process.stderr.write(`rewardsmith lint: --format must be json or text, got ${value ?? 'nothing'}\n`);
        return 2;
      }
      format = value;
    } else if (a.startsWith('-')) {
      process.stderr.write(`rewardsmith lint: unknown option ${a}\n\n${LINT_USAGE}\n`);
      return 2;
    } else files.push(a);
  }
  if (files.length === 0) {
    process.stderr.write(`${LINT_USAGE}\n`);
    return 2;
  }
  const all: LintJsonDiagnostic[] = [];
  let unreadable = false;
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      process.stderr.write(`rewardsmith lint: cannot read ${file}: ${(err as Error).message}\n`);
      unreadable = true;
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
  // Messages quote the file's own names and strings, which a model may have written.
  if (format === 'json') process.stdout.write(terminalJson(all) + '\n');
  else {
    for (const d of all) process.stdout.write(`${d.file}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.severity} ${d.code}: ${terminalText(d.message)}\n`);
    const errors = all.filter((d) => d.severity === 'error').length;
    process.stdout.write(`${files.length} file(s), ${errors} error(s), ${all.filter((d) => d.severity === 'warning').length} warning(s)\n`);
  }
  if (unreadable) return 2;
  return all.some((d) => d.severity === 'error') ? 1 : 0;
}
