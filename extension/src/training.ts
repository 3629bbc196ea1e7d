// Training from the editor: the CodeLens over `reward_function`, `rewardsmith train` as a child process with a
// cancellable notification, the status-bar item and the dashboard, then the analyzer's suggestions on the file.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AnalyzerSuggestion } from '../../protocol/src/lsp';
import { makeEvent, type RunnerEvent } from '../../runner/src/events';
import { readSuggestions, RunRecordError, type SuggestionsRecord } from '../../runner/src/records';
import { rateText, rewardEntryLine, trainingSuccessText } from './core';
import { failureReason, type RunResult } from './runner';
import { toAnalyzerSuggestion } from './suggestions';
import {
  isRewardFile,
  newRunDir,
  REWARD_SELECTOR,
  rewardDocument,
  type Services,
  showRewardError,
  taskFor,
  trainingBudgetArgs,
  workspaceDir,
} from './workspace';

export function registerTraining(s: Services): void {
  const { context, runner, dashboard } = s;
  const status = vscode.window.createStatusBarItem('rewardsmith.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Rewardsmith training';
  status.command = 'rewardsmith.showDashboard';
  context.subscriptions.push(status);
  let training = false;
  const lensChanged = registerCodeLens(context, () => training);

  const setTraining = (on: boolean) => {
    training = on;
    void vscode.commands.executeCommand('setContext', 'rewardsmith.training', on);
    lensChanged.fire();
  };

  async function train(uri?: vscode.Uri, options: { noCheck?: boolean } = {}): Promise<void> {
    if (training) {
      void vscode.window.showInformationMessage('A training run is already in progress; stop it from its notification first.');
      return;
    }
    const document = await rewardDocument(uri);
    if (!document) return;
    const task = await taskFor(document);
    if (!task) return;
    const outDir = newRunDir(s, document, 'train');
    const args = trainArgs(document, task, outDir, options.noCheck);
    s.runtimeErrors.delete(document.uri);
    setTraining(true);
    const label = `${path.basename(document.uri.fsPath)} on ${task}`;
    dashboard.show(true);
    dashboard.startLive(label);
    status.text = `$(sync~spin) Rewardsmith: starting ${task}`;
    status.show();
    const run = new LiveRun(s, document, status);
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Training on ${label}`, cancellable: true },
        (progress, token) => runner.run(args, workspaceDir(document), (e) => run.event(e, progress), linkedToken(token, run.stop)),
      );
      dashboard.sendPastRuns();
      // "Train anyway" starts the next run once this one has let go of the training flag.
      await showOutcome(s, run, result, outDir, () => setImmediate(() => void train(document.uri, { noCheck: true })));
    } finally {
      run.stop.dispose();
      setTraining(false);
    }
  }

  async function analyzeRun(): Promise<void> {
    const root = s.runsRoot();
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      defaultUri: root ? vscode.Uri.file(root) : undefined,
      openLabel: 'Analyze run',
    });
    const document = vscode.window.activeTextEditor?.document;
    if (!picked?.[0] || !document || !isRewardFile(document.uri)) {
      if (picked?.[0]) void vscode.window.showErrorMessage('Open the reward file the run trained on, then analyze the run.');
      return;
    }
    await analyze(s, picked[0].fsPath, document);
  }

  context.subscriptions.push(
    vscode.commands.registerCommand('rewardsmith.train', (uri?: vscode.Uri) => train(uri)),
    vscode.commands.registerCommand('rewardsmith.analyzeRun', analyzeRun),
    vscode.commands.registerCommand('rewardsmith.showDashboard', () => dashboard.show()),
    vscode.commands.registerCommand('rewardsmith.stopTraining', () =>
      vscode.window.showInformationMessage('Use the Cancel button on the training notification; the runner keeps its checkpoint.'),
    ),
    vscode.window.onDidChangeActiveTextEditor((e) => {
      if (!training) e && isRewardFile(e.document.uri) ? status.show() : status.hide();
    }),
  );
  status.text = '$(beaker) Rewardsmith';
  status.tooltip = 'Show the run dashboard';
  if (vscode.window.activeTextEditor && isRewardFile(vscode.window.activeTextEditor.document.uri)) status.show();
}

/** The CodeLens over `reward_function`: Train (or Training… while a run goes on), Critique, Improve. */
function registerCodeLens(context: vscode.ExtensionContext, training: () => boolean): vscode.EventEmitter<void> {
  const lensChanged = new vscode.EventEmitter<void>();
  context.subscriptions.push(
    vscode.languages.registerCodeLensProvider(REWARD_SELECTOR, {
      onDidChangeCodeLenses: lensChanged.event,
      provideCodeLenses(document) {
        const line = rewardEntryLine(document.getText());
        if (line === undefined) return [];
        const range = new vscode.Range(line, 0, line, 0);
        const iterations = vscode.workspace.getConfiguration('rewardsmith.improve').get<number>('iterations') ?? 3;
        return [
          new vscode.CodeLens(range, {
            title: training() ? '$(sync~spin) Training…' : '▶ Train on this reward',
            command: training() ? 'rewardsmith.showDashboard' : 'rewardsmith.train',
            arguments: [document.uri],
          }),
          new vscode.CodeLens(range, { title: 'Critique', command: 'rewardsmith.critique', arguments: [document.uri] }),
          new vscode.CodeLens(range, { title: `Improve (${iterations} iterations)`, command: 'rewardsmith.improve', arguments: [document.uri] }),
          new vscode.CodeLens(range, { title: 'Improve (no LLM)', command: 'rewardsmith.improveNoLlm', arguments: [document.uri] }),
        ];
      },
    }),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('rewardsmith') && lensChanged.fire()),
  );
  return lensChanged;
}

/** One training run as the editor follows it: its events shown as they come, and what they said for the end. */
class LiveRun {
  last: Extract<RunnerEvent, { type: 'progress' }> | undefined;
  evalResult: Extract<RunnerEvent, { type: 'eval' }> | undefined;
  /** Suggestions of the analysis after held-out evaluation. */
  readonly streamed: AnalyzerSuggestion[] = [];
  /** Provisional suggestions from training episodes, shown as code actions while training runs (latest per id);
   * the analysis after held-out evaluation replaces them. */
  private readonly provisional = new Map<string, AnalyzerSuggestion>();
  private warned = false;
  /** The suggestion whose early warning the user answered with "Stop and apply". */
  applyAfterStop: string | undefined;
  readonly stop = new vscode.CancellationTokenSource();

  constructor(
    private readonly s: Services,
    readonly document: vscode.TextDocument,
    readonly status: vscode.StatusBarItem,
  ) {}

  event(e: RunnerEvent, progress: vscode.Progress<{ message?: string; increment?: number }>): void {
    const { s, document, status } = this;
    if (e.type === 'suggestion' && e.provisional) {
      this.provisional.set(e.id, toAnalyzerSuggestion(e));
      s.suggestions.set(document.uri, [...this.provisional.values()], { provisional: true, failed: e.failed_episodes ?? 0 });
      if (e.early_warning && !this.warned) {
        this.warned = true;
        void vscode.window
          .showWarningMessage(`Early warning: ${e.message.split('\n')[0]}`, ...(e.diff ? ['Stop and apply'] : []), 'Keep training')
          .then((c) => {
            if (c !== 'Stop and apply') return;
            this.applyAfterStop = e.id;
            this.stop.cancel();
          });
      }
      return;
    }
    s.dashboard.event(e);
    if (e.type === 'progress') {
      const last = this.last;
      const increment = last ? ((e.frames - last.frames) / e.total_frames) * 100 : (e.frames / e.total_frames) * 100;
      this.last = e;
      progress.report({
        increment,
        message: `${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${trainingSuccessText(e.success)}`,
      });
      status.text = `$(sync~spin) ${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${trainingSuccessText(e.success)}`;
    } else if (e.type === 'eval') {
      this.evalResult = e;
      progress.report({ message: `evaluated: held-out success ${rateText(e.success.rate, e.success.ci95, e.success.n)}` });
      if (e.generalisation_gap) void vscode.window.showWarningMessage(e.generalisation_gap.message);
      if (e.below_start) void vscode.window.showWarningMessage(`Below its starting policy: ${e.below_start.message}`);
    } else if (e.type === 'started') {
      progress.report({ message: `started on ${e.env}, backend ${e.backend}` });
    } else if (e.type === 'reward_error') {
      showRewardError(s, e);
    } else if (e.type === 'suggestion') {
      this.streamed.push(toAnalyzerSuggestion(e));
    }
  }
}

/** How a run ended, told in the status bar and a message: stopped, refused by the check, failed, or done (then analysed). */
async function showOutcome(s: Services, run: LiveRun, result: RunResult, outDir: string, trainAnyway: () => void): Promise<void> {
  const { document, status, last, evalResult } = run;
  if (run.applyAfterStop) {
    status.text = `$(debug-stop) Rewardsmith: stopped at ${last?.frames.toLocaleString() ?? 0} frames to apply a suggestion`;
    await s.suggestions.preview(document.uri.toString(), run.applyAfterStop);
    return;
  }
  if (result.cancelled) {
    status.text = `$(debug-stop) Rewardsmith: stopped at ${last?.frames.toLocaleString() ?? 0} frames`;
    void vscode.window.showInformationMessage(
      `Training stopped; the checkpoint is kept in ${outDir} (resume with \`rewardsmith train … --resume ${outDir}\`).`,
    );
    return;
  }
  if (result.finished?.check_errors) {
    // Refused before training (nothing written): the errors are the check's, already in Problems.
    status.text = '$(error) Rewardsmith: not trained (errors found before training)';
    s.dashboard.event(result.finished);
    if (await offerTrainAnyway(document, result.finished.check_errors)) trainAnyway();
    return;
  }
  if (!result.finished?.ok || result.code !== 0) {
    status.text = '$(error) Rewardsmith: training failed';
    const reason = failureReason(result);
    if (!result.finished) s.dashboard.event(makeEvent({ type: 'finished', ok: false, run_dir: outDir, summary: null, error: reason }));
    void vscode.window.showErrorMessage(`Training failed: ${reason}`, 'Show log').then((c) => c && s.output.show());
    return;
  }
  const below = evalResult?.below_start
    ? `, below its starting policy's ${rateText(evalResult.below_start.start.rate, evalResult.below_start.start.ci95, evalResult.below_start.start.n)}`
    : '';
  status.text = `$(${below ? 'warning' : 'check'}) Rewardsmith: ${evalResult ? `held-out success ${rateText(evalResult.success.rate, evalResult.success.ci95, evalResult.success.n)}${below}` : last ? trainingSuccessText(last.success) : 'done'} · ${last?.frames.toLocaleString() ?? '?'} frames`;
  await analyze(s, outDir, document, run.streamed);
}

/** Cancelled when either the notification's Cancel or our own source (Stop and apply) fires. */
function linkedToken(token: vscode.CancellationToken, own: vscode.CancellationTokenSource): vscode.CancellationToken {
  token.onCancellationRequested(() => own.cancel());
  return own.token;
}

/** Runs the trajectory analyzer on a finished run and shows its suggestions on the reward file. */
async function analyze(s: Services, runDir: string, document: vscode.TextDocument, already: AnalyzerSuggestion[] = []): Promise<void> {
  const found = [...already];
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Rewardsmith: analysing failed episodes' }, () =>
    s.runner.run(['analyze', runDir, '--reward', document.uri.fsPath, '--events', 'ndjson'], workspaceDir(document), (e) => {
      if (e.type === 'suggestion') found.push(toAnalyzerSuggestion(e));
    }),
  );
  // suggestions.json has the evidence (episodes, steps) the events leave out; it is also the only source
  // when the analyzer streamed nothing.
  const written = readSuggestionsFile(s, runDir);
  const fromFile = (written?.suggestions ?? []).map((w) => toAnalyzerSuggestion(w));
  if (found.length === 0) found.push(...fromFile);
  for (const f of found) f.evidence ??= fromFile.find((w) => w.id === f.id)?.evidence;
  for (const f of found) if (f.evidence === undefined) delete f.evidence;
  s.suggestions.set(
    document.uri,
    found,
    // Coverage is absent from files written before it existed.
    typeof written?.failed_episodes === 'number'
      ? { failed: written.failed_episodes, explained: written.explained_episodes ?? 0, causes: written.causes ?? {} }
      : undefined,
  );
  if (found.length > 0) {
    void vscode.window
      .showInformationMessage(`The analyzer has ${found.length} suggestion${found.length === 1 ? '' : 's'} for ${path.basename(document.uri.fsPath)}.`, 'Show')
      .then((c) => c && vscode.commands.executeCommand('rewardsmith.suggestions.focus'));
  }
}

/** The runner's `train` command line for a reward document, with the workspace's budget and extra arguments. */
function trainArgs(document: vscode.TextDocument, task: string, outDir: string, noCheck = false): string[] {
  return [
    'train',
    document.uri.fsPath,
    '--task',
    task,
    ...trainingBudgetArgs(),
    '--out',
    outDir,
    '--events',
    'ndjson',
    ...(vscode.workspace.getConfiguration('rewardsmith.training').get<string[]>('extraArgs') ?? []),
    ...(noCheck ? ['--no-check'] : []),
  ];
}

/**
 * A reward the check before training refused (nothing was written; its errors are already in Problems): whether the
 * user chose to train anyway.
 */
async function offerTrainAnyway(document: vscode.TextDocument, errors: number): Promise<boolean> {
  const choice = await vscode.window.showErrorMessage(
    `Not trained: the check before training found ${errors} error(s) in ${path.basename(document.uri.fsPath)}; fix them (see Problems) or train anyway.`,
    'Show Problems',
    'Train anyway',
  );
  if (choice === 'Show Problems') void vscode.commands.executeCommand('workbench.actions.view.problems');
  return choice === 'Train anyway';
}

/** The run's suggestions.json through the runner's checked reader: a malformed file is reported as the CLI reports it. */
function readSuggestionsFile(s: Services, runDir: string): SuggestionsRecord | undefined {
  try {
    return readSuggestions(runDir);
  } catch (err) {
    if (!(err instanceof RunRecordError)) throw err;
    s.output.appendLine(err.message);
    void vscode.window.showWarningMessage(`Rewardsmith: ${err.message}`);
    return undefined;
  }
}
