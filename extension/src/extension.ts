// Rewardsmith's VS Code client. It stays thin: linting, critique and code actions come from the language server
// (dist/server.js over IPC); training, analysis, design and the improvement loop are the runner CLI in a child
// process. What lives here is what only an editor can do: CodeLens, commands, progress, status bar, views.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, State, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import { critiqueRequest, setLlmApiKeyNotification, type AnalyzerSuggestion } from '../../language-server/src/lsp_ext';
import { makeEvent, type RunnerEvent } from '../../runner/src/events';
import { readSuggestions, RunRecordError, type SuggestionsRecord } from '../../runner/src/records';
import { rateText, rewardEntryLine, trainingSuccessText } from './core';
import { Dashboard } from './dashboard';
import { API_KEY_SECRET, failureReason, Runner } from './runner';
import { PATCHED_SCHEME, Suggestions, toAnalyzerSuggestion } from './suggestions';
import { registerSweep } from './sweep';

const REWARD_SELECTOR = [
  { scheme: 'file', pattern: '**/*.reward.ts' },
  { scheme: 'file', pattern: '**/*.reward.js' },
];
const isRewardFile = (uri: vscode.Uri) => /\.reward\.[tj]s$/.test(uri.path);
const NO_LLM =
  'No LLM is configured. Run "Rewardsmith: Set LLM API key" (and set rewardsmith.llm.baseUrl for a local or non-OpenAI server). Linting, training and the programmatic analyzer work without one.';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('Rewardsmith');
  const runner = new Runner(context, output);
  const suggestions = new Suggestions(() => client);
  const runtimeErrors = vscode.languages.createDiagnosticCollection('rewardsmith-runtime');
  const status = vscode.window.createStatusBarItem('rewardsmith.status', vscode.StatusBarAlignment.Left, 10);
  status.name = 'Rewardsmith training';
  status.command = 'rewardsmith.showDashboard';
  const runsRoot = () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder && path.resolve(folder.uri.fsPath, vscode.workspace.getConfiguration('rewardsmith').get<string>('runsDirectory') || 'runs');
  };
  const dashboard = new Dashboard(context.extensionUri, runsRoot);
  let training = false;
  context.subscriptions.push(output, runtimeErrors, status);
  context.subscriptions.push(vscode.window.registerTreeDataProvider('rewardsmith.suggestions', suggestions));
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(PATCHED_SCHEME, suggestions));

  // --- language server ------------------------------------------------------------------------------------
  const serverModule = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module: serverModule, transport: TransportKind.ipc },
    debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6019'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: REWARD_SELECTOR,
    synchronize: { configurationSection: 'rewardsmith' },
  };
  if (existsSync(serverModule)) {
    client = new LanguageClient('rewardsmith', 'Rewardsmith Language Server', serverOptions, clientOptions);
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
  } else {
    output.appendLine(`No language server at ${serverModule}; run \`npm run build\`.`);
  }

  // --- CodeLens -------------------------------------------------------------------------------------------
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
            title: training ? '$(sync~spin) Training…' : '▶ Train on this reward',
            command: training ? 'rewardsmith.showDashboard' : 'rewardsmith.train',
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

  // --- helpers --------------------------------------------------------------------------------------------
  async function rewardDocument(uri?: vscode.Uri): Promise<vscode.TextDocument | undefined> {
    const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
    if (!target || !isRewardFile(target)) {
      void vscode.window.showErrorMessage('Open a reward file (*.reward.ts) first.');
      return undefined;
    }
    const document = await vscode.workspace.openTextDocument(target);
    if (document.isDirty) await document.save();
    return document;
  }

  /** The task: the file's `// task: <id>` header, else the setting, else the user's pick. */
  async function taskFor(document?: vscode.TextDocument): Promise<string | undefined> {
    // Loaded on demand: the task module pulls in minecraft-data, which activation should not pay for.
    const { BUILTIN_TASKS, taskFromHeader } = await import('../../runner/src/tasks');
    const fromHeader = document && taskFromHeader(document.getText());
    if (fromHeader) return fromHeader;
    const fromSetting = vscode.workspace.getConfiguration('rewardsmith').get<string>('defaultTask');
    if (fromSetting) return fromSetting;
    const picked = await vscode.window.showQuickPick(
      Object.values(BUILTIN_TASKS).map((t) => ({ label: t.id, detail: t.description.objective })),
      { title: 'Which task? (add a `// task: <id>` line to the file to skip this question)', ignoreFocusOut: true },
    );
    return picked?.label;
  }

  const workspaceDir = (document?: vscode.TextDocument) =>
    (document && vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath) ??
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
    (document ? path.dirname(document.uri.fsPath) : process.cwd());

  function newRunDir(document: vscode.TextDocument, kind: string): string {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const stem = path.basename(document.uri.fsPath).replace(/\.reward\.[tj]s$/, '');
    return path.join(runsRoot() ?? path.join(workspaceDir(document), 'runs'), `${stem}-${kind}-${stamp}`);
  }

  function showRewardError(e: Extract<RunnerEvent, { type: 'reward_error' }>): void {
    const uri = vscode.Uri.file(e.file);
    const at = new vscode.Range(Math.max(0, e.line - 1), Math.max(0, e.column - 1), Math.max(0, e.line - 1), Number.MAX_SAFE_INTEGER);
    const d = new vscode.Diagnostic(at, `${e.kind}: ${e.message}`, vscode.DiagnosticSeverity.Error);
    d.source = 'reward-runtime';
    runtimeErrors.set(uri, [d]);
    void vscode.window
      .showErrorMessage(`The reward failed at line ${e.line}: ${e.message}`, 'Show')
      .then((c) => c && vscode.window.showTextDocument(uri, { selection: at }));
  }

  function collectSuggestion(e: Extract<RunnerEvent, { type: 'suggestion' }>, into: AnalyzerSuggestion[]): void {
    into.push(toAnalyzerSuggestion(e));
  }

  // --- training -------------------------------------------------------------------------------------------
  const setTraining = (on: boolean) => {
    training = on;
    void vscode.commands.executeCommand('setContext', 'rewardsmith.training', on);
    lensChanged.fire();
  };

  async function train(uri?: vscode.Uri): Promise<void> {
    if (training) {
      void vscode.window.showInformationMessage('A training run is already in progress; stop it from its notification first.');
      return;
    }
    const document = await rewardDocument(uri);
    if (!document) return;
    const task = await taskFor(document);
    if (!task) return;
    const config = vscode.workspace.getConfiguration('rewardsmith.training');
    const outDir = newRunDir(document, 'train');
    const args = [
      'train',
      document.uri.fsPath,
      '--task',
      task,
      '--steps',
      String(config.get<number>('steps')),
      '--envs',
      String(config.get<number>('envs')),
      '--backend',
      config.get<string>('backend') ?? 'auto',
      '--out',
      outDir,
      '--events',
      'ndjson',
      ...(config.get<string[]>('extraArgs') ?? []),
    ];
    runtimeErrors.delete(document.uri);
    setTraining(true);
    const label = `${path.basename(document.uri.fsPath)} on ${task}`;
    dashboard.show(true);
    dashboard.startLive(label);
    status.text = `$(sync~spin) Rewardsmith: starting ${task}`;
    status.show();
    let last: Extract<RunnerEvent, { type: 'progress' }> | undefined;
    let evalResult: Extract<RunnerEvent, { type: 'eval' }> | undefined;
    const streamed: AnalyzerSuggestion[] = [];
    // Provisional suggestions from training episodes, shown as code actions while training runs (latest per id);
    // the analysis after held-out evaluation replaces them.
    const provisional = new Map<string, AnalyzerSuggestion>();
    const stop = new vscode.CancellationTokenSource();
    let warned = false;
    let applyAfterStop: string | undefined;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Training on ${label}`, cancellable: true },
        (progress, token) =>
          runner.run(
            args,
            workspaceDir(document),
            (e) => {
              if (e.type === 'suggestion' && e.provisional) {
                provisional.set(e.id, toAnalyzerSuggestion(e));
                suggestions.set(document.uri, [...provisional.values()], { provisional: true, failed: e.failed_episodes ?? 0 });
                if (e.early_warning && !warned) {
                  warned = true;
                  void vscode.window
                    .showWarningMessage(`Early warning: ${e.message.split('\n')[0]}`, ...(e.diff ? ['Stop and apply'] : []), 'Keep training')
                    .then((c) => {
                      if (c !== 'Stop and apply') return;
                      applyAfterStop = e.id;
                      stop.cancel();
                    });
                }
                return;
              }
              dashboard.event(e);
              if (e.type === 'progress') {
                const increment = last ? ((e.frames - last.frames) / e.total_frames) * 100 : (e.frames / e.total_frames) * 100;
                last = e;
                progress.report({
                  increment,
                  message: `${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${trainingSuccessText(e.success)}`,
                });
                status.text = `$(sync~spin) ${e.frames.toLocaleString()} / ${e.total_frames.toLocaleString()} frames · ${trainingSuccessText(e.success)}`;
              } else if (e.type === 'eval') {
                evalResult = e;
                progress.report({ message: `evaluated: held-out success ${rateText(e.success.rate, e.success.ci95, e.success.n)}` });
                if (e.generalisation_gap) void vscode.window.showWarningMessage(e.generalisation_gap.message);
              } else if (e.type === 'started') {
                progress.report({ message: `started on ${e.env}, backend ${e.backend}` });
              } else if (e.type === 'reward_error') {
                showRewardError(e);
              } else if (e.type === 'suggestion') {
                collectSuggestion(e, streamed);
              }
            },
            linkedToken(token, stop),
          ),
      );
      dashboard.sendPastRuns();
      if (applyAfterStop) {
        status.text = `$(debug-stop) Rewardsmith: stopped at ${last?.frames.toLocaleString() ?? 0} frames to apply a suggestion`;
        await suggestions.preview(document.uri.toString(), applyAfterStop);
        return;
      }
      if (result.cancelled) {
        status.text = `$(debug-stop) Rewardsmith: stopped at ${last?.frames.toLocaleString() ?? 0} frames`;
        void vscode.window.showInformationMessage(
          `Training stopped; the checkpoint is kept in ${outDir} (resume with \`rewardsmith train … --resume ${outDir}\`).`,
        );
        return;
      }
      if (!result.finished?.ok || result.code !== 0) {
        status.text = '$(error) Rewardsmith: training failed';
        const reason = failureReason(result);
        if (!result.finished) dashboard.event(makeEvent({ type: 'finished', ok: false, run_dir: outDir, summary: null, error: reason }));
        void vscode.window.showErrorMessage(`Training failed: ${reason}`, 'Show log').then((c) => c && output.show());
        return;
      }
      status.text = `$(check) Rewardsmith: ${evalResult ? `held-out success ${rateText(evalResult.success.rate, evalResult.success.ci95, evalResult.success.n)}` : last ? trainingSuccessText(last.success) : 'done'} · ${last?.frames.toLocaleString() ?? '?'} frames`;
      await analyze(outDir, document, streamed);
    } finally {
      stop.dispose();
      setTraining(false);
    }
  }

  /** Cancelled when either the notification's Cancel or our own source (Stop and apply) fires. */
  function linkedToken(token: vscode.CancellationToken, own: vscode.CancellationTokenSource): vscode.CancellationToken {
    token.onCancellationRequested(() => own.cancel());
    return own.token;
  }

  /** Runs the trajectory analyzer on a finished run and shows its suggestions on the reward file. */
  async function analyze(runDir: string, document: vscode.TextDocument, already: AnalyzerSuggestion[] = []): Promise<void> {
    const found = [...already];
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Rewardsmith: analysing failed episodes' }, () =>
      runner.run(['analyze', runDir, '--reward', document.uri.fsPath, '--events', 'ndjson'], workspaceDir(document), (e) => {
        if (e.type === 'suggestion') collectSuggestion(e, found);
      }),
    );
    // suggestions.json has the evidence (episodes, steps) the events leave out; it is also the only source
    // when the analyzer streamed nothing.
    const written = readSuggestionsFile(runDir);
    const fromFile = (written?.suggestions ?? []).map((s) => toAnalyzerSuggestion(s));
    if (found.length === 0) found.push(...fromFile);
    for (const s of found) s.evidence ??= fromFile.find((w) => w.id === s.id)?.evidence;
    for (const s of found) if (s.evidence === undefined) delete s.evidence;
    suggestions.set(
      document.uri,
      found,
      // Coverage is absent from files written before it existed.
      typeof written?.failed_episodes === 'number'
        ? { failed: written.failed_episodes, explained: written.explained_episodes ?? 0, causes: written.causes ?? {} }
        : undefined,
    );
    if (found.length > 0) {
      void vscode.window
        .showInformationMessage(
          `The analyzer has ${found.length} suggestion${found.length === 1 ? '' : 's'} for ${path.basename(document.uri.fsPath)}.`,
          'Show',
        )
        .then((c) => c && vscode.commands.executeCommand('rewardsmith.suggestions.focus'));
    }
  }

  /** The run's suggestions.json through the runner's checked reader: a malformed file is reported as the CLI reports it. */
  function readSuggestionsFile(runDir: string): SuggestionsRecord | undefined {
    try {
      return readSuggestions(runDir);
    } catch (err) {
      if (!(err instanceof RunRecordError)) throw err;
      output.appendLine(err.message);
      void vscode.window.showWarningMessage(`Rewardsmith: ${err.message}`);
      return undefined;
    }
  }

  // --- LLM commands ---------------------------------------------------------------------------------------
  async function requireLlm(): Promise<boolean> {
    if (await runner.llmConfigured()) return true;
    const choice = await vscode.window.showWarningMessage(NO_LLM, 'Set LLM API key', 'Open settings');
    if (choice === 'Set LLM API key') await vscode.commands.executeCommand('rewardsmith.setApiKey');
    else if (choice === 'Open settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'rewardsmith.llm');
    return false;
  }

  async function critique(uri?: vscode.Uri): Promise<void> {
    const document = await rewardDocument(uri);
    if (!document || !client) return;
    if (!(await requireLlm())) return;
    const { taskFromHeader } = await import('../../runner/src/tasks');
    const task = taskFromHeader(document.getText()) ?? (vscode.workspace.getConfiguration('rewardsmith').get<string>('defaultTask') || undefined);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Critic reviewing ${path.basename(document.uri.fsPath)}…` },
      () => client!.sendRequest(critiqueRequest, { textDocument: { uri: document.uri.toString() }, task, force: true }),
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
    const budget = vscode.workspace.getConfiguration('rewardsmith.training');
    const outDir = newRunDir(document, 'loop');
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
            '--steps',
            String(budget.get<number>('steps')),
            '--envs',
            String(budget.get<number>('envs')),
            '--backend',
            budget.get<string>('backend') ?? 'auto',
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
            else if (e.type === 'suggestion') collectSuggestion(e, found);
            else if (e.type === 'reward_error') showRewardError(e);
          },
          token,
        ),
    );
    dashboard.sendPastRuns();
    if (found.length) suggestions.set(document.uri, found);
    if (result.code === 0)
      void vscode.window
        .showInformationMessage(`Improvement loop finished; every iteration's reward, critique and run are in ${outDir}.`, 'Open folder')
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
    await client?.sendNotification(setLlmApiKeyNotification, { apiKey: key || null });
    void vscode.window.showInformationMessage(key ? 'LLM API key stored.' : 'LLM API key forgotten.');
  }

  async function analyzeRun(): Promise<void> {
    const root = runsRoot();
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
    await analyze(picked[0].fsPath, document);
  }

  /** Suggestion commands get `{uri, id}` from code actions and the tree's node from its inline buttons. */
  const target = (arg: { uri: string; id?: string; suggestion?: AnalyzerSuggestion }) => ({ uri: arg.uri, id: arg.id ?? arg.suggestion?.id ?? '' });

  registerSweep(context, runner, runsRoot);
  context.subscriptions.push(
    vscode.commands.registerCommand('rewardsmith.train', train),
    vscode.commands.registerCommand('rewardsmith.critique', critique),
    vscode.commands.registerCommand('rewardsmith.improve', (uri?: vscode.Uri) => improve(uri)),
    vscode.commands.registerCommand('rewardsmith.improveNoLlm', (uri?: vscode.Uri) => improve(uri, true)),
    vscode.commands.registerCommand('rewardsmith.newReward', newReward),
    vscode.commands.registerCommand('rewardsmith.setApiKey', setApiKey),
    vscode.commands.registerCommand('rewardsmith.analyzeRun', analyzeRun),
    vscode.commands.registerCommand('rewardsmith.showDashboard', () => dashboard.show()),
    vscode.commands.registerCommand('rewardsmith.stopTraining', () =>
      vscode.window.showInformationMessage('Use the Cancel button on the training notification; the runner keeps its checkpoint.'),
    ),
    vscode.commands.registerCommand('rewardsmith.previewSuggestion', (arg) => suggestions.preview(target(arg).uri, target(arg).id)),
    vscode.commands.registerCommand('rewardsmith.applySuggestion', (arg) => suggestions.apply(target(arg).uri, target(arg).id)),
    vscode.commands.registerCommand('rewardsmith.dismissSuggestion', (arg) => suggestions.drop(target(arg).uri, target(arg).id)),
    vscode.window.onDidChangeActiveTextEditor((e) => {
      if (!training) e && isRewardFile(e.document.uri) ? status.show() : status.hide();
    }),
  );
  status.text = '$(beaker) Rewardsmith';
  status.tooltip = 'Show the run dashboard';
  if (vscode.window.activeTextEditor && isRewardFile(vscode.window.activeTextEditor.document.uri)) status.show();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
