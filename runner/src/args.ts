// The one argument parser of every `rewardsmith` command: typed options declared once per command,
// `--help` generated from them (exit 0), did-you-mean for unknown options and enum values, and one error
// format, `rewardsmith <command>: <message>`, with exit code 2 for usage errors and 1 for failures.
// User errors never print a stack trace; unexpected ones do only with REWARDSMITH_DEBUG=1.
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { isMap, isNode, isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { editDistance } from './schema';

/** A mistake in how the command was called (exit 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure the user can act on, reported as one line without a stack (exit 1). */
export class CommandError extends Error {
  override readonly name: string = 'CommandError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

interface OptionBase {
  description: string;
  /** One-letter alias, e.g. `h`. */
  short?: string;
  /** Placeholder in the help text, e.g. `DIR`. */
  valueName?: string;
}
export interface StringOption extends OptionBase {
  type: 'string';
  default?: string;
  /** Allowed values; anything else is a usage error with a did-you-mean. */
  choices?: readonly string[];
}
export interface IntOption extends OptionBase {
  type: 'int';
  default?: number;
  min?: number;
  max?: number;
}
export interface NumberOption extends OptionBase {
  type: 'number';
  default?: number;
  min?: number;
  max?: number;
}
export interface BooleanOption extends OptionBase {
  type: 'boolean';
}
/** Takes every following value up to the next option: `--rewards a.ts b.ts`; may also be repeated. */
export interface ListOption extends OptionBase {
  type: 'list';
}
export type OptionSpec = StringOption | IntOption | NumberOption | BooleanOption | ListOption;

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** The command's name as typed: `train`. */
  command: string;
  /** One line under the usage line. */
  summary: string;
  /** Positional arguments in the usage line, e.g. `REWARD_FILE` or `[FILE...]`. */
  positionals?: string;
  /** Lowest and highest number of positionals (default 0..0). */
  minPositionals?: number;
  maxPositionals?: number;
  options: O;
  /** Extra text after the option list (examples, notes). */
  epilog?: string;
}

type ValueOf<S extends OptionSpec> = S extends BooleanOption
  ? boolean
  : S extends ListOption
    ? string[]
    : S extends IntOption | NumberOption
      ? S extends { default: number }
        ? number
        : number | undefined
      : S extends { default: string }
        ? string
        : string | undefined;

export type ParsedValues<O extends Record<string, OptionSpec>> = { [K in keyof O]: ValueOf<O[K]> };

export interface ParsedArgs<O extends Record<string, OptionSpec>> {
  values: ParsedValues<O>;
  positionals: string[];
  /** Options the user gave explicitly (so a config file's value can be overridden only by them). */
  given: ReadonlySet<keyof O & string>;
}

/** Closest candidates to `word` by edit distance (and prefix), for "did you mean". */
export function didYouMean(word: string, candidates: Iterable<string>, limit = 1): string[] {
  const threshold = Math.max(2, Math.floor(word.length / 3));
  return [...candidates]
    .map((c) => [c, c.startsWith(word) && word.length >= 2 ? 0 : editDistance(word, c)] as const)
    .filter(([, d]) => d <= threshold)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([c]) => c);
}

function suggestion(word: string, candidates: Iterable<string>, prefix = ''): string {
  const [best] = didYouMean(word, candidates);
  return best === undefined ? '' : ` (did you mean ${prefix}${best}?)`;
}

