// `rewardsmith <command>`: one dispatcher; each command lives with the module that implements it and is
// loaded lazily so that `rewardsmith lint` does not pay for TensorFlow or the Minecraft server stack.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { didYouMean, reportCommandError } from './args';

type CommandMain = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandMain> }> = {
  train: {
    summary: 'train a PPO agent on a reward file',
    // The analyzer sits above runs/: the dispatcher hands it to training for the suggestions streamed while it runs.
    load: async () => {
      const [{ trainCommand }, { liveAnalysis }] = await Promise.all([import('./runs/train'), import('./analyze/live')]);
      return (argv: string[]) => trainCommand(argv, { liveAnalysis });
    },
  },
  eval: { summary: 'evaluate a checkpoint on held-out worlds', load: async () => (await import('./runs/train')).evalCommand },
  pretrain: { summary: 'behaviour-clone a foundation policy from a scripted teacher\'s demonstrations', load: async () => (await import('./pretrain/pretrain')).pretrainCommand },
  table: { summary: 'foundation / + sparse / + dense on the paper\'s tasks over seeds, with intervals (Markdown, CSV, SVG)', load: async () => (await import('./table/table')).tableCommand },
  rollout: { summary: 'roll out a policy in an environment and summarise', load: async () => (await import('./runs/rollout')).rolloutCommand },
  lint: { summary: 'lint reward files against the observation schema', load: async () => (await import('./lint/cli')).lintCommand },
  lsp: { summary: 'start the language server (--stdio)', load: async () => lspCommand },
  critique: { summary: 'ask the LLM critic to review a reward file', load: async () => (await import('./llm/critique')).critiqueCommand },
  design: { summary: 'write a reward file for a task with the LLM designer', load: async () => (await import('./llm/loop')).designCommand },
  analyze: { summary: 'analyse a run\'s failed episodes and suggest patches', load: async () => (await import('./analyze/analyze')).analyzeCommand },
  report: { summary: 'write an HTML report (curves, evaluation, deaths, maps, patches) of one or more runs', load: async () => (await import('./report/report')).reportCommand },
  sweep: { summary: 'train every reward × seed locally or on Slurm and rank the rewards', load: async () => (await import('./sweep/sweep')).sweepCommand },
  loop: { summary: 'run design → critic → train → analyze for N iterations', load: async () => (await import('./llm/loop')).loopCommand },
};

const LSP_USAGE = 'usage: rewardsmith lsp --stdio | --node-ipc | --socket=PORT\n\nStarts the Rewardsmith language server (any LSP client).\n';

/**
 * `rewardsmith lsp`: starts the language server, which sits above the runner (it imports the lint rules), so
 * the runner loads it by file path at run time as an editor would, never by import: `server.js` beside this
 * bundle in dist/, or the server's source when the CLI itself runs from source.
 */
async function lspCommand(argv: string[]): Promise<number> {
  if (!argv.some((a) => a === '--stdio' || a === '--node-ipc' || a.startsWith('--socket=') || a.startsWith('--pipe='))) {
    process.stderr.write(LSP_USAGE);
    return 2;
  }
  const candidates = [path.join(__dirname, 'server.js'), path.join(__dirname, '..', '..', 'language-server', 'src', 'server.ts')];
  const entry = candidates.find((file) => existsSync(file));
  if (!entry) throw new Error(`the language server is missing (looked for ${candidates.join(', ')})`);
  const { startServer } = createRequire(__filename)(entry) as { startServer: () => Promise<number> };
  return startServer();
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return ['usage: rewardsmith <command> [options]', '', ...Object.entries(COMMANDS).map(([c, { summary }]) => `  ${c.padEnd(width)}  ${summary}`), '', 'Run `rewardsmith <command> --help` for its options.'].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    const [near] = didYouMean(name, Object.keys(COMMANDS));
    process.stderr.write(`rewardsmith: unknown command "${name}"${near ? ` (did you mean ${near}?)` : ''}\n\n${usage()}\n`);
    return 2;
  }
  const main = await command.load();
  try {
    return await main(rest);
  } catch (err) {
    return reportCommandError(name, err);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`rewardsmith: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
