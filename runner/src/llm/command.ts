// The one preamble of the LLM commands (`design`, `loop`): arguments, output streams, error format and the
// closing `finished` event. The streams follow one rule. With `--events ndjson`, stdout is a machine-readable
// stream: versioned events only, one per line, every progress line among them as a `log` event; the same lines
// go to stderr for a person watching. Without it, progress goes to stderr and stdout carries only the command's
// result (the loop's iteration table), so `> file` keeps the result and the terminal keeps the progress.
import { parseCommandArgs, reportCommandError, terminalText, type CommandIo, type CommandSpec, type OptionSpec, type ParsedValues } from '../args';
import { makeEvent, type RunnerEvent } from '../events';

/** The `--events` option both commands take. */
export const EVENTS_OPTION = { type: 'string', choices: ['ndjson'], description: 'print one JSON event per line on stdout' } as const;

export interface LlmCommandOutput {
  /** With --events: writes one event on stdout; undefined without. */
  emit: ((e: RunnerEvent) => void) | undefined;
  /** A progress line: on stderr, and with --events also a `log` event. */
  progress(line: string): void;
  /** The command's result for people: stdout, or stderr with --events (stdout then carries only events). */
  result(text: string): void;
}

/**
 * What these commands print carries the models' words (critiques, analyses, error text from the server),
 * so all of it goes through terminalText; ndjson events stay valid JSON (their controls are escaped).
 */
function safeIo(io: CommandIo): CommandIo {
  return { stdout: (t) => io.stdout(terminalText(t)), stderr: (t) => io.stderr(terminalText(t)) };
}

/** Parses the arguments, sets up the streams, and runs the command's body in the one error format, with a `finished` event either way. */
export async function runLlmCommand<O extends Record<string, OptionSpec> & { events: typeof EVENTS_OPTION }>(
  spec: CommandSpec<O>,
  argv: string[],
  terminal: CommandIo,
  body: (values: ParsedValues<O>, output: LlmCommandOutput) => Promise<{ out: string; summary: string | null }>,
): Promise<number> {
  const io = safeIo(terminal);
  let values: ParsedValues<O>;
  try {
    ({ values } = parseCommandArgs(spec, argv));
  } catch (err) {
    return reportCommandError(spec.command, err, io);
  }
  const events = (values as { events?: string }).events === 'ndjson';
  const emit = events ? (e: RunnerEvent) => io.stdout(JSON.stringify(e) + '\n') : undefined;
  const output: LlmCommandOutput = {
    emit,
    progress: (line) => {
      io.stderr(line + '\n');
      emit?.(makeEvent({ type: 'log', level: 'info', message: line }));
    },
    result: (text) => (events ? io.stderr(text) : io.stdout(text)),
  };
  try {
    const { out, summary } = await body(values, output);
    emit?.(makeEvent({ type: 'finished', ok: true, run_dir: out, summary }));
    return 0;
  } catch (err) {
    const code = reportCommandError(spec.command, err, io);
    if (code !== 0) emit?.(makeEvent({ type: 'finished', ok: false, run_dir: '', summary: null, error: err instanceof Error ? err.message : String(err) }));
    return code;
  }
}
