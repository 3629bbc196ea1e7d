// What the extension's commands share: the services activation creates once, and the questions every command
// asks of the workspace (which reward file, which task, where runs go), answered the same way for all of them.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { RunnerEvent } from '../../runner/src/events';
import type { Dashboard } from './dashboard';
import type { Runner } from './runner';
import type { Suggestions } from './suggestions';

export const REWARD_SELECTOR = [
  { scheme: 'file', pattern: '**/*.reward.ts' },
  { scheme: 'file', pattern: '**/*.reward.js' },
  { scheme: 'file', pattern: '**/*.reward.py' },
];
export const isRewardFile = (uri: vscode.Uri) => /\.reward\.(ts|js|py)$/.test(uri.path);

/** Created once by `activate` and handed to each part that registers commands. */
export interface Services {
  context: vscode.ExtensionContext;
  output: vscode.OutputChannel;
  runner: Runner;
  suggestions: Suggestions;
  dashboard: Dashboard;
  /** Run-time reward errors (file:line from the sandbox), shown in Problems. */
  runtimeErrors: vscode.DiagnosticCollection;
  /** The language client once it runs (undefined without a server, or before it started). */
  client: () => LanguageClient | undefined;
  /** The `rewardsmith.runsDirectory` folder of the first workspace folder. */
  runsRoot: () => string | undefined;
}

export function runsRootOf(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder && path.resolve(folder.uri.fsPath, vscode.workspace.getConfiguration('rewardsmith').get<string>('runsDirectory') || 'runs');
}

/** The reward file a command is for (the clicked one, else the active editor's), saved; an error message when there is none. */
export async function rewardDocument(uri?: vscode.Uri): Promise<vscode.TextDocument | undefined> {
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
export async function taskFor(document?: vscode.TextDocument): Promise<string | undefined> {
  // Loaded on demand: the task module pulls in minecraft-data, which activation should not pay for.
  const { BUILTIN_TASKS, taskFromHeader } = await import('../../runner/src/task-list');
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

/** `--steps`, `--envs` and `--backend` from the `rewardsmith.training` settings: the budget training and the loop run with. */
export function trainingBudgetArgs(): string[] {
  const config = vscode.workspace.getConfiguration('rewardsmith.training');
  return ['--steps', String(config.get<number>('steps')), '--envs', String(config.get<number>('envs')), '--backend', config.get<string>('backend') ?? 'auto'];
}

/** Where the runner runs: the document's workspace folder, else the first one, else the document's folder. */
export const workspaceDir = (document?: vscode.TextDocument) =>
  (document && vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath) ??
  vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ??
  (document ? path.dirname(document.uri.fsPath) : process.cwd());

/** A fresh run folder for `document`: `<runs>/<stem>-<kind>-<yyyymmdd-hhmmss>`. */
export function newRunDir(s: Services, document: vscode.TextDocument, kind: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const stem = path.basename(document.uri.fsPath).replace(/\.reward\.(ts|js|py)$/, '');
  return path.join(s.runsRoot() ?? path.join(workspaceDir(document), 'runs'), `${stem}-${kind}-${stamp}`);
}

/** A reward that failed in the sandbox: a diagnostic at its line and a message that opens it. */
export function showRewardError(s: Services, e: Extract<RunnerEvent, { type: 'reward_error' }>): void {
  const uri = vscode.Uri.file(e.file);
  const at = new vscode.Range(Math.max(0, e.line - 1), Math.max(0, e.column - 1), Math.max(0, e.line - 1), Number.MAX_SAFE_INTEGER);
  const d = new vscode.Diagnostic(at, `${e.kind}: ${e.message}`, vscode.DiagnosticSeverity.Error);
  d.source = 'reward-runtime';
  s.runtimeErrors.set(uri, [d]);
  void vscode.window
    .showErrorMessage(`The reward failed at line ${e.line}: ${e.message}`, 'Show')
    .then((c) => c && vscode.window.showTextDocument(uri, { selection: at }));
}
