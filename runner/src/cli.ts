// `rewardsmith <command>`: one dispatcher; each command lives with the module that implements it and is
// loaded lazily so that `rewardsmith lint` does not pay for TensorFlow or the Minecraft server stack.
import { didYouMean, reportCommandError } from './args';

type CommandMain = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<CommandMain> }> = {
  train: { summary: 'train a PPO agent on a reward file', load: async () => (await import('./ppo/train')).trainCommand },
  eval: { summary: 'evaluate a checkpoint on held-out worlds', load: async () => (await import('./ppo/train')).evalCommand },
  rollout: { summary: 'roll out a policy in an environment and summarise', load: async () => (await import('./env/rollout')).rolloutCommand },
  lint: { summary: 'lint reward files against the observation schema', load: async () => (await import('../../language-server/src/cli')).lintCommand },
  lsp: { summary: 'start the language server (--stdio)', load: async () => (await import('../../language-server/src/cli')).lspCommand },
  critique: { summary: 'ask the LLM critic to review a reward file', load: async () => (await import('../../language-server/src/cli')).critiqueCommand },
  design: { summary: 'write a reward file for a task with the LLM designer', load: async () => (await import('./llm/loop')).designCommand },
  analyze: { summary: 'analyse a run\'s failed episodes and suggest patches', load: async () => (await import('./analyze/analyze')).analyzeCommand },
  loop: { summary: 'run design → critic → train → analyze for N iterations', load: async () => (await import('./llm/loop')).loopCommand },
};

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
