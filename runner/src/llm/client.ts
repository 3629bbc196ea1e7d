// LLM access for the three roles (designer, critic, analyzer): configuration from env vars and overrides,
// one chat call with retries and backoff through the real `openai` client, answer validation with
// re-asking, and a log of every call. Callers get either an answer or an LlmError/LlmNotConfiguredError
// whose message is written for the user; nothing here crashes the host on a bad network or a bad answer.
// Every call is bounded in wall-clock time: each attempt by an AbortSignal that covers the whole response
// (the client's own timeout ends when the headers arrive, so a server that drips its body would hold it
// forever), and all attempts with their backoff by a total budget. Every response body is bounded in size too:
// the client reads it through a fetch that stops at `maxBodyBytes` (a server that streams a body forever grew
// the process by ~55 MB/s until the deadline).
import path from 'node:path';
import { appendNoFollow } from '../files';
import OpenAI from 'openai';
import { CommandError } from '../args';

export interface LlmConfig {
  /** OpenAI-compatible API base URL (e.g. `http://localhost:8000/v1`); undefined = OpenAI's. */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string;
  temperature: number;
  /** Limit of one HTTP attempt, from the request until the whole response body has arrived. */
  timeoutMs: number;
  /** Limit of one `chat()` call: all attempts and the waits between them. */
  budgetMs: number;
  /** Longest wait before a retry, whatever a server's Retry-After asks for. */
  retryAfterCapMs: number;
  /** Retries after the first attempt, for transport failures (429, 5xx, timeouts, unparsable bodies) and,
   * separately, for answers that fail validation. */
  maxRetries: number;
  /** First backoff delay; doubles each retry (a server's Retry-After wins when given). */
  retryDelayMs: number;
  /** Longest response body read from the server (answers are a few KB); a longer one fails the call. */
  maxBodyBytes: number;
}

export const LLM_DEFAULTS = {
  model: 'gpt-4o',
  temperature: 0.3, // the paper's setting for all three roles
  timeoutMs: 60_000,
  budgetMs: 180_000,
  retryAfterCapMs: 30_000,
  maxRetries: 3,
  retryDelayMs: 1000,
  maxBodyBytes: 4 * 2 ** 20,
} as const;

/** Thrown before any request when neither a key nor a base URL is known. */
export class LlmNotConfiguredError extends CommandError {
  override readonly name: string = 'LlmNotConfiguredError';
  constructor() {
    // Exit 2 like a usage error: the command cannot run as set up (README, "Errors and exit codes").
    super(
      'No LLM configured: set OPENAI_API_KEY (for OpenAI), or OPENAI_BASE_URL for an OpenAI-compatible server ' +
        '(plus OPENAI_API_KEY if it needs one); REWARDSMITH_MODEL picks the model. In the editor: ' +
        '"Rewardsmith: Set LLM API key" and the rewardsmith.llm settings.',
      2,
    );
  }
}

export type LlmErrorKind = 'timeout' | 'rate-limit' | 'server' | 'connection' | 'malformed' | 'request';

/** The LLM could not give a usable answer (after retries where retrying makes sense). */
export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly attempts: number,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

const nonEmpty = (v: string | undefined | null): string | undefined => (v && v.trim() !== '' ? v.trim() : undefined);

