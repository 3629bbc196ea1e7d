// Linting in the editor: each reward document's TypeScript project, and lint runs scheduled so that a storm of
// edits is linted once, at its latest version, without making hover and completion wait (see LINT_QUIET_MS).
import type { Connection, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { RewardProject } from '../../runner/src/lint/analysis';
import { lintSnapshot, lintText, loadPythonParser, pythonParserReady, type RewardDiagnostic } from '../../runner/src/lint/rules';

/** Python reward files (`*.reward.py`), linted through tree-sitter-python rather than a TypeScript project. */
export const isPythonReward = (uri: string) => /\.reward\.py$/.test(uri.replace(/[?#].*$/, ''));

/** Whether the Python parser (WebAssembly, loaded once, in the background) is there; if not, `then` runs once it is. */
export function pythonReady(then: () => void): boolean {
  if (pythonParserReady()) return true;
  void loadPythonParser().then(then);
  return false;
}

/**
 * Edits closer together than this are a storm (a paste replayed keystroke by keystroke, a formatter, a client
 * replaying its history): lint waits until the client has paused this long (no edit, hover, completion or code
 * action), then checks the latest version only. Linting every version made 1,000 lints a burst, and hover
 * waited behind them for over 20 s. An edit after a pause (typing) is linted at once, as before.
 */
const LINT_QUIET_MS = 30;
/** A client that never pauses still gets diagnostics this often (of the latest version). */
const LINT_MAX_WAIT_MS = 1000;

export interface DocumentLinterHost {
  connection: Connection;
  documents: TextDocuments<TextDocument>;
  filePathOf(uri: string): string;
  /** Runs just before `uri` is linted (the critic's findings follow the text first). */
  beforeLint(uri: string): void;
  /** New findings for `uri`: publish its diagnostics. */
  publish(uri: string): void;
}

export class DocumentLinter {
  private readonly projects = new Map<string, RewardProject>();
  /** Each document's lint findings, as last published. */
  readonly results = new Map<string, RewardDiagnostic[]>();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private pendingSince = 0;
  /** Messages handled so far (edits and requests): lint waits for a turn of the event loop in which none was. */
  private handled = 0;
  private lastEditAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly host: DocumentLinterHost) {}

  /** A request came in (hover, completion, code action, lens): a storm is still going on. */
  touched(): void {
    this.handled++;
  }

  closed(uri: string): void {
    this.pending.delete(uri);
    this.projects.get(uri)?.dispose();
    this.projects.delete(uri);
    this.results.delete(uri);
  }

  projectFor(doc: TextDocument): RewardProject {
    let project = this.projects.get(doc.uri);
    if (!project) {
      project = new RewardProject(this.host.filePathOf(doc.uri), doc.getText());
      this.projects.set(doc.uri, project);
    } else project.update(doc.getText());
    return project;
  }

  private lintNow(uri: string): void {
    const doc = this.host.documents.get(uri);
    if (!doc) return;
    if (isPythonReward(uri) && !pythonReady(() => this.schedule(uri))) return;
    try {
      this.results.set(uri, isPythonReward(uri) ? lintText(this.host.filePathOf(uri), doc.getText()) : lintSnapshot(this.projectFor(doc).snapshot()));
    } catch (err) {
      // A checker crash must not take the server down; say so on the first line instead.
      this.results.set(uri, [
        {
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
          severity: 'error',
          code: 'internal',
          source: 'rewardsmith',
          message: `Rewardsmith could not check this file: ${(err as Error).message}`,
          fixes: [],
        },
      ]);
      this.host.connection.console.error(`lint ${uri}: ${(err as Error).stack ?? err}`);
    }
    this.host.publish(uri);
  }

  /** Lints `uri` once the client pauses (see LINT_QUIET_MS): only the version current then is checked and published. */
  schedule(uri: string): void {
    const now = performance.now();
    if (this.pending.size === 0) this.pendingSince = now;
    this.pending.add(uri);
    this.handled++;
    this.armLint(now - this.lastEditAt < LINT_QUIET_MS ? LINT_QUIET_MS : 0);
    this.lastEditAt = now;
  }

  private armLint(quietMs: number): void {
    clearTimeout(this.timer);
    const overdue = () => performance.now() >= this.pendingSince + LINT_MAX_WAIT_MS;
    this.timer = setTimeout(
      () => {
        const seen = this.handled;
        // One more turn first: vscode-jsonrpc handles one queued message per turn of the event loop, so the rest
        // of a storm already queued (or queued behind a slow request) comes before the lint.
        setImmediate(() => {
          if (this.handled !== seen && !overdue()) return this.armLint(LINT_QUIET_MS);
          this.timer = undefined;
          const uris = [...this.pending];
          this.pending.clear();
          for (const u of uris) {
            this.host.beforeLint(u);
            this.lintNow(u);
          }
        });
      },
      Math.max(0, Math.min(quietMs, this.pendingSince + LINT_MAX_WAIT_MS - performance.now())),
    );
  }
}
