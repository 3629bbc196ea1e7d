// The commands around the LLM roles: the critic's review (through the language server), the improvement loop
// (with the LLM designer, or the analyzer's patches with none), a new reward from the designer, and the API key.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { critiqueRequest, setLlmApiKeyNotification, type AnalyzerSuggestion } from '../../protocol/src/lsp';
import { trainingSuccessText } from './core';
import { RunRecordError } from '../../runner/src/records';
import { readLoopTable } from './loop-results';
import { API_KEY_SECRET, failureReason } from './runner';
import { toAnalyzerSuggestion } from './suggestions';
import { newRunDir, rewardDocument, type Services, showRewardError, taskFor, trainingBudgetArgs, workspaceDir } from './workspace';

const NO_LLM =
  'No LLM is configured. Run "Rewardsmith: Set LLM API key" (and set rewardsmith.llm.baseUrl for a local or non-OpenAI server). Linting, training and the programmatic analyzer work without one.';

export function registerLlmCommands(s: Services): void {
  const { context, output, runner, suggestions, dashboard } = s;

  async function requireLlm(): Promise<boolean> {
    if (await runner.llmConfigured()) return true;
    const choice = await vscode.window.showWarningMessage(NO_LLM, 'Set LLM API key', 'Open settings');
    if (choice === 'Set LLM API key') await vscode.commands.executeCommand('rewardsmith.setApiKey');
    else if (choice === 'Open settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'rewardsmith.llm');
    return false;
  }

  async function critique(uri?: vscode.Uri): Promise<void> {
    const document = await rewardDocument(uri);
    const client = s.client();
    if (!document || !client) return;
    if (!(await requireLlm())) return;
    const { taskFromHeader } = await import('../../runner/src/task-list');
    const task = taskFromHeader(document.getText()) ?? (vscode.workspace.getConfiguration('rewardsmith').get<string>('defaultTask') || undefined);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Critic reviewing ${path.basename(document.uri.fsPath)}…` },
      () => client.sendRequest(critiqueRequest, { textDocument: { uri: document.uri.toString() }, task, force: true }),
    );
    if (result.status === 'error') {
      if (result.kind === 'not-configured')
        void vscode.window.showWarningMessage(result.message, 'Set LLM API key').then((c) => c && vscode.commands.executeCommand('rewardsmith.setApiKey'));
      else void vscode.window.showErrorMessage(`Critic: ${result.message}`);
      return;
    }
    const verdict = result.success ? 'passes' : 'fails';
    void vscode.window.showInformationMessage(
      `Critic (${result.model}${result.cached ? ', cached' : ''}): the reward ${verdict}. ${result.critique ?? ''} ${result.findings.length} finding(s) in Problems.`.trim(),
    );
  }

  async function improve(uri?: vscode.Uri, noLlm = false): Promise<void> {
    const document = await rewardDocument(uri);
    if (!document) return;
    if (!noLlm && !(await requireLlm())) return;
    const task = await taskFor(document);
    if (!task) return;
    const iterations = vscode.workspace.getConfiguration('rewardsmith.improve').get<number>('iterations') ?? 3;
    const outDir = newRunDir(s, document, 'loop');
    dashboard.show(true);
    dashboard.startLive(`improvement loop on ${task}`);
    const found: AnalyzerSuggestion[] = [];
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Improvement loop${noLlm ? ' (no LLM)' : ''} (${iterations} iterations) on ${task}`,
        cancellable: true,
      },
      (progress, token) =>
        runner.run(
          [
            'loop',
            '--task',
            task,
            '--iterations',
            String(iterations),
            '--reward',
            document.uri.fsPath,
            ...trainingBudgetArgs(),
            '--out',
            outDir,
            '--events',
            'ndjson',
            ...(noLlm ? ['--no-llm'] : []),
          ],
          workspaceDir(document),
          (e) => {
            dashboard.event(e);
            if (e.type === 'log') progress.report({ message: e.message });
            else if (e.type === 'progress')
              progress.report({ message: `${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${trainingSuccessText(e.success)}` });
            else if (e.type === 'suggestion') found.push(toAnalyzerSuggestion(e));
            else if (e.type === 'reward_error') showRewardError(s, e);
          },
          token,
        ),
    );
    dashboard.sendPastRuns();
    try {
      const table = readLoopTable(outDir);
      if (table) dashboard.showLoopResults(`${task}, ${iterations} iterations (${outDir})`, table);
    } catch (err) {
      if (!(err instanceof RunRecordError)) throw err;
      void vscode.window.showWarningMessage(`Rewardsmith: the loop's table is not shown: ${err.message}`);
    }
    if (found.length) suggestions.set(document.uri, found);
    if (result.code === 0)
      void vscode.window
        .showInformationMessage(
          `Improvement loop finished: the dashboard shows every candidate, its difference to the reward in force and the decision; the rewards and runs are in ${outDir}.`,
          'Open folder',
        )
        .then((c) => c && vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(outDir)));
    else if (!result.cancelled)
      void vscode.window.showErrorMessage(`The improvement loop failed: ${failureReason(result)}`, 'Show log').then((c) => c && output.show());
  }

  async function newReward(): Promise<void> {
    if (!(await requireLlm())) return;
    const task = await taskFor();
    if (!task) return;
    const dir = workspaceDir();
    const target = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(dir, `${task}.reward.ts`)), filters: { 'Reward file': ['ts'] } });
    if (!target) return;
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Designing a reward for ${task}…`, cancellable: true },
      (_progress, token) => runner.run(['design', '--task', task, '--out', target.fsPath, '--events', 'ndjson'], dir, () => undefined, token),
    );
    if (result.code === 0 && existsSync(target.fsPath)) await vscode.window.showTextDocument(target);
    else if (!result.cancelled)
      void vscode.window.showErrorMessage(`The designer did not produce a reward file: ${failureReason(result)}`, 'Show log').then((c) => c && output.show());
  }

  async function setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: "LLM API key (kept in the editor's secret storage)",
      password: true,
      ignoreFocusOut: true,
      placeHolder: 'empty to forget the stored key',
    });
    if (key === undefined) return;
    if (key) await context.secrets.store(API_KEY_SECRET, key);
    else await context.secrets.delete(API_KEY_SECRET);
    await s.client()?.sendNotification(setLlmApiKeyNotification, { apiKey: key || null });
    void vscode.window.showInformationMessage(key ? 'LLM API key stored.' : 'LLM API key forgotten.');
  }

  context.subscriptions.push(
    vscode.commands.registerCommand('rewardsmith.critique', critique),
    vscode.commands.registerCommand('rewardsmith.improve', (uri?: vscode.Uri) => improve(uri)),
    vscode.commands.registerCommand('rewardsmith.improveNoLlm', (uri?: vscode.Uri) => improve(uri, true)),
    vscode.commands.registerCommand('rewardsmith.newReward', newReward),
    vscode.commands.registerCommand('rewardsmith.setApiKey', setApiKey),
  );
}
