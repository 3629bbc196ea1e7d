// The run dashboard's host side: one webview panel (strict CSP with a nonce; chart.js is inside the bundled
// dist/dashboard.js), fed with the live run's events and the workspace's past runs read from their records.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunnerEvent } from '../../runner/src/events';
import type { PlaybackRecord } from '../../runner/src/records';
import type { DashboardMessage, WebviewMessage } from './dashboard/protocol';
import { readPastRuns } from './dashboard/past-runs';

export class Dashboard {
  private panel: vscode.WebviewPanel | undefined;
  /** The live run's events so far, replayed when the panel is (re)opened. */
  private live: { label: string; events: RunnerEvent[] } | undefined;
  /** The last improvement loop's table, shown again when the panel is (re)opened. */
  private loop: { label: string; table: string } | undefined;

  /** The run folders last sent to the webview: the only ones it may ask to play back. */
  private pastDirs = new Set<string>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly runsRoot: () => string | undefined,
    /** Re-simulates an episode (the CLI's `playback --format json` as a child process). */
    private readonly playback?: (dir: string, episode: number) => Promise<PlaybackRecord>,
    /** Re-simulates a probe episode of a reward file's task with its rewards (`playback FILE --probe N`). */
    private readonly probePlayback?: (rewardFile: string, probe: number) => Promise<PlaybackRecord>,
  ) {}

  show(preserveFocus = false): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const panel = vscode.window.createWebviewPanel(
      'rewardsmith.dashboard',
      'Rewardsmith Runs',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      {
        enableScripts: true,
        localResourceRoots: [dist],
        retainContextWhenHidden: true,
      },
    );
    panel.webview.html = this.html(panel.webview, vscode.Uri.joinPath(dist, 'dashboard.js'));
    panel.webview.onDidReceiveMessage((m: WebviewMessage) => {
      if (m?.type === 'play') return void this.play(m.dir, m.episode, m.step);
      if (m?.type !== 'ready') return;
      this.sendPastRuns();
      if (this.live) {
        this.post({ type: 'live-start', label: this.live.label });
        for (const event of this.live.events) this.post({ type: 'event', event });
      }
      if (this.loop) this.post({ type: 'loop-results', ...this.loop });
      // A playback asked for before the panel was ready (a probe finding's code action opens the panel).
      if (this.lastPlayback) this.post(this.lastPlayback);
    });
    panel.onDidDispose(() => (this.panel = undefined));
    this.panel = panel;
  }

  startLive(label: string): void {
    this.live = { label, events: [] };
    this.post({ type: 'live-start', label });
  }

  event(event: RunnerEvent): void {
    this.live?.events.push(event);
    this.post({ type: 'event', event });
  }

  /** Shows an improvement loop's iteration table (every candidate, its difference to the reward in force, the decision). */
  showLoopResults(label: string, table: string): void {
    this.loop = { label, table };
    this.post({ type: 'loop-results', label, table });
  }

  sendPastRuns(): void {
    const root = this.runsRoot();
    const runs = root ? readPastRuns(root) : [];
    this.pastDirs = new Set(runs.map((r) => r.dir));
    this.post({ type: 'past-runs', runs });
  }

  /**
   * Plays an episode of a past run the webview was sent (any other folder is refused), from `step` when a
   * finding's evidence cites one.
   */
  private async play(dir: string, episode: number, step?: number): Promise<void> {
    const run = path.basename(String(dir));
    if (!this.pastDirs.has(dir) || !Number.isInteger(episode) || episode < 0 || !this.playback) return;
    const from = Number.isInteger(step) && step! >= 0 ? { step: step! } : {};
    this.post({ type: 'playback-loading', run, episode });
    try {
      this.post({ type: 'playback', run, record: await this.playback(dir, episode), ...from });
    } catch (err) {
      this.post({ type: 'playback-error', run, episode, message: (err as Error).message });
    }
  }

  /** Plays probe episode `probe` (1-based) of a reward file's task with that file's rewards, opening the panel. */
  async playProbe(rewardFile: string, probe: number): Promise<void> {
    if (!this.probePlayback || !Number.isInteger(probe) || probe < 1) return;
    const run = path.basename(rewardFile);
    this.show(true);
    this.lastPlayback = undefined;
    this.post({ type: 'playback-loading', run, episode: probe });
    try {
      this.lastPlayback = { type: 'playback', run, record: await this.probePlayback(rewardFile, probe) };
    } catch (err) {
      this.lastPlayback = { type: 'playback-error', run, episode: probe, message: (err as Error).message };
    }
    this.post(this.lastPlayback);
  }

  /** The last probe playback, sent again when the webview (re)loads. */
  private lastPlayback: DashboardMessage | undefined;

  private post(message: DashboardMessage): void {
    void this.panel?.webview.postMessage(message);
  }

  private html(webview: vscode.Webview, script: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const csp = [
      `default-src 'none'`,
      `img-src ${webview.cspSource} data:`,
      `style-src 'nonce-${nonce}'`,
      `script-src 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Rewardsmith Runs</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 16px 24px; }
  h2 { font-size: 1.1em; margin: 18px 0 6px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 12px; }
  .chart { position: relative; height: 190px; }
  table { border-collapse: collapse; margin: 4px 0; }
  th, td { border: 1px solid var(--vscode-panel-border, #444); padding: 3px 8px; text-align: left; }
  th { background: var(--vscode-editorWidget-background); }
  .muted { opacity: 0.7; }
  .result { font-weight: bold; padding: 6px 8px; margin: 6px 0; border-radius: 3px; }
  .result.ok { background: rgba(89, 181, 106, 0.2); }
  .result.failed { background: rgba(224, 82, 82, 0.2); }
  #loop-table { overflow-x: auto; font-family: var(--vscode-editor-font-family, monospace); font-size: 0.9em; white-space: pre; }
  #map { width: 100%; max-width: 720px; height: 360px; display: block; }
  ul { padding-left: 0; list-style: none; } li { padding-left: 6px; margin: 2px 0; }
  #playback canvas.frame { width: 288px; height: 240px; image-rendering: pixelated; display: block; }
  #playback canvas.timeline { width: 100%; max-width: 520px; height: 120px; display: block; }
  .pb-controls { display: flex; gap: 6px; align-items: center; margin: 6px 0; max-width: 520px; } .pb-controls input { flex: 1; }
  .pb-note.active { background: rgba(229, 192, 123, 0.25); }
</style></head>
<body>
  <h2>Live run: <span id="live-label">none</span></h2>
  <div id="live-status" class="muted">Start one with “Train on this reward”.</div>
  <div id="live-result"></div>
  <div class="charts">
    <div class="chart"><canvas id="chart-return"></canvas></div>
    <div><div class="chart"><canvas id="chart-success"></canvas></div><div id="success-note" class="muted"></div></div>
    <div class="chart"><canvas id="chart-fps"></canvas></div>
  </div>
  <p class="muted">Returns from the first update: of the episodes that finished in it (solid) and, dashed, the return so far of those still running.</p>
  <h2>PPO</h2>
  <div class="charts">
    <div class="chart"><canvas id="chart-entropy"></canvas></div>
    <div class="chart"><canvas id="chart-approx-kl"></canvas></div>
    <div class="chart"><canvas id="chart-clip-fraction"></canvas></div>
    <div class="chart"><canvas id="chart-value-loss"></canvas></div>
    <div class="chart"><canvas id="chart-explained-variance"></canvas></div>
    <div class="chart"><canvas id="chart-learning-rate"></canvas></div>
  </div>
  <section id="loop" hidden>
    <h2>Improvement loop: <span id="loop-label"></span></h2>
    <pre id="loop-table"></pre>
  </section>
  <h2>Evaluation</h2>
  <div id="eval"><p class="muted">Evaluation runs after training.</p></div>
  <h2 id="map-title">Failed episodes</h2>
  <canvas id="map"></canvas>
  <div id="map-legend"></div>
  <h2 id="findings-title">Findings</h2>
  <div id="findings"><p class="muted">The analyzer's findings on the latest run, with the episodes they cite, show here.</p></div>
  <h2 id="playback-title">Episode playback</h2>
  <div id="playback"><p class="muted">Press ▶ beside a failed episode of a past run, or beside the evidence of a finding, to watch what the agent saw.</p></div>
  <h2>Past runs in this workspace</h2>
  <div id="past"><p class="muted">Loading…</p></div>
  <script nonce="${nonce}" src="${webview.asWebviewUri(script)}"></script>
</body></html>`;
  }
}
