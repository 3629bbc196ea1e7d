// The language client: starts dist/server.js over IPC for reward files and keeps the server's view of the
// analyzer's suggestions and the LLM key in step with the editor's.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { LanguageClient, State, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { setLlmApiKeyNotification, type RewardsmithInitializationOptions } from '../../protocol/src/lsp';
import { API_KEY_SECRET } from './runner';
import type { Suggestions } from './suggestions';
import { REWARD_SELECTOR } from './workspace';

/** The running client, or undefined when the server is missing or did not start (said in the output channel). */
export async function startLanguageClient(
  context: vscode.ExtensionContext,
  suggestions: Suggestions,
  output: vscode.OutputChannel,
): Promise<LanguageClient | undefined> {
  const serverModule = context.asAbsolutePath(path.join('dist', 'server.js'));
  if (!existsSync(serverModule)) {
    output.appendLine(`No language server at ${serverModule}; run \`npm run build\`.`);
    return undefined;
  }
  const serverOptions: ServerOptions = {
    run: { module: serverModule, transport: TransportKind.ipc },
    debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: REWARD_SELECTOR,
    synchronize: { configurationSection: 'rewardsmith' },
    // The dashboard plays a probe finding's episode: the server may offer that code action.
    initializationOptions: { playProbeEpisode: true } satisfies RewardsmithInitializationOptions,
  };
  const client = new LanguageClient('rewardsmith', 'Rewardsmith Language Server', serverOptions, clientOptions);
  try {
    await client.start();
    context.subscriptions.push(suggestions.listen(client));
    // A restarted server (after a crash) has lost the analyzer's suggestions: send them again.
    context.subscriptions.push(client.onDidChangeState((e) => e.newState === State.Running && suggestions.pushAll()));
    const key = await context.secrets.get(API_KEY_SECRET);
    if (key) await client.sendNotification(setLlmApiKeyNotification, { apiKey: key });
  } catch (err) {
    output.appendLine(`The language server did not start: ${(err as Error).message}`);
  }
  return client;
}
