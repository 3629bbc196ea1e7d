// Runs the `rewardsmith` CLI as a child process (never inside the extension host: native addons and long CPU
// work do not belong there) and turns its `--events ndjson` stdout into typed events.
import { spawn } from 'node:child_process';
import * as vscode from 'vscode';
import type { FinishedEvent, RunnerEvent } from '../../runner/src/events';
import type { PlaybackRecord } from '../../runner/src/records';
import { NdjsonEventReader, parsePlaybackRecord, PLAYBACK_LIMITS } from './core';

export const API_KEY_SECRET = 'rewardsmith.llmApiKey';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  cancelled: boolean;
  finished: FinishedEvent | undefined;
  /** The last lines the child wrote to stderr: the reason, when it died without a `finished` event. */
  stderrTail: string;
}

/** Why a run failed, in one line for a notification: the runner's own error, else its last stderr line. */
export function failureReason(result: RunResult): string {
  if (result.finished?.error) return result.finished.error;
  const last = result.stderrTail
    .split('\n')
    .filter((l) => l.trim() && !/^\s+at /.test(l))
    .pop();
  return last ? last.replace(/^rewardsmith: /, '') : `the runner exited with ${result.signal ?? result.code}`;
}

export class Runner {
  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
  ) {}

  /** The key from SecretStorage, else the environment's. */
  async apiKey(): Promise<string | undefined> {
    return (await this.context.secrets.get(API_KEY_SECRET)) || process.env.OPENAI_API_KEY || undefined;
  }

  /** Whether an LLM can be reached at all: a key, or a base URL (local servers often need none). */
  async llmConfigured(): Promise<boolean> {
    const baseUrl = vscode.workspace.getConfiguration('rewardsmith.llm').get<string>('baseUrl') || process.env.OPENAI_BASE_URL;
    return Boolean((await this.apiKey()) || baseUrl);
  }

  /** The child's environment: LLM settings as the env vars the runner reads. The key only travels here. */
  private async env(): Promise<NodeJS.ProcessEnv> {
    const llm = vscode.workspace.getConfiguration('rewardsmith.llm');
    const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
    const key = await this.apiKey();
    if (key) env.OPENAI_API_KEY = key;
    if (llm.get<string>('baseUrl')) env.OPENAI_BASE_URL = llm.get<string>('baseUrl');
    if (llm.get<string>('model')) env.REWARDSMITH_MODEL = llm.get<string>('model');
    env.REWARDSMITH_TEMPERATURE = String(llm.get<number>('temperature') ?? 0.3);
    env.REWARDSMITH_LLM_TIMEOUT_MS = String(llm.get<number>('timeoutMs') ?? 60000);
    return env;
  }

  /** Where the CLI is and what runs it (settings, else this extension's bundle under its Node). */
  private cli(): { node: string; cli: string } {
    const config = vscode.workspace.getConfiguration('rewardsmith');
    return { node: config.get<string>('nodePath') || process.execPath, cli: config.get<string>('runnerPath') || this.context.asAbsolutePath('dist/cli.js') };
  }

  /**
   * `rewardsmith playback DIR --episode N --format json`: the episode re-simulated, checked. Bounded: the
   * child is killed after `timeoutMs` or past PLAYBACK_LIMITS.chars of output; its error line is the rejection.
   */
  playback(dir: string, episode: number, timeoutMs = 120_000): Promise<PlaybackRecord> {
    return this.runPlayback(['playback', dir, '--episode', String(episode), '--format', 'json'], timeoutMs);
  }

  /** `rewardsmith playback FILE --probe N --format json`: probe episode N of the file's task with its rewards. */
  playbackProbe(rewardFile: string, probe: number, timeoutMs = 120_000): Promise<PlaybackRecord> {
    return this.runPlayback(['playback', rewardFile, '--probe', String(probe), '--format', 'json'], timeoutMs);
  }

  private runPlayback(args: string[], timeoutMs: number): Promise<PlaybackRecord> {
    const { node, cli } = this.cli();
    this.output.appendLine(`$ rewardsmith ${args.join(' ')}`);
    return new Promise((resolve, reject) => {
      const child = spawn(node, [cli, ...args], { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '',
        err = '',
        why = '';
      const stop = (reason: string) => {
        why ||= reason;
        child.kill('SIGKILL');
      };
      const timer = setTimeout(() => stop(`no playback within ${timeoutMs / 1000} s`), timeoutMs);
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        if (out.length > PLAYBACK_LIMITS.chars) stop(`the playback is larger than ${PLAYBACK_LIMITS.chars} characters`);
      });
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-2000)));
      child.on('error', (e) => stop(`could not start ${node} ${cli}: ${e.message}`));
      child.on('close', (code) => {
        clearTimeout(timer);
        if (why) return reject(new Error(why));
        if (code !== 0)
          return reject(
            new Error(
              err
                .trim()
                .split('\n')[0]
                ?.replace(/^rewardsmith playback: /, '') || `the runner exited with ${code}`,
            ),
          );
        try {
          resolve(parsePlaybackRecord(out));
        } catch (e) {
          reject(e as Error);
        }
      });
    });
  }

  /**
   * Runs `rewardsmith ARGS`, streaming events to `onEvent`; other output goes to the output channel.
   * Cancelling sends SIGINT (the runner checkpoints and exits), then SIGTERM if it has not exited after 10 s.
   */
  async run(args: string[], cwd: string, onEvent: (e: RunnerEvent) => void, token?: vscode.CancellationToken): Promise<RunResult> {
    const { node, cli } = this.cli();
    // The key never appears here: it is only in the child's environment.
    this.output.appendLine(`$ rewardsmith ${args.join(' ')}    (cwd ${cwd})`);
    const child = spawn(node, [cli, ...args], { cwd, env: await this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let finished: FinishedEvent | undefined;
    let cancelled = false;
    const reader = new NdjsonEventReader(
      (e) => {
        if (e.type === 'finished') finished = e;
        if (e.type === 'log') this.output.appendLine(`[${e.level}] ${e.message}`);
        onEvent(e);
      },
      (line) => this.output.appendLine(line),
    );
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => reader.push(chunk));
    let stderrTail = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.output.append(chunk);
      stderrTail = (stderrTail + chunk).slice(-2000);
    });
    let escalate: NodeJS.Timeout | undefined;
    const cancel = token?.onCancellationRequested(() => {
      cancelled = true;
      this.output.appendLine('Stopping: SIGINT sent (the runner saves its checkpoint).');
      child.kill('SIGINT');
      escalate = setTimeout(() => child.kill('SIGTERM'), 10_000);
    });
    return new Promise((resolve) => {
      child.on('error', (err) => {
        stderrTail += `could not start ${node} ${cli}: ${err.message}`;
        this.output.appendLine(`Could not start the runner (${node} ${cli}): ${err.message}`);
      });
      child.on('close', (code, signal) => {
        reader.end();
        cancel?.dispose();
        if (escalate) clearTimeout(escalate);
        this.output.appendLine(`rewardsmith ${args[0]} exited with ${signal ?? code}`);
        resolve({ code, signal, cancelled, finished, stderrTail: stderrTail.trim() });
      });
    });
  }
}
