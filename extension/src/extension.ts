// Rewardsmith's VS Code client. It stays thin: linting, critique and code actions come from the language server
// (dist/server.js over IPC); training, analysis, design and the improvement loop are the runner CLI in a child
// process. What lives here is what only an editor can do: CodeLens, commands, progress, status bar, views.
// Activation creates the shared services and hands them to each part: the Suggestions view (suggestions.ts),
// the language client (client.ts), training and the dashboard (training.ts), the LLM commands
// (llm-commands.ts) and sweeps (sweep.ts).
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { CLIENT_COMMANDS } from '../../protocol/src/lsp';
import { startLanguageClient } from './client';
import { Dashboard } from './dashboard';
import { registerLlmCommands } from './llm-commands';
import { Runner } from './runner';
import { registerSuggestionsView, Suggestions } from './suggestions';
import { registerSweep } from './sweep';
import { registerTraining } from './training';
import { runsRootOf, type Services } from './workspace';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Rewardsmith');
  const suggestions = new Suggestions(() => client);
  const runtimeErrors = vscode.languages.createDiagnosticCollection('rewardsmith-runtime');
  context.subscriptions.push(output, runtimeErrors);
  const runner = new Runner(context, output);
  const services: Services = {
    context,
    output,
    runner,
    suggestions,
    dashboard: new Dashboard(
      context.extensionUri,
      runsRootOf,
      (dir, episode) => runner.playback(dir, episode),
      (file, probe) => runner.playbackProbe(file, probe),
    ),
    runtimeErrors,
    client: () => client,
    runsRoot: runsRootOf,
  };
  registerSuggestionsView(context, suggestions);
  // A probe finding's code action (the language server offers it): its probe episode, played in the dashboard.
  context.subscriptions.push(
    vscode.commands.registerCommand(CLIENT_COMMANDS.playProbeEpisode, (arg: { uri?: string; episode?: number } | undefined) => {
      if (typeof arg?.uri !== 'string' || typeof arg.episode !== 'number') return;
      return services.dashboard.playProbe(vscode.Uri.parse(arg.uri).fsPath, arg.episode);
    }),
  );
  client = await startLanguageClient(context, suggestions, output);
  registerTraining(services);
  registerLlmCommands(services);
  registerSweep(context, services.runner, runsRootOf);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
