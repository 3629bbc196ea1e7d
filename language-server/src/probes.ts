// The probes in the editor: each reward document is probed (its text replayed on its task's probe bank) on save
// and after PROBE_IDLE_MS without typing, never per keystroke, off the request path: the replay runs in the
// sandbox's own process, and a bank recorded for the first time yields to the event loop between slices, so hover
// and completion answer meanwhile. One probe per document at a time; an edit during it asks for one more after
// it. Keeps each document's findings (published as diagnostics by the server) and its reward profile (CodeLens).
import { CodeActionKind, type CodeAction, type CodeLens, type Connection, type Diagnostic, type InitializeParams } from 'vscode-languageserver/node';
import { CLIENT_COMMANDS, DIAGNOSTIC_SOURCE, type RewardsmithInitializationOptions } from '../../protocol/src/lsp';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextDocuments } from 'vscode-languageserver/node';
import { probeDiagnostic, taskOfReward } from '../../runner/src/lint/check';
import type { RewardDiagnostic } from '../../runner/src/lint/rules';
import { probeReward, profileText, type LineProfile } from '../../runner/src/probe/index';
import { isPythonFile, prewarmSandboxHost } from '../../runner/src/reward/index';
import { taskFromHeader } from '../../runner/src/tasks';

/** The pause in typing after which the probes run (they also run on save; never per keystroke). */
export const PROBE_IDLE_MS = 1000;

export interface EditorProbeHost {
  connection: Connection;
  documents: TextDocuments<TextDocument>;
  filePathOf(uri: string): string;
  /** The editor's default task, for a file without a `// task:` header. */
  defaultTask(): Promise<string | undefined>;
  /** New findings for `uri`: publish its diagnostics. */
  publish(uri: string): void;
}

/** A finding a probe episode shows carries it on its LSP diagnostic (`data.probeEpisode`, 1-based), for codeActions. */
export function probeEpisodeData(d: RewardDiagnostic): Pick<Diagnostic, 'data'> {
  return d.probeEpisode === undefined ? {} : { data: { probeEpisode: d.probeEpisode } };
}

export class EditorProbes {
  private readonly findings = new Map<string, RewardDiagnostic[]>();
  /** Each document's reward profile, with the text it was probed on (a lens on changed text would sit on the wrong line). */
  private readonly profiles = new Map<string, { text: string; profile: LineProfile[] }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly probing = new Set<string>();
  private readonly again = new Set<string>();
  /** The client re-asks for CodeLenses when told (workspace/codeLens/refresh). */
  canRefreshLenses = false;
  /** The client runs CLIENT_COMMANDS.playProbeEpisode (said in its initializationOptions). */
  clientPlaysEpisodes = false;

  constructor(private readonly host: EditorProbeHost) {}

  /** What the client said at `initialize`: whether it refreshes CodeLenses and plays probe episodes. */
  initialize(params: InitializeParams): void {
    this.canRefreshLenses = !!params.capabilities.workspace?.codeLens?.refreshSupport;
    this.clientPlaysEpisodes = (params.initializationOptions as RewardsmithInitializationOptions | undefined)?.playProbeEpisode === true;
  }

  /** For each finding a probe episode shows, a client that can play it (VS Code: in its dashboard) gets the action. */
  codeActions(uri: string, diagnostics: Diagnostic[]): CodeAction[] {
    if (!this.clientPlaysEpisodes) return [];
    return diagnostics.flatMap((diag) => {
      const episode = (diag.data as { probeEpisode?: unknown } | undefined)?.probeEpisode;
      if (diag.source !== DIAGNOSTIC_SOURCE.probe || !Number.isInteger(episode)) return [];
      return [
        {
          title: `Watch probe episode ${episode} with this reward`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diag],
          command: { title: 'Watch probe episode', command: CLIENT_COMMANDS.playProbeEpisode, arguments: [{ uri, episode }] },
        },
      ];
    });
  }

  /** A reward document opened: the first probe of the session does not wait for a sandbox host to start (a Python file's starts its own). */
  opened(uri: string): void {
    if (!isPythonFile(this.host.filePathOf(uri))) prewarmSandboxHost();
    this.schedule(uri, PROBE_IDLE_MS);
  }

  schedule(uri: string, delayMs: number): void {
    clearTimeout(this.timers.get(uri));
    const timer = setTimeout(() => {
      this.timers.delete(uri);
      void this.probe(uri);
    }, delayMs);
    timer.unref?.();
    this.timers.set(uri, timer);
  }

  closed(uri: string): void {
    this.findings.delete(uri);
    this.profiles.delete(uri);
    clearTimeout(this.timers.get(uri));
    this.timers.delete(uri);
  }

  diagnostics(uri: string): RewardDiagnostic[] {
    return this.findings.get(uri) ?? [];
  }

  /**
   * The reward profile above each line that decides something (ran on some probe calls, not all): how often it
   * ran on successful episodes and on failure modes, and its share of each one's pay. From the last probe.
   */
  lenses(uri: string): CodeLens[] {
    const doc = this.host.documents.get(uri);
    const known = this.profiles.get(uri);
    if (!doc || !known || known.text !== doc.getText()) return [];
    return known.profile.map((p) => ({
      range: { start: { line: p.line - 1, character: p.column - 1 }, end: { line: p.line - 1, character: p.column - 1 } },
      command: { title: `probe profile: ${profileText(p)}`, command: '' },
    }));
  }

  private async probe(uri: string): Promise<void> {
    const { documents, connection } = this.host;
    const doc = documents.get(uri);
    if (!doc) return;
    if (this.probing.has(uri)) {
      this.again.add(uri);
      return;
    }
    this.probing.add(uri);
    const text = doc.getText();
    const file = this.host.filePathOf(uri);
    try {
      // The file's `// task:` header, else the editor's default task; a reward with neither is not probed.
      const defaultTask = taskFromHeader(text) ? undefined : await this.host.defaultTask();
      const task = taskOfReward(file, text, defaultTask);
      const result = task ? await probeReward(file, task, { source: text }) : null;
      // Findings of text that has changed since would sit on the wrong lines: the next probe replaces them.
      if (documents.get(uri)?.getText() === text) {
        this.findings.set(uri, result ? result.findings.map(probeDiagnostic) : []);
        this.profiles.set(uri, { text, profile: result?.profile ?? [] });
        this.host.publish(uri);
        if (this.canRefreshLenses) void connection.sendRequest('workspace/codeLens/refresh').catch(() => undefined);
      }
    } catch (err) {
      connection.console.error(`probe ${uri}: ${(err as Error).message}`);
    } finally {
      this.probing.delete(uri);
      if (this.again.delete(uri)) this.schedule(uri, 0);
    }
  }
}