export function helpText<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): string {
  const lines = [`usage: rewardsmith ${spec.command}${spec.positionals ? ` ${spec.positionals}` : ''} [options]`, '', spec.summary, '', 'options:'];
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const value =
      o.type === 'boolean' ? '' : ` ${o.valueName ?? (o.type === 'list' ? 'VALUE...' : o.type === 'string' && o.choices ? o.choices.join('|') : 'VALUE')}`;
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${value}`;
    const dflt = 'default' in o && o.default !== undefined ? ` (default ${o.default})` : '';
    return [flag, o.description + dflt] as const;
  });
  rows.push(['-h, --help', 'show this help']);
  const width = Math.min(34, Math.max(...rows.map(([f]) => f.length)));
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  if (spec.epilog) lines.push('', spec.epilog);
  return lines.join('\n') + '\n';
}

/** Thrown by `parseCommandArgs` when the user asked for help; `runCommand` prints it and exits 0. */
export class HelpRequested extends Error {
  constructor(readonly text: string) {
    super('help requested');
  }
}

/**
 * Checks a value read from a file (a training configuration, a task file) against the same kind of spec a
 * flag has: type, integer-ness, bounds, choices. Returns the reason it is wrong, or null when it is fine;
 * the caller names the field and where it is. Strings are never coerced ("false" is not a boolean).
 */
export function checkValue(o: OptionSpec, value: unknown): string | null {
  switch (o.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : `must be true or false, got ${JSON.stringify(value)}`;
    case 'int':
    case 'number': {
      const what = o.type === 'int' ? 'an integer' : 'a number';
      if (typeof value !== 'number' || !Number.isFinite(value)) return `must be ${what}, got ${JSON.stringify(value)}`;
      if (o.type === 'int' && !Number.isInteger(value)) return `must be an integer, got ${value}`;
      if (o.min !== undefined && value < o.min) return `must be ≥ ${o.min}, got ${value}`;
      if (o.max !== undefined && value > o.max) return `must be ≤ ${o.max}, got ${value}`;
      return null;
    }
    case 'string':
      if (typeof value !== 'string') return `must be a string, got ${JSON.stringify(value)}`;
      if (o.choices && !o.choices.includes(value)) return `must be one of ${o.choices.join(', ')}, got "${value}"${suggestion(value, o.choices)}`;
      return null;
    case 'list':
      return Array.isArray(value) && value.every((v) => typeof v === 'string') ? null : `must be a list of strings, got ${JSON.stringify(value)}`;
  }
}

function convert(name: string, o: OptionSpec, raw: string): string | number {
  if (o.type === 'int' || o.type === 'number') {
    const v = raw.trim() === '' ? Number.NaN : Number(raw);
    const what = o.type === 'int' ? 'an integer' : 'a number';
    if (!Number.isFinite(v) || (o.type === 'int' && !Number.isInteger(v))) throw new UsageError(`--${name} must be ${what}, got "${raw}"`);
    if (o.min !== undefined && v < o.min) throw new UsageError(`--${name} must be ≥ ${o.min}, got ${raw}`);
    if (o.max !== undefined && v > o.max) throw new UsageError(`--${name} must be ≤ ${o.max}, got ${raw}`);
    return v;
  }
  if (o.type === 'string' && o.choices && !o.choices.includes(raw)) {
    throw new UsageError(`--${name} must be one of ${o.choices.join(', ')}, got "${raw}"${suggestion(raw, o.choices)}`);
  }
  return raw;
}

/**
 * Parses `argv` against the command's spec. Throws `HelpRequested` for -h/--help and `UsageError` for
 * anything wrong (unknown option with did-you-mean, missing value, bad number or choice, positionals).
 */
export function parseCommandArgs<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>, argv: readonly string[]): ParsedArgs<O> {
  const options = spec.options as Record<string, OptionSpec>;
  const byShort = new Map(Object.entries(options).flatMap(([n, o]) => (o.short ? [[o.short, n] as const] : [])));
  const values: Record<string, unknown> = {};
  const given = new Set<string>();
  const positionals: string[] = [];
  for (const [name, o] of Object.entries(options)) {
    if (o.type === 'boolean') values[name] = false;
    else if (o.type === 'list') values[name] = [];
    else values[name] = o.default;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '--help' || arg === '-h') throw new HelpRequested(helpText(spec));
    if (!arg.startsWith('-') || arg === '-' || /^-\d/.test(arg)) {
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
      inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    } else {
      const full = byShort.get(arg.slice(1));
      if (!full) throw new UsageError(`unknown option ${arg}${suggestion(arg.slice(1), byShort.keys(), '-')}`);
      name = full;
    }
    const o = options[name];
    if (!o) throw new UsageError(`unknown option --${name}${suggestion(name, [...Object.keys(options), 'help'], '--')}`);
    given.add(name);
    if (o.type === 'boolean') {
      if (inline !== undefined) {
        if (inline !== 'true' && inline !== 'false') throw new UsageError(`--${name} takes no value (got "${inline}")`);
        values[name] = inline === 'true';
      } else values[name] = true;
      continue;
    }
    if (o.type === 'list') {
      const list = values[name] as string[];
      if (inline !== undefined) list.push(inline);
      while (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) list.push(argv[++i]!);
      if (list.length === 0) throw new UsageError(`--${name} needs at least one value`);
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && next.length > 2))
        throw new UsageError(`--${name} needs a value${o.valueName ? ` (${o.valueName})` : ''}`);
      raw = next;
      i++;
    }
    values[name] = convert(name, o, raw);
  }
  const min = spec.minPositionals ?? 0;
  const max = spec.maxPositionals ?? min;
  const what = spec.positionals ?? 'arguments';
  if (positionals.length < min) throw new UsageError(`missing ${what}`);
  if (positionals.length > max) {
    throw new UsageError(
      max === 0
        ? `unexpected argument "${positionals[0]}"`
        : `too many arguments: ${positionals
            .slice(max)
            .map((p) => `"${p}"`)
            .join(' ')}`,
    );
  }
  return { values: values as ParsedValues<O>, positionals, given: given as Set<keyof O & string> };
}

/** Task and configuration files are a few hundred bytes; past this a file is refused unread (a limit, as on every input). */
export const MAX_SETTINGS_FILE_BYTES = 1024 * 1024;

/** A problem in a settings file (task or configuration), at a place in it when there is one. */
export class SettingsFileError extends Error {
  override name = 'SettingsFileError';
  constructor(
    readonly file: string,
    readonly at: { line: number; col: number } | null,
    readonly reason: string,
  ) {
    super(`${file}${at ? `:${at.line}:${at.col}` : ''}: ${reason}`);
  }
}

/**
 * A YAML or JSON settings file (`what`: "task file", "configuration file"), parsed and checked in time linear
 * in its size: refused unread above MAX_SETTINGS_FILE_BYTES, and duplicate keys found with one set per map
 * (the yaml package's own check compares each key with every earlier one: 40,000 keys took 12 CPU-seconds).
 * `locate` turns a node's offset into a line and column.
 */
export function readSettingsFile(file: string, what: string): { doc: Document; locate: (offset: number | undefined) => { line: number; col: number } } {
  let text: string;
  // Without waiting (O_NONBLOCK): a task file's path may be a record's (a run's summary.json), and a FIFO there
  // would block the read forever.
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile())
      throw new SettingsFileError(
        file,
        null,
        `${stats.isDirectory() ? 'a folder' : 'not a plain file (a FIFO or a device)'}; a ${what} is read only from a plain file`,
      );
    const size = stats.size;
    if (size > MAX_SETTINGS_FILE_BYTES)
      throw new SettingsFileError(
        file,
        null,
        `${size.toLocaleString('en-US')} bytes, more than the ${MAX_SETTINGS_FILE_BYTES / 1024 / 1024} MiB a ${what} may hold`,
      );
    const buf = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buf, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    text = buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
  const lineCounter = new LineCounter();
  const locate = (offset: number | undefined) => lineCounter.linePos(offset ?? 0);
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) throw new SettingsFileError(file, locate(doc.errors[0]!.pos[0]), doc.errors[0]!.message.split('\n')[0]!);
  visit(doc, {
    Map(_, map) {
      const first = new Map<unknown, number | undefined>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = pair.key.value;
        const offset = pair.key.range?.[0];
        if (first.has(key)) {
          const earlier = locate(first.get(key));
          throw new SettingsFileError(file, locate(offset), `duplicate key "${String(key)}" (first at ${earlier.line}:${earlier.col})`);
        }
        first.set(key, offset);
      }
    },
  });
  return { doc, locate };
}

/** A file or folder named on the command line: one that does not exist is a usage error (exit 2). */
export function requireExisting(p: string, what: string): string {
  if (!existsSync(p)) throw new UsageError(`${p}: no such ${what}`);
  return p;
}

/**
 * Reads an options file (YAML or JSON, a map of option names as on the command line, without `--`) and
 * fills in every option the user did not give as a flag: flags override the file. Each value is checked
 * with the option's own spec; a mistake is a usage error located in the file (`file:line:col: key: why`),
 * with a did-you-mean for unknown keys. `fileKeys` limits which options may come from a file.
 */
export function applyOptionsFile<O extends Record<string, OptionSpec>>(
  spec: CommandSpec<O>,
  parsed: ParsedArgs<O>,
  file: string,
  fileKeys: readonly string[],
): Record<string, unknown> {
  let doc: Document;
  let locate: (offset: number | undefined) => { line: number; col: number };
  try {
    ({ doc, locate } = readSettingsFile(file, 'configuration file'));
  } catch (err) {
    if (err instanceof SettingsFileError) throw new UsageError(err.message);
    throw new UsageError(`${file}: cannot read the configuration file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const at = (offset: number | undefined) => {
    const p = locate(offset);
    return `${file}:${p.line}:${p.col}`;
  };
  const contents = doc.contents;
  if (contents === null || (isScalar(contents) && contents.value === null)) return {};
  if (!isMap(contents)) throw new UsageError(`${file}: a configuration file must be a map of option names to values`);
  const options = spec.options as Record<string, OptionSpec>;
  const fromFile: Record<string, unknown> = {};
  for (const pair of contents.items) {
    const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
    const keyStart = (pair.key as { range?: [number, number, number] } | null)?.range?.[0];
    const o = options[key];
    if (!o || !fileKeys.includes(key)) {
      throw new UsageError(`${at(keyStart)}: unknown key "${key}"${suggestion(key, fileKeys)}; a configuration file may set ${fileKeys.join(', ')}`);
    }
    const value = isNode(pair.value) ? pair.value.toJS(doc) : pair.value;
    const why = checkValue(o, value);
    if (why) throw new UsageError(`${at((pair.value as { range?: [number, number, number] } | null)?.range?.[0])}: ${key} ${why}`);
    fromFile[key] = value;
    if (!parsed.given.has(key)) (parsed.values as Record<string, unknown>)[key] = value;
  }
  return fromFile;
}

