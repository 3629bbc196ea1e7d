// "Sweep rewards…": the selected reward files × N seeds through `rewardsmith sweep` (engine, seeds and extra
// arguments from the settings), with a cancellable progress notification (cancel = the runner's Ctrl-C, which
// scancels Slurm jobs) and a sweep panel: every run's state and progress, then the ranking with intervals.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SWEEP_FILES } from '../../runner/src/records';
import { failureReason, type Runner } from './runner';
import { readSweepView, SweepProgress, sweepArgs, sweepHtml, type SweepSettings } from './sweep-view';

const CSP = `default-src 'none'; style-src 'unsafe-inline'; img-src data:`;

export function registerSweep(context: vscode.ExtensionContext, runner: Runner, runsRoot: () => string | undefined): void {
  const sweepRewards = async (clicked?: vscode.Uri, selected?: vscode.Uri[]) => {
    const picked = (
      selected?.length ? selected : clicked ? [clicked] : vscode.window.activeTextEditor ? [vscode.window.activeTextEditor.document.uri] : []
    ).filter((u) => /\.reward\.(ts|js|py)$/.test(u.path));
    if (picked.length === 0) {
      void vscode.window.showErrorMessage('Select one or more reward files (*.reward.ts) in the Explorer, then "Sweep rewards…".');
      return;
    }
    await vscode.workspace.saveAll(false);
    // Loaded on demand: the task module pulls in minecraft-data, which activation should not pay for.
    const { BUILTIN_TASKS, taskFromHeader } = await import('../../runner/src/task-list');
    const headers = new Set(picked.map((u) => taskFromHeader(readFileSync(u.fsPath, 'utf8'))).filter((t): t is string => Boolean(t)));
    if (headers.size > 1) {
      void vscode.window.showErrorMessage(`The selected rewards are for different tasks (${[...headers].join(', ')}); a sweep compares rewards on one task.`);
      return;
    }
    const config = vscode.workspace.getConfiguration('rewardsmith');
    let task: string | undefined = [...headers][0] ?? (config.get<string>('defaultTask') || undefined);
    if (!task) {
      task = await vscode.window.showQuickPick(Object.keys(BUILTIN_TASKS), { title: 'Which task do the rewards solve?', ignoreFocusOut: true });
      if (!task) return;
    }
    const settings: SweepSettings = {
      engine: config.get<'local' | 'slurm'>('sweep.engine') ?? 'local',
      seeds: config.get<number>('sweep.seeds') ?? 3,
      steps: config.get<number>('training.steps') ?? 256_000,
      extraArgs: config.get<string[]>('sweep.extraArgs') ?? [],
    };
    const cwd = vscode.workspace.getWorkspaceFolder(picked[0]!)?.uri.fsPath ?? path.dirname(picked[0]!.fsPath);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const out = path.join(runsRoot() ?? path.join(cwd, 'runs'), `sweep-${stamp}`);
    const title = `Sweep: ${picked.length} reward(s) × ${settings.seeds} seed(s) on ${task} (${settings.engine})`;

    const progress = new SweepProgress();
    const panel = vscode.window.createWebviewPanel(
      'rewardsmith.sweep',
      'Rewardsmith Sweep',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: false },
    );
    let disposed = false;
    panel.onDidDispose(() => (disposed = true));
    let damaged: string | undefined;
    const render = () => {
      if (disposed) return;
      const { results, svg } = readSweepView(out, (message) => {
        if (message !== damaged) void vscode.window.showWarningMessage(`Rewardsmith: ${message}`);
        damaged = message;
      });
      panel.webview.html = sweepHtml(title, progress, results, svg, CSP);
    };
    render();

    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (report, token) => {
      let lastRender = 0;
      return runner.run(
        sweepArgs(
          task!,
          picked.map((u) => u.fsPath),
          out,
          settings,
        ),
        cwd,
        (e) => {
          progress.apply(e);
          if (e.type !== 'sweep_run') return;
          report.report({ message: progress.line() });
          // A finished run changes the ranking; progress alone redraws at most once a second.
          if (e.state !== 'running' || Date.now() - lastRender > 1000) {
            lastRender = Date.now();
            render();
          }
        },
        token,
      );
    });
    render();
    if (result.cancelled)
      void vscode.window.showInformationMessage(`Sweep stopped; run it again on the same folder to resume: rewardsmith sweep … --out ${out}`);
    else if (result.code !== 0) void vscode.window.showErrorMessage(`Sweep: ${failureReason(result)}`);
    else
      void vscode.window
        .showInformationMessage(`Sweep finished: ${path.join(out, SWEEP_FILES.table)}`, 'Open table')
        .then((c) => c && vscode.window.showTextDocument(vscode.Uri.file(path.join(out, SWEEP_FILES.table))));
  };
  context.subscriptions.push(vscode.commands.registerCommand('rewardsmith.sweepRewards', sweepRewards));
}
