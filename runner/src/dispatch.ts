// `rewardsmith <command>`: one dispatcher; each command lives with the module that implements it and is
// loaded lazily so that `rewardsmith lint` does not pay for TensorFlow or the Minecraft server stack.
// cli.ts runs it as the program; tests run it in-process (every command's exit codes in one process).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { didYouMean, parseCommandArgs, reportCommandError, takeNotedRunFolder, UsageError } from './args';
import { isInsideFolder } from './files';
import { readSuggestions, readSummary } from './records';

type CommandMain = (argv: string[]) => Promise<number>;

export const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandMain> }> = {
  train: {
    summary: 'train a PPO agent on a reward file',
    // The analyzer and the reward check (lint, probes) sit above runs/: the dispatcher hands them to training, the
    // check for before anything trains, the analyzer for the suggestions streamed while it runs.
    load: async () => {
      const [{ trainCommand }, { liveAnalysis }, { trainGate }] = await Promise.all([
        import('./runs/train-command'),
        import('./analyze/live'),
        import('./lint/check'),
      ]);
      return (argv: string[]) => trainCommand(argv, { liveAnalysis, gate: trainGate });
    },
  },
  eval: { summary: 'evaluate a checkpoint on held-out worlds', load: async () => (await import('./runs/eval-command')).evalCommand },
  pretrain: {
    summary: "behaviour-clone a foundation policy from a scripted teacher's demonstrations",
    load: async () => (await import('./pretrain/pretrain')).pretrainCommand,
  },
  table: {
    summary: "foundation / + sparse / + dense on the paper's tasks over seeds, with intervals (Markdown, CSV, SVG)",
    load: async () => (await import('./table/table')).tableCommand,
  },
  rollout: { summary: 'roll out a policy in an environment and summarise', load: async () => (await import('./runs/rollout')).rolloutCommand },
  lint: { summary: 'lint reward files against the observation schema', load: async () => (await import('./lint/cli')).lintCommand },
  lsp: { summary: 'start the language server (--stdio)', load: async () => lspCommand },
  critique: { summary: 'ask the LLM critic to review a reward file', load: async () => (await import('./llm/critique')).critiqueCommand },
  design: { summary: 'write a reward file for a task with the LLM designer', load: async () => (await import('./llm/design-command')).designCommand },
  analyze: { summary: "analyse a run's failed episodes and suggest patches", load: async () => (await import('./analyze/analyze')).analyzeCommand },
  apply: {
    summary: "apply one of the analyzer's patches to your reward file (shows the diff first)",
    load: async () => (await import('./analyze/apply')).applyCommand,
  },
  report: {
    summary: 'write an HTML report (curves, evaluation, deaths, maps, patches) of one or more runs',
    load: async () => (await import('./report/report')).reportCommand,
  },
  playback: {
    summary: 'replay a recorded episode: what the agent saw, step by step (GIF, or JSON for the dashboard)',
    load: async () => (await import('./playback/command')).playbackCommand,
  },
  sweep: { summary: 'train every reward × seed locally or on Slurm and rank the rewards', load: async () => (await import('./sweep/sweep')).sweepCommand },
  loop: { summary: 'run design → critic → train → analyze for N iterations', load: async () => (await import('./llm/loop-command')).loopCommand },
};

/** Commands the runner starts itself (not in the usage): a Slurm job's start (sweep/engine.ts). */
const INTERNAL_COMMANDS: Record<string, { load: () => Promise<CommandMain> }> = {
  'job-log': { load: async () => (await import('./sweep/engine')).jobLogCommand },
};

const LSP_SPEC = {
  command: 'lsp',
  summary: 'Starts the Rewardsmith language server for any LSP client (VS Code, Neovim, Helix, …); choose one transport.',
  options: {
    stdio: { type: 'boolean', description: 'talk LSP over stdin/stdout (what Neovim and Helix use)' },
    'node-ipc': { type: 'boolean', description: "talk over Node's IPC channel (a Node parent process)" },
    socket: { type: 'int', min: 1, max: 65535, valueName: 'PORT', description: 'connect to a TCP port the client listens on' },
    pipe: { type: 'string', valueName: 'NAME', description: 'connect to a named pipe / Unix socket' },
    clientProcessId: { type: 'int', min: 0, description: "the client's process id (exit when it does)" },
  },
  epilog: 'example (Neovim ≥ 0.10): vim.lsp.start({ name = "rewardsmith", cmd = { "rewardsmith", "lsp", "--stdio" } })',
} as const;

/**
 * `rewardsmith lsp`: starts the language server, which sits above the runner (it imports the lint rules), so
 * the runner loads it by file path at run time as an editor would, never by import: `server.js` beside this
 * bundle in dist/, or the server's source when the CLI itself runs from source.
 */
