// The LSP base protocol's framing (`Content-Length: N\r\n\r\n` + N bytes of JSON), checked on the bytes a
// client writes to the server's stdin. vscode-jsonrpc's reader, on a header it cannot use (a negative or
// missing Content-Length) or a body that is not JSON (a Content-Length shorter than the body), reports an
// error nobody acts on and reads every later message from the wrong offset: the server stayed alive and never
// answered again. The server instead exits with the problem on stderr when this check fails, and the client
// restarts it, as clients do for a server that exits.

/** Longest message accepted: reward files are kilobytes; a larger Content-Length is a broken client. */
export const MAX_MESSAGE_BYTES = 64 * 2 ** 20;
/** Longest header block (the protocol knows two short headers). */
const MAX_HEADER_BYTES = 8192;
/** Characters of an HTTP header name (RFC 9110 `token`). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]*$/;

/** Follows the stream message by message; `push` returns what is wrong with it, once it is. */
export class FramingCheck {
  private header = '';
  /** Bytes of the current body still to come; -1 while reading a header block. */
  private bodyLeft = -1;
  private body: Buffer[] = [];
  private offset = 0;
  private failed: string | undefined;

  push(chunk: Buffer): string | undefined {
    let at = 0;
    while (at < chunk.length && !this.failed) {
      if (this.bodyLeft < 0) at = this.readHeader(chunk, at);
      else {
        const take = Math.min(this.bodyLeft, chunk.length - at);
        this.body.push(chunk.subarray(at, at + take));
        this.bodyLeft -= take;
        at += take;
        if (this.bodyLeft === 0) this.endBody(this.offset + at);
      }
    }
    this.offset += chunk.length;
    return this.failed;
  }

  private fail(problem: string): void {
    this.failed ??= problem;
  }

  /** Reads header bytes up to the blank line that ends the block; returns where it stopped. */
  private readHeader(chunk: Buffer, from: number): number {
    let at = from;
    while (at < chunk.length) {
      const c = chunk[at++]!;
      this.header += String.fromCharCode(c);
      if (this.header.length > MAX_HEADER_BYTES) {
        this.fail(`a header block longer than ${MAX_HEADER_BYTES} bytes at byte ${this.offset + at}`);
        return at;
      }
      // A line that has no colon yet must be a header name so far: a body's tail read as a header (after a
      // Content-Length shorter than its body) fails here, without waiting for bytes that may never come.
      const line = this.header.slice(this.header.lastIndexOf('\r\n') + 1).replace(/^\n/, '');
      if (!line.includes(':') && !HEADER_NAME.test(line.replace(/\r$/, ''))) {
        this.fail(`bytes that are not a message header at byte ${this.offset + at} (${JSON.stringify(line.slice(0, 40))})`);
        return at;
      }
      if (this.header.endsWith('\r\n\r\n')) {
        this.startBody(this.offset + at);
        return at;
      }
    }
    return at;
  }

  private startBody(offset: number): void {
    const fields = this.header.slice(0, -4).split('\r\n');
    this.header = '';
    // As vscode-jsonrpc reads them: `Name: value` lines, the name exactly up to the colon.
    const malformed = fields.find((f) => !f.includes(':'));
    if (malformed !== undefined) {
      this.fail(`a header line without a colon (${JSON.stringify(malformed.slice(0, 40))}) ending at byte ${offset}`);
      return;
    }
    const lengths = fields.filter((f) => /^content-length:/i.test(f)).map((f) => f.slice(f.indexOf(':') + 1).trim());
    if (lengths.length !== 1) {
      this.fail(`a message without one Content-Length header (headers ${JSON.stringify(fields.join('; ').slice(0, 80))}) ending at byte ${offset}`);
      return;
    }
    const length = lengths[0]!;
    if (!/^\d+$/.test(length)) this.fail(`Content-Length "${length.slice(0, 20)}" is not a byte count, at byte ${offset}`);
    else if (Number(length) > MAX_MESSAGE_BYTES)
      this.fail(`Content-Length ${length} is over the ${MAX_MESSAGE_BYTES}-byte limit of a message, at byte ${offset}`);
    if (this.failed) return;
    this.bodyLeft = Number(length);
    if (this.bodyLeft === 0) this.endBody(offset);
  }

  /** A body must be one JSON value: one that is not was framed with the wrong length. */
  private endBody(offset: number): void {
    const text = Buffer.concat(this.body).toString('utf8');
    this.body = [];
    this.bodyLeft = -1;
    try {
      JSON.parse(text);
    } catch {
      this.fail(`a message body that is not JSON (is its Content-Length right?), ending at byte ${offset}: ${JSON.stringify(text.slice(0, 40))}`);
    }
  }
}