/** Overrides (editor settings, CLI flags) win over env vars, which win over defaults. Empty strings count as unset. */
export function resolveLlmConfig(overrides: Partial<LlmConfig> = {}, env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const num = (v: number | undefined, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  const envNum = (name: string) => (nonEmpty(env[name]) === undefined ? undefined : Number(env[name]));
  const timeoutMs = num(overrides.timeoutMs, num(envNum('REWARDSMITH_LLM_TIMEOUT_MS'), LLM_DEFAULTS.timeoutMs));
  return {
    baseUrl: nonEmpty(overrides.baseUrl) ?? nonEmpty(env.OPENAI_BASE_URL),
    apiKey: nonEmpty(overrides.apiKey) ?? nonEmpty(env.OPENAI_API_KEY),
    model: nonEmpty(overrides.model) ?? nonEmpty(env.REWARDSMITH_MODEL) ?? LLM_DEFAULTS.model,
    // The extension passes its settings to the runner CLI as these env vars.
    temperature: num(overrides.temperature, num(envNum('REWARDSMITH_TEMPERATURE'), LLM_DEFAULTS.temperature)),
    timeoutMs,
    // Without a budget of its own, a shorter per-attempt limit shortens the budget too (five attempts' worth).
    budgetMs: num(overrides.budgetMs, num(envNum('REWARDSMITH_LLM_BUDGET_MS'), Math.min(LLM_DEFAULTS.budgetMs, 5 * timeoutMs))),
    retryAfterCapMs: Math.max(0, num(overrides.retryAfterCapMs, LLM_DEFAULTS.retryAfterCapMs)),
    maxRetries: Math.max(0, Math.floor(num(overrides.maxRetries, LLM_DEFAULTS.maxRetries))),
    retryDelayMs: Math.max(0, num(overrides.retryDelayMs, LLM_DEFAULTS.retryDelayMs)),
    maxBodyBytes: Math.max(1, Math.floor(num(overrides.maxBodyBytes, num(envNum('REWARDSMITH_LLM_MAX_BODY_BYTES'), LLM_DEFAULTS.maxBodyBytes)))),
  };
}

export function isLlmConfigured(config: LlmConfig): boolean {
  return config.apiKey !== undefined || config.baseUrl !== undefined;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** One line of `llm-calls.ndjson`: every HTTP attempt, failed ones included. */
export interface LlmCallRecord {
  time: string;
  role: string;
  model: string;
  temperature: number;
  base_url: string | null;
  attempt: number;
  messages: ChatMessage[];
  answer: string | null;
  usage: TokenUsage | null;
  latency_ms: number;
  error: string | null;
}

/**
 * Where calls are logged: a folder (appends to `llm-calls.ndjson` there) or a callback (e.g. an output channel).
 * The folder is its owner's, made before the first call (the loop's --out, the design's work folder); it is not
 * made here, where a linked folder could not be told from the one the user named.
 */
export type LlmLog = { dir: string } | ((record: LlmCallRecord) => void);

export const LLM_LOG_FILE = 'llm-calls.ndjson';

function writeLog(log: LlmLog | undefined, record: LlmCallRecord): void {
  if (!log) return;
  if (typeof log === 'function') {
    log(record);
    return;
  }
  appendNoFollow(path.join(log.dir, LLM_LOG_FILE), JSON.stringify(record) + '\n');
}

export interface ChatOptions {
  /** Which role is asking (designer, critic, analyzer); goes into the log. */
  role: string;
  llm?: Partial<LlmConfig>;
  log?: LlmLog;
  signal?: AbortSignal;
}

export interface ChatAnswer {
  text: string;
  model: string;
  usage: TokenUsage | null;
  latencyMs: number;
}

const clients = new Map<string, OpenAI>();

function clientFor(config: LlmConfig): OpenAI {
  const key = `${config.baseUrl ?? ''}\u0000${config.apiKey ?? ''}\u0000${config.timeoutMs}\u0000${config.maxBodyBytes}`;
  let client = clients.get(key);
  if (!client) {
    // Local OpenAI-compatible servers often need no key, but the client insists on one.
    client = new OpenAI({
      baseURL: config.baseUrl,
      apiKey: config.apiKey ?? 'not-needed',
      timeout: config.timeoutMs,
      maxRetries: 0,
      fetch: fetchCappedAt(config.maxBodyBytes),
    });
    clients.set(key, client);
  }
  return client;
}

/** A response body passed `maxBodyBytes`: what was read is dropped and the connection closed. */
class BodyTooLongError extends Error {
  constructor(
    readonly limit: number,
    readonly declared: number | undefined,
  ) {
    super(`the response body is longer than ${limit} bytes`);
    this.name = 'BodyTooLongError';
  }
}

/**
 * fetch that hands the client a body which errors with BodyTooLongError once more than `limit` bytes have
 * arrived (or at once when the headers declare more), cancelling the transfer. The client reads bodies
 * whole (`response.json()`), so this is what bounds its memory.
 */
function fetchCappedAt(limit: number): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > limit) {
      await response.body.cancel();
      throw new BodyTooLongError(limit, declared);
    }
    const reader = response.body.getReader();
    let read = 0;
    const capped = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        read += value.byteLength;
        if (read > limit) {
          controller.error(new BodyTooLongError(limit, undefined));
          await reader.cancel();
          return;
        }
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The BodyTooLongError behind an error of the client (it wraps a fetch failure as a connection error). */
function bodyTooLong(err: unknown): BodyTooLongError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof BodyTooLongError) return e;
  return undefined;
}