async function lspCommand(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(LSP_SPEC, argv);
  const chosen = [
    values.stdio && '--stdio',
    values['node-ipc'] && '--node-ipc',
    values.socket !== undefined && '--socket',
    values.pipe !== undefined && '--pipe',
  ].filter(Boolean);
  if (chosen.length !== 1)
    throw new UsageError(
      chosen.length === 0 ? 'choose a transport: --stdio, --node-ipc, --socket=PORT or --pipe=NAME' : `choose one transport, not ${chosen.join(' and ')}`,
    );
  // vscode-languageserver reads the transport from process.argv in the --name=value form.
  process.argv = [
    process.argv[0]!,
    process.argv[1]!,
    ...(values.stdio ? ['--stdio'] : []),
    ...(values['node-ipc'] ? ['--node-ipc'] : []),
    ...(values.socket !== undefined ? [`--socket=${values.socket}`] : []),
    ...(values.pipe !== undefined ? [`--pipe=${values.pipe}`] : []),
    ...(values.clientProcessId !== undefined ? [`--clientProcessId=${values.clientProcessId}`] : []),
  ];
  const candidates = [path.join(__dirname, 'server.js'), path.join(__dirname, '..', '..', 'language-server', 'src', 'server.ts')];
  const entry = candidates.find((file) => existsSync(file));
  if (!entry) throw new Error(`the language server is missing (looked for ${candidates.join(', ')})`);
  const { startServer } = createRequire(__filename)(entry) as { startServer: () => Promise<number> };
  return startServer();
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'usage: rewardsmith <command> [options]',
    '',
    ...Object.entries(COMMANDS).map(([c, { summary }]) => `  ${c.padEnd(width)}  ${summary}`),
    '',
    'Run `rewardsmith <command> --help` for its options.',
  ].join('\n');
}

/** Runs `rewardsmith ARGV…` and returns its exit code (README, "Errors and exit codes"). */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS[name] ?? INTERNAL_COMMANDS[name];
  if (!command) {
    const [near] = didYouMean(name, Object.keys(COMMANDS));
    process.stderr.write(`rewardsmith: unknown command "${name}"${near ? ` (did you mean ${near}?)` : ''}\n\n${usage()}\n`);
    return 2;
  }
  const main = await command.load();
  // A command run before in this process (one that failed) may have named a folder: this command names its own.
  takeNotedRunFolder();
  let code: number;
  try {
    code = await main(rest);
  } catch (err) {
    return reportCommandError(name, err);
  }
  const ran = takeNotedRunFolder();
  if (code === 0 && ran) await afterRun(name, ran.dir, ran.events);
  return code;
}

/**
 * After train, eval and analyze: the run's HTML report, and one last line saying where it is and what to run
 * next (on stderr with --events, whose stdout carries only events).
 */
async function afterRun(command: string, runDir: string, events: boolean): Promise<void> {
  const say = (line: string) => (events ? process.stderr : process.stdout).write(line + '\n');
  // Paths as the user would type them: relative below the current folder, absolute elsewhere.
  const shown = (p: string) => {
    const rel = path.relative(process.cwd(), path.resolve(p));
    return rel === '' ? '.' : isInsideFolder(process.cwd(), p) ? rel : path.resolve(p);
  };
  const dir = shown(runDir);
  let where: string;
  try {
    const { writeReport } = await import('./report/report');
    const { file, messages } = await writeReport([runDir]);
    for (const m of messages) process.stderr.write(m + '\n');
    where = `report: ${shown(file)}`;
  } catch (err) {
    where = `no report (${err instanceof Error ? err.message : String(err)}); try \`rewardsmith report ${dir}\``;
  }
  let next = `rewardsmith analyze ${dir} (failure patterns and patches for the reward)`;
  // The analyzer reads the held-out episodes: a run trained with --eval-episodes 0 has none to analyse.
  if (command !== 'analyze' && evaluatedEpisodes(runDir) === 0)
    next = `rewardsmith eval ${dir} --episodes 100 --out ${dir}-eval (held-out episodes; analyze needs them, and this run has none)`;
  if (command === 'analyze') {
    const suggestions = readSuggestionIds(runDir);
    next =
      suggestions.length > 0
        ? `rewardsmith apply ${dir} --suggestion ${suggestions[0]} (shows the diff, then patches your reward file)`
        : 'edit the reward and train again';
  }
  say(`${where} · next: ${next}`);
}

/** How many held-out episodes the run's summary counts; null when it has no readable training summary. */
function evaluatedEpisodes(runDir: string): number | null {
  try {
    return readSummary(runDir)?.eval?.episodes ?? null;
  } catch {
    return null;
  }
}

/** Ids of the run's suggestions that have a patch; none when the run has no readable suggestions.json. */
function readSuggestionIds(runDir: string): string[] {
  try {
    return (readSuggestions(runDir)?.suggestions ?? []).filter((s) => s.diff).map((s) => s.id);
  } catch {
    return [];
  }
}