// Terminal control sequences: CSI (ESC [ … final byte, or its 8-bit form), terminated OSC/DCS/SOS/PM/APC
// strings (ESC ] … BEL or ST, or their 8-bit forms), other ESC sequences, then any C0/C1 control left over
// but newline and tab. An unterminated string loses only its introducer, which leaves plain text behind.
const CONTROL_SEQUENCES =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text that came from outside the program (an LLM's answer, a server's error, a reward file's strings and
 * errors) made safe to print to a terminal: no escape sequence can clear the screen, move the cursor, set
 * the window title or hide what follows. Newlines and tabs stay.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL_SEQUENCES, '');
}

/** JSON for a terminal: the same value, with the DEL and C1 characters JSON.stringify leaves raw escaped. */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Output streams of a command, so tests can capture them. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
export const PROCESS_IO: CommandIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

/**
 * Runs a command body and turns what it throws into the one error format. Usage errors also point to
 * `--help`; unexpected errors print their stack only with REWARDSMITH_DEBUG=1.
 */
export async function runCommand(command: string, body: () => Promise<number>, io: CommandIo = PROCESS_IO): Promise<number> {
  try {
    return await body();
  } catch (err) {
    return reportCommandError(command, err, io);
  }
}

export function reportCommandError(command: string, err: unknown, io: CommandIo = PROCESS_IO): number {
  if (err instanceof HelpRequested) {
    io.stdout(err.text);
    return 0;
  }
  const prefix = `rewardsmith ${command}: `;
  if (err instanceof UsageError) {
    io.stderr(`${prefix}${terminalText(err.message)}\nRun \`rewardsmith ${command} --help\` for its options.\n`);
    return 2;
  }
  if (err instanceof CommandError) {
    io.stderr(`${prefix}${terminalText(err.message)}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  const debug = process.env.REWARDSMITH_DEBUG === '1' && err instanceof Error && err.stack ? `\n${err.stack}` : '';
  io.stderr(`${prefix}${terminalText(message)}${debug}\n`);
  return 1;
}

let lastRunFolder: { dir: string; events: boolean } | null = null;
/**
 * A command that wrote a run folder (train, eval, analyze) names it here, so that the dispatcher can write
 * the run's report and end with one line saying where it is and what to run next.
 */
export function noteRunFolder(dir: string, events = false): void {
  lastRunFolder = { dir, events };
}
/** The run folder the last command named, forgotten once taken: the next command in this process names its own. */
export function takeNotedRunFolder(): { dir: string; events: boolean } | null {
  const noted = lastRunFolder;
  lastRunFolder = null;
  return noted;
}