const mebibytes = (bytes: number) =>
  bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${bytes} bytes`;

interface Classified {
  kind: LlmErrorKind;
  retryable: boolean;
  message: string;
  retryAfterMs?: number;
}

function retryAfter(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const s = headers.get('retry-after');
  if (s === null) return undefined;
  const secs = Number(s);
  if (Number.isFinite(secs)) return secs * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Which of a call's limits ended an attempt, if any. */
interface Deadlines {
  attempt: AbortSignal;
  budget: AbortSignal;
  caller: AbortSignal | undefined;
}

function classify(err: unknown, config: LlmConfig, limits: Deadlines): Classified {
  // Our own signals first: the error the client surfaces for an abort depends on whether the headers had come.
  if (limits.caller?.aborted) return { kind: 'request', retryable: false, message: 'cancelled' };
  if (limits.budget.aborted)
    return { kind: 'timeout', retryable: false, message: `no complete answer within the call's total budget of ${config.budgetMs} ms` };
  if (limits.attempt.aborted || err instanceof OpenAI.APIConnectionTimeoutError) {
    return { kind: 'timeout', retryable: true, message: `no complete answer within ${config.timeoutMs} ms (the limit of one attempt)` };
  }
  if (err instanceof OpenAI.APIUserAbortError) return { kind: 'request', retryable: false, message: 'cancelled' };
  // Not retried: a server that sent one endless or giant body sends the next the same way.
  const tooLong = bodyTooLong(err);
  if (tooLong) {
    const declared = tooLong.declared === undefined ? '' : ` (it declares ${mebibytes(tooLong.declared)})`;
    return {
      kind: 'malformed',
      retryable: false,
      message: `the response from ${config.baseUrl ?? 'the OpenAI API'} is longer than ${mebibytes(tooLong.limit)}${declared}, the limit of a reply body (REWARDSMITH_LLM_MAX_BODY_BYTES); is it an OpenAI-compatible chat completions endpoint?`,
    };
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return { kind: 'connection', retryable: true, message: `cannot reach ${config.baseUrl ?? 'the OpenAI API'}${cause}` };
  }
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    const detail = err.message;
    const after = retryAfter(err.headers);
    if (status === 429) return { kind: 'rate-limit', retryable: true, message: `rate limited (429): ${detail}`, retryAfterMs: after };
    if (status >= 500 || status === 408 || status === 409)
      return { kind: 'server', retryable: true, message: `server error (${status}): ${detail}`, retryAfterMs: after };
    if (status === 401) return { kind: 'request', retryable: false, message: `the API key was rejected (401): ${detail}` };
    if (status === 404)
      return {
        kind: 'request',
        retryable: false,
        message: `not found (404; is the model "${config.model}" served at ${config.baseUrl ?? 'OpenAI'}?): ${detail}`,
      };
    return { kind: 'request', retryable: false, message: `request refused (${status}): ${detail}` };
  }
  // A 200 whose body is not JSON surfaces as a SyntaxError from the client's parser.
  if (err instanceof SyntaxError) return { kind: 'malformed', retryable: true, message: `the server's response was not valid JSON (${err.message})` };
  return { kind: 'request', retryable: false, message: err instanceof Error ? err.message : String(err) };
}

/** Waits, or rejects with the reason when a signal fires first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const duration = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`);

/** The wait before retry number `retry`, and what the log says about a server's Retry-After. */
function backoff(config: LlmConfig, retry: number, serverHint: number | undefined): { ms: number; note: string } {
  if (serverHint !== undefined) {
    if (serverHint <= config.retryAfterCapMs) return { ms: serverHint, note: `the server asked to wait ${duration(serverHint)} (Retry-After)` };
    return {
      ms: config.retryAfterCapMs,
      note: `the server asked to wait ${duration(serverHint)} (Retry-After); waited ${duration(config.retryAfterCapMs)}, the most this client waits`,
    };
  }
  const base = config.retryDelayMs * 2 ** (retry - 1);
  return { ms: Math.min(base * (1 + Math.random() * 0.25), 30_000), note: '' };
}

/**
 * One chat completion with retries on 429, 5xx, timeouts, connection failures and unparsable or empty
 * responses, all within `budgetMs`; each attempt gets `timeoutMs` for the whole response. Throws
 * LlmNotConfiguredError, or LlmError after the last attempt saying which limit ended it.
 */
