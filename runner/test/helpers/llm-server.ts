// A local OpenAI-compatible HTTP server that answers `/v1/chat/completions` from a script: the only test
// double the project allows (tests reach it through the real `openai` client). It records every request so
// tests can assert what the roles were asked, and can inject 429/500, unparsable bodies, delays, a body
// dripped byte by byte after prompt headers, and a JSON body that never ends.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  /** 0-based index among all requests to the completions endpoint. */
  index: number;
  model: string;
  temperature: number | undefined;
  messages: { role: string; content: string }[];
  /** Last user message, what a role handler usually dispatches on. */
  lastUser: string;
  /** The system message (empty if none). */
  system: string;
  headers: Record<string, string | string[] | undefined>;
}

export type ScriptedReply =
  /** An assistant answer. */
  | string
  | { text: string; model?: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** An HTTP error with an OpenAI-style error body (429, 500, 401 …). */
  | { status: number; message?: string; retryAfterMs?: number; retryAfterSeconds?: number }
  /** 200 with this exact body (e.g. not JSON). */
  | { rawBody: string }
  /** Wait, then send `reply` (a delay past the client's timeout makes a timeout). */
  | { delayMs: number; reply: ScriptedReply }
  /** 200 and the headers at once, then `reply`'s body one byte every `everyMs` (a server that never finishes). */
  | { dripEveryMs: number; reply: ScriptedReply }
  /** 200, then a JSON answer whose content never ends, as fast as the client reads it, up to `ceilingBytes`
   * (then the server waits, so a client that reads without limit ends at its deadline, not out of memory).
   * `content-length` is declared when given. The bytes written until the client hung up go to `bodyBytesSent`. */
  | { endlessBody: { ceilingBytes: number; declaredLength?: number } };

export type Script = ScriptedReply[] | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface LlmTestServer {
  /** Base URL for the openai client / OPENAI_BASE_URL, ending in `/v1`. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** For each `endlessBody` reply, the bytes of body written before the client closed the connection. */
  bodyBytesSent: number[];
  /** Replies not yet served, for a list script. */
  remaining(): number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The JSON body of a successful completion answering `reply` (a text answer). */
function completionBody(reply: ScriptedReply, request: RecordedRequest): string {
  if (typeof reply === 'string') reply = { text: reply };
  if (!('text' in reply)) throw new Error('scripted LLM server: only a text answer can be dripped');
  const usage = reply.usage ?? {
    prompt_tokens: Math.ceil(request.messages.reduce((n, m) => n + m.content.length, 0) / 4),
    completion_tokens: Math.ceil(reply.text.length / 4),
  };
  return JSON.stringify({
    id: `chatcmpl-scripted-${request.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.model,
    choices: [{ index: 0, message: { role: 'assistant', content: reply.text }, finish_reason: 'stop', logprobs: null }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
}

export async function startLlmServer(script: Script): Promise<LlmTestServer> {
  const requests: RecordedRequest[] = [];
  const bodyBytesSent: number[] = [];
  const queue = Array.isArray(script) ? [...script] : null;
  const sockets = new Set<import('node:net').Socket>();

  const serve = async (reply: ScriptedReply, res: ServerResponse, request: RecordedRequest): Promise<void> => {
    if (typeof reply === 'string') reply = { text: reply };
    if ('delayMs' in reply) {
      await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed || res.writableEnded) return; // the client gave up (timeout)
      return serve(reply.reply, res, request);
    }
    if ('dripEveryMs' in reply) {
      const body = Buffer.from(completionBody(reply.reply, request));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed || res.writableEnded) return clearInterval(timer);
        res.write(body.subarray(sent, sent + 1));
        if (++sent === body.length) {
          clearInterval(timer);
          res.end();
        }
      }, reply.dripEveryMs);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if ('endlessBody' in reply) {
      const { ceilingBytes, declaredLength } = reply.endlessBody;
      res.writeHead(200, { 'content-type': 'application/json', ...(declaredLength === undefined ? {} : { 'content-length': String(declaredLength) }) });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let sent = 0;
      res.on('close', () => bodyBytesSent.push(sent));
      const prefix = Buffer.from(`{"id":"chatcmpl-endless","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`);
      let more = res.write(prefix);
      sent += prefix.length;
      // Writes only as fast as the client reads (each 'drain'), so `sent` is what the client took in plus the socket buffers.
      const pump = () => {
        while (!res.destroyed && sent < ceilingBytes) {
          more = res.write(chunk);
          sent += chunk.length;
          if (!more) return void res.once('drain', pump);
        }
      };
      if (more) pump();
      else res.once('drain', pump);
      return;
    }
    if ('rawBody' in reply) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(reply.rawBody);
      return;
    }
    if ('status' in reply) {
      const headers: Record<string, string> = {};
      if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs);
      if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
      sendJson(res, reply.status, { error: { message: reply.message ?? `scripted HTTP ${reply.status}`, type: 'scripted', code: null } }, headers);
      return;
    }
    sendJson(res, 200, JSON.parse(completionBody(reply, request)));
  };

  const server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        sendJson(res, 404, { error: { message: `scripted LLM server: no route ${req.method} ${req.url}` } });
        return;
      }
      const body = JSON.parse(await readBody(req)) as { model: string; temperature?: number; messages: { role: string; content: string }[] };
      const messages = body.messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content) }));
      const request: RecordedRequest = {
        index: requests.length,
        model: body.model,
        temperature: body.temperature,
        messages,
        lastUser: [...messages].reverse().find((m) => m.role === 'user')?.content ?? '',
        system: messages.find((m) => m.role === 'system')?.content ?? '',
        headers: req.headers,
      };
      requests.push(request);
      let reply: ScriptedReply | undefined;
      if (queue) reply = queue.shift();
      else reply = await (script as (r: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>)(request);
      // 400 is not retried by the client, so a test with too short a script fails fast and says why.
      if (reply === undefined) reply = { status: 400, message: `scripted LLM server: no reply left for request #${request.index}` };
      await serve(reply, res, request);
    })().catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 400, { error: { message: `scripted LLM server: ${String(err)}` } });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    bodyBytesSent,
    remaining: () => queue?.length ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