export async function chat(messages: ChatMessage[], opts: ChatOptions): Promise<ChatAnswer> {
  const config = resolveLlmConfig(opts.llm);
  if (!isLlmConfigured(config)) throw new LlmNotConfiguredError();
  const client = clientFor(config);
  const budget = AbortSignal.timeout(Math.max(1, config.budgetMs));
  const untilBudgetOrCaller = opts.signal ? AbortSignal.any([budget, opts.signal]) : budget;
  const callStarted = performance.now();
  let last: Classified | undefined;
  // What the last wait was, when a server's Retry-After set it: the final message reports it.
  let waitNote = '';
  let attempt = 0;
  const fail = (c: Classified): LlmError => {
    const tried = attempt === 1 ? '' : ` after ${attempt} attempts`;
    const waits = waitNote ? ` (${waitNote})` : '';
    return new LlmError(c.kind, `LLM call failed${tried}: ${c.message}${waits}`, attempt);
  };
  for (attempt = 1; attempt <= config.maxRetries + 1; attempt++) {
    if (attempt > 1) {
      const wait = backoff(config, attempt - 1, last?.retryAfterMs);
      waitNote = wait.note;
      const left = config.budgetMs - (performance.now() - callStarted);
      if (wait.ms >= left) {
        attempt--;
        throw fail({
          kind: last!.kind,
          retryable: false,
          message: `${last!.message}; no time left in the call's total budget of ${config.budgetMs} ms for another attempt`,
        });
      }
      try {
        await sleep(wait.ms, untilBudgetOrCaller);
      } catch {
        attempt--;
        throw fail(
          opts.signal?.aborted
            ? { kind: 'request', retryable: false, message: 'cancelled' }
            : { kind: 'timeout', retryable: false, message: `no complete answer within the call's total budget of ${config.budgetMs} ms` },
        );
      }
    }
    const started = performance.now();
    const record = (answer: string | null, usage: TokenUsage | null, error: string | null, model = config.model) =>
      writeLog(opts.log, {
        time: new Date().toISOString(),
        role: opts.role,
        model,
        temperature: config.temperature,
        base_url: config.baseUrl ?? null,
        attempt,
        messages,
        answer,
        usage,
        latency_ms: Math.round(performance.now() - started),
        error,
      });
    // One signal for the whole attempt, body included: the client passes it to fetch, which aborts the read.
    const limits: Deadlines = { attempt: AbortSignal.timeout(Math.max(1, config.timeoutMs)), budget, caller: opts.signal };
    const signal = AbortSignal.any([limits.attempt, untilBudgetOrCaller]);
    try {
      const completion = await client.chat.completions.create({ model: config.model, temperature: config.temperature, messages }, { signal });
      const text = completion?.choices?.[0]?.message?.content;
      const usage = completion?.usage
        ? { prompt_tokens: completion.usage.prompt_tokens, completion_tokens: completion.usage.completion_tokens, total_tokens: completion.usage.total_tokens }
        : null;
      if (typeof text !== 'string' || text.trim() === '') {
        last = { kind: 'malformed', retryable: true, message: 'the response had no answer text (no choices or empty content)' };
        record(null, usage, last.message);
        continue;
      }
      record(text, usage, null, completion.model || config.model);
      return { text, model: completion.model || config.model, usage, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      last = classify(err, config, limits);
      record(null, null, last.message);
      if (!last.retryable) throw fail(last);
    }
  }
  attempt = config.maxRetries + 1;
  throw fail(last!);
}

export type Validation<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface ValidatedAnswer<T> extends ChatAnswer {
  value: T;
  /** Answers that failed validation before this one. */
  rejected: { text: string; problem: string }[];
}

/**
 * Asks, validates the answer, and when it is unusable asks again in the same conversation, telling the model
 * what was wrong (up to maxRetries times). Throws LlmError('malformed') with the last problem after that.
 */
export async function chatValidated<T>(messages: ChatMessage[], validate: (text: string) => Validation<T>, opts: ChatOptions): Promise<ValidatedAnswer<T>> {
  const config = resolveLlmConfig(opts.llm);
  const conversation = [...messages];
  const rejected: { text: string; problem: string }[] = [];
  for (let round = 0; round <= config.maxRetries; round++) {
    const answer = await chat(conversation, opts);
    const result = validate(answer.text);
    if (result.ok) return { ...answer, value: result.value, rejected };
    rejected.push({ text: answer.text, problem: result.problem });
    conversation.push(
      { role: 'assistant', content: answer.text },
      { role: 'user', content: `Your answer could not be used: ${result.problem}\nAnswer again, following the required output format exactly.` },
    );
  }
  const last = rejected[rejected.length - 1]!;
  throw new LlmError(
    'malformed',
    `the ${opts.role}'s answer was malformed ${rejected.length} time${rejected.length === 1 ? '' : 's'}; last problem: ${last.problem}`,
    rejected.length,
  );
}

/**
 * The JSON object in an answer: the whole text, a fenced ```json block, or the outermost {...}; tolerates
 * trailing commas. Returns a problem description when there is none.
 */
export function extractJsonObject(text: string): Validation<Record<string, unknown>> {
  if (!text.includes('{')) return { ok: false, problem: 'no JSON object found; reply with one JSON object' };
  const candidates: string[] = [text.trim()];
  const fence = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(text);
  if (fence) candidates.push(fence[1]!.trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  let error = 'no JSON object found';
  for (const c of candidates) {
    for (const variant of [c, c.replace(/,\s*([}\]])/g, '$1')]) {
      try {
        const parsed: unknown = JSON.parse(variant);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { ok: true, value: parsed as Record<string, unknown> };
        error = 'the JSON is not an object';
      } catch (e) {
        error = `invalid JSON (${(e as Error).message})`;
      }
    }
  }
  return { ok: false, problem: `${error}; reply with one JSON object` };
}
