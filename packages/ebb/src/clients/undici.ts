// No import of undici, not even of its types: the interceptor speaks undici's dispatcher protocol
// (the handler methods of undici 7's `Dispatcher.DispatchHandler`, and the older `onConnect`/
// `onHeaders`/… ones that Node's own `fetch` still calls) through the structural types below, so
// that `ebb` keeps zero dependencies, declares no peer, and works with whichever undici the
// process has: npm's `undici` 7 or 8, or the copy inside Node.js behind the global `fetch`.
import type { AttemptContext } from '../retry/contexts.js';
import type { Result } from '../retry/errors.js';
import { type ClientRetryOptions, httpCaller, type ResponseHead } from './http-call.js';

/** Options of {@link retryInterceptor}: see {@link ClientRetryOptions}. */
export type RetryInterceptorOptions = ClientRetryOptions;

type HeaderValue = string | string[] | undefined;
type HeaderRecord = Record<string, HeaderValue>;

/** What the interceptor reads and writes of undici's `Dispatcher.DispatchOptions`. @internal */
interface Options {
  readonly origin?: string | URL | undefined;
  readonly path: string;
  readonly method: string;
  readonly body?: unknown;
  readonly headers?: unknown;
  readonly upgrade?: unknown;
}

/** undici 7's `Dispatcher.DispatchController`. @internal */
interface Controller {
  abort(reason: unknown): void;
  pause(): void;
  resume(): void;
  readonly aborted: boolean;
  readonly paused: boolean;
  readonly reason: unknown;
}

/** A dispatch handler of either protocol (undici 7's, or the one before it, which Node's fetch uses). @internal */
interface Handler {
  onRequestStart?(controller: Controller, context: unknown): void;
  onResponseStart?(controller: Controller, status: number, headers: HeaderRecord, statusText?: string): void;
  onResponseData?(controller: Controller, chunk: Uint8Array): void;
  onResponseEnd?(controller: Controller, trailers: HeaderRecord): void;
  onResponseError?(controller: Controller, error: unknown): void;
  onConnect?(abort: (reason?: unknown) => void, context?: unknown): void;
  onHeaders?(status: number, rawHeaders: Uint8Array[], resume: () => void, statusText?: string): boolean | undefined;
  onData?(chunk: Uint8Array): boolean | undefined;
  onComplete?(rawTrailers: Uint8Array[]): void;
  onError?(error: unknown): void;
}

type Dispatch = (options: Options, handler: Handler) => boolean;

/** An undici interceptor: takes the next `dispatch` and returns one of the same type. */
export type Interceptor = <D extends (options: never, handler: never) => boolean>(dispatch: D) => D;

/** Header values are Latin-1 (RFC 9110 §5.5): one byte a character, as undici's own wrapper writes them. */
function latin1(value: string): Uint8Array {
  const bytes = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) bytes[i] = value.charCodeAt(i) & 0xff;
  return bytes;
}
function rawPairs(headers: HeaderRecord): Uint8Array[] {
  const raw: Uint8Array[] = [];
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const v of typeof value === 'string' ? [value] : value) raw.push(latin1(name), latin1(v));
  }
  return raw;
}

/** Calls a handler of either protocol as undici 7's `WrapHandler` does for the older one. */
class Upstream {
  readonly #h: Handler;
  readonly #modern: boolean;
  constructor(handler: Handler) {
    this.#h = handler;
    this.#modern = typeof handler.onRequestStart === 'function' || typeof handler.onResponseStart === 'function';
  }
  start(c: Controller): void {
    if (this.#modern) this.#h.onRequestStart?.(c, {});
    else this.#h.onConnect?.((reason) => c.abort(reason), {});
  }
  headers(c: Controller, status: number, headers: HeaderRecord, statusText: string | undefined): void {
    if (this.#modern) this.#h.onResponseStart?.(c, status, headers, statusText);
    else if (this.#h.onHeaders?.(status, rawPairs(headers), () => c.resume(), statusText) === false) c.pause();
  }
  data(c: Controller, chunk: Uint8Array): void {
    if (this.#modern) this.#h.onResponseData?.(c, chunk);
    else if (this.#h.onData?.(chunk) === false) c.pause();
  }
  end(c: Controller, trailers: HeaderRecord): void {
    if (this.#modern) this.#h.onResponseEnd?.(c, trailers);
    else this.#h.onComplete?.(rawPairs(trailers));
  }
  error(c: Controller, error: unknown): void {
    if (this.#modern) this.#h.onResponseError?.(c, error);
    else this.#h.onError?.(error);
  }
}

/** Request headers in any of the shapes undici takes, as name/value pairs. */
function headerPairs(headers: unknown): [string, string][] {
  const pairs: [string, string][] = [];
  if (headers === null || headers === undefined || typeof headers !== 'object') return pairs;
  if (Array.isArray(headers)) {
    if (headers.every((h) => Array.isArray(h))) {
      for (const [k, v] of headers as [unknown, unknown][]) pairs.push([String(k), String(v)]);
    } else {
      for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([String(headers[i]), String(headers[i + 1])]);
    }
    return pairs;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const entry of headers as Iterable<unknown>) {
      if (Array.isArray(entry)) pairs.push([String(entry[0]), String(entry[1])]);
    }
    return pairs;
  }
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const x of v) pairs.push([k, String(x)]);
    else pairs.push([k, String(v)]);
  }
  return pairs;
}

function header(headers: HeaderRecord, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' ? v : v?.[0];
}

/** `bytes first-last/complete` (RFC 9110 §14.4): the first byte and the complete length (NaN for `*`). */
function contentRange(value: string | undefined): { first: number; complete: number } | undefined {
  const m = value === undefined ? null : /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value);
  if (m === null) return undefined;
  return { first: Number(m[1]), complete: m[3] === '*' ? Number.NaN : Number(m[3]) };
}

type Mode = 'head' | 'held' | 'forward' | 'gone';

/** One dispatch of one attempt: holds the response (paused) until the retry decides, then forwards or drops it. */
class Attempt implements Handler {
  mode: Mode = 'head';
  status = 0;
  statusText: string | undefined;
  headers: HeaderRecord = {};
  #c: Controller | undefined;
  #chunks: Uint8Array[] = [];
  #ended: HeaderRecord | undefined;
  #failed: { error: unknown } | undefined;
  readonly #call: Call;
  readonly #signal: AbortSignal;
  readonly #resolve: (attempt: Attempt) => void;
  readonly #reject: (error: unknown) => void;
  readonly #onAbort = (): void => this.#c?.abort(this.#signal.reason);

  constructor(call: Call, signal: AbortSignal, resolve: (a: Attempt) => void, reject: (e: unknown) => void) {
    this.#call = call;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onRequestStart(controller: Controller): void {
    this.#c = controller;
    this.#call.current = controller;
    if (this.#signal.aborted) controller.abort(this.#signal.reason);
    else this.#signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  onResponseStart(controller: Controller, status: number, headers: HeaderRecord, statusText?: string): void {
    // Held, unread, until the retry has judged it: the server's bytes wait in the socket.
    controller.pause();
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.mode = 'held';
    this.status = status;
    this.headers = headers;
    this.statusText = statusText;
    this.#resolve(this);
  }

  onResponseData(_controller: Controller, chunk: Uint8Array): void {
    if (this.mode === 'held') this.#chunks.push(chunk);
    else if (this.mode === 'forward') this.#call.data(chunk);
  }

  onResponseEnd(_controller: Controller, trailers: HeaderRecord): void {
    if (this.mode === 'held') this.#ended = trailers;
    else if (this.mode === 'forward') this.#call.end(trailers);
  }

  onResponseError(_controller: Controller, error: unknown): void {
    this.#signal.removeEventListener('abort', this.#onAbort);
    if (this.mode === 'head') {
      this.mode = 'gone';
      this.#reject(error);
    } else if (this.mode === 'held') this.#failed = { error };
    else if (this.mode === 'forward') this.#call.bodyError(error);
  }

  /** This response is the answer: its bytes go to the caller from now on. */
  forward(): void {
    this.mode = 'forward';
    this.#call.current = this.#c;
    for (const chunk of this.#chunks) this.#call.data(chunk);
    this.#chunks = [];
    if (this.#failed !== undefined) this.#call.bodyError(this.#failed.error);
    else if (this.#ended !== undefined) this.#call.end(this.#ended);
    else if (!this.#call.paused) this.#c?.resume();
  }

  /** A retried (or refused) response: its connection is closed, its bytes dropped. */
  discard(): void {
    if (this.mode === 'gone') return;
    this.mode = 'gone';
    this.#chunks = [];
    if (this.#ended === undefined && this.#failed === undefined) this.#c?.abort(new Error('ebb: response discarded'));
  }
}

/** The state of one request across its attempts and resumes. */
class Call implements Controller {
  current: Controller | undefined;
  #paused = false;
  #aborted = false;
  #reason: unknown = null;
  #done = false;
  #headersSent = false;
  /** Bytes forwarded to the caller. */
  #offset = 0;
  /** Bytes forwarded when the current response started. */
  #base = 0;
  /** For a resume: the strong ETag and the complete length (NaN when unknown), or undefined: no resume. */
  #resume: { etag: string; complete: number } | undefined;
  readonly #up: Upstream;
  readonly #abort = new AbortController();
  readonly #dispatch: Dispatch;
  readonly #opts: Options;
  readonly #caller: ReturnType<typeof httpCaller>;

  constructor(caller: ReturnType<typeof httpCaller>, dispatch: Dispatch, opts: Options, handler: Handler) {
    this.#caller = caller;
    this.#dispatch = dispatch;
    this.#opts = opts;
    this.#up = new Upstream(handler);
  }

  // The controller the caller's handler holds, the same across attempts and resumes (as undici's
  // RetryHandler keeps one): a pause outlives a change of connection.
  get paused(): boolean {
    return this.#paused;
  }
  get aborted(): boolean {
    return this.#aborted;
  }
  get reason(): unknown {
    return this.#reason;
  }
  pause(): void {
    this.#paused = true;
    this.current?.pause();
  }
  resume(): void {
    this.#paused = false;
    this.current?.resume();
  }
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#abort.abort(reason);
    this.current?.abort(reason);
  }

  start(): void {
    this.#up.start(this);
    // A caller's handler aborts in its onConnect when its signal has already aborted: nothing is
    // sent, and the abort is its error, as undici reports it without the interceptor.
    if (this.#aborted) this.#fail(this.#reason);
    else this.#run(this.#opts);
  }

  #run(opts: Options): void {
    const pairs = headerPairs(opts.headers);
    const origin = opts.origin === undefined ? '' : String(opts.origin).replace(/\/$/, '');
    const request = {
      method: opts.method.toUpperCase(),
      url: `${origin}${opts.path}`,
      hasIdempotencyKey: pairs.some(([k]) => k.toLowerCase() === 'idempotency-key'),
      body: opts.body,
      signal: this.#abort.signal,
    };
    const send = (context: AttemptContext): Promise<Attempt> =>
      new Promise<Attempt>((resolve, reject) => {
        const attempt = new Attempt(this, context.signal, resolve, reject);
        try {
          this.#dispatch(opts, attempt);
        } catch (error) {
          reject(error);
        }
      });
    const head = (outcome: Result<Attempt>): ResponseHead | undefined =>
      outcome.ok
        ? { status: outcome.value.status, statusText: outcome.value.statusText, headers: outcome.value.headers }
        : undefined;
    const discard = (outcome: Result<Attempt>): void => {
      if (outcome.ok) outcome.value.discard();
    };
    this.#caller.call(request, send, head, discard).then(
      (attempt) => {
        try {
          this.#accept(attempt);
        } catch (error) {
          // The caller's handler threw while taking the response: its own bug, reported to it
          // as undici reports one, and the response's connection closed.
          attempt.discard();
          this.#fail(error);
        }
      },
      (error: unknown) => this.#fail(error),
    );
  }

  #accept(attempt: Attempt): void {
    if (this.#done || this.#aborted) {
      attempt.discard();
      if (!this.#done) this.#fail(this.#reason);
      return;
    }
    if (this.#headersSent) {
      // A resume: only the rest of the same representation may follow what the caller has.
      const range = contentRange(header(attempt.headers, 'content-range'));
      const r = this.#resume as { etag: string; complete: number };
      const why =
        attempt.status !== 206
          ? `the server answered ${attempt.status} to a range request`
          : range === undefined || range.first !== this.#offset
            ? 'the Content-Range does not start where the body broke off'
            : header(attempt.headers, 'etag') !== r.etag
              ? 'the ETag changed'
              : !Number.isNaN(r.complete) && range.complete !== r.complete
                ? 'the complete length changed'
                : undefined;
      if (why !== undefined) {
        attempt.discard();
        this.#fail(new Error(`ebb: cannot resume the download of ${this.#opts.path}: ${why}.`));
        return;
      }
    } else {
      this.#headersSent = true;
      this.#resume = this.#resumable(attempt);
      this.#up.headers(this, attempt.status, attempt.headers, attempt.statusText);
    }
    this.#base = this.#offset;
    attempt.forward();
  }

  /** RFC 9110 §14 and §13.1.1: a 200 to a GET with a strong validator, from a server that takes byte ranges. */
  #resumable(attempt: Attempt): { etag: string; complete: number } | undefined {
    const etag = header(attempt.headers, 'etag');
    const ranges = header(attempt.headers, 'accept-ranges');
    const ownRange = headerPairs(this.#opts.headers).some(([k]) => k.toLowerCase() === 'range');
    if (attempt.status !== 200 || this.#opts.method.toUpperCase() !== 'GET' || ownRange) return undefined;
    if (etag === undefined || etag.startsWith('W/') || ranges?.toLowerCase() !== 'bytes') return undefined;
    const length = header(attempt.headers, 'content-length');
    return { etag, complete: length === undefined ? Number.NaN : Number(length) };
  }

  data(chunk: Uint8Array): void {
    if (this.#done) return;
    this.#offset += chunk.byteLength;
    this.#up.data(this, chunk);
  }

  end(trailers: HeaderRecord): void {
    if (this.#done) return;
    this.#done = true;
    this.#up.end(this, trailers);
  }

  /** The body broke off: resume it if the server allows and this response made progress, else tell the caller. */
  bodyError(error: unknown): void {
    if (this.#done) return;
    const r = this.#resume;
    if (this.#aborted || r === undefined || this.#offset === this.#base) {
      this.#fail(this.#aborted ? this.#reason : error);
      return;
    }
    const kept = headerPairs(this.#opts.headers).filter(([k]) => {
      const name = k.toLowerCase();
      return name !== 'range' && name !== 'if-match' && name !== 'if-range';
    });
    kept.push(['range', `bytes=${this.#offset}-`], ['if-match', r.etag]);
    this.#run({ ...this.#opts, headers: kept.flat() });
  }

  #fail(error: unknown): void {
    if (this.#done) return;
    this.#done = true;
    try {
      this.#up.error(this, error);
    } catch (thrown) {
      // A handler whose onError throws (undici's WrapHandler throws when there is none): reported
      // as an uncaught error, as undici would, not as a rejection nobody handles.
      queueMicrotask(() => {
        throw thrown;
      });
    }
  }
}

/**
 * An undici interceptor that runs every request through ebb's retry: its policy (jittered,
 * finite), `Retry-After` honoured up to `maxRetryAfterMs` (a longer wait gives up and returns
 * that response), a retry budget of its own by default, the idempotency rules of `withRetry`,
 * and the mechanisms of `use` (a breaker, a limit, a rate controller) around each attempt.
 *
 * ```ts
 * import { Agent, setGlobalDispatcher } from 'undici';
 * setGlobalDispatcher(new Agent().compose(retryInterceptor()));   // every fetch in the process
 * ```
 *
 * - **What is retried**: what `isFailure` (default `standard` of `ebb/http`) calls a failure —
 *   network errors, 408, 429, 500, 502, 503, 504 — for GET, HEAD, OPTIONS, TRACE, PUT, DELETE
 *   (`methods`) and for any request with an `Idempotency-Key` header. A POST without one is sent
 *   once (or again only if it never left: connection refused). When the retries end on a failed
 *   response, that response is the answer, with its body, as without the interceptor.
 * - **Bodies**: a string, `Buffer` or typed-array body is sent again; a stream body (an async
 *   iterable, a `Readable`, a `ReadableStream`) is sent once, never retried.
 * - **Downloads that break off**: a `GET` answered `200` with a strong `ETag` and
 *   `Accept-Ranges: bytes` resumes where it stopped, with `Range: bytes=N-` and `If-Match`, and
 *   takes only a `206` that starts at N with the same ETag and length; anything else ends the body
 *   with an error. Without a strong ETag and range support, the error reaches the body's reader:
 *   the bytes it already has cannot be taken back, so the interceptor does not start over (retry
 *   the whole call at the caller's level). A resume is a new call through the same retry and
 *   mechanisms; it happens only after progress, so it cannot loop without bytes arriving.
 * - **Held responses**: a response under judgement is paused, its bytes left in the socket; a
 *   retried one is closed.
 *
 * Compared with undici's own `RetryHandler` (lib/handler/retry-handler.js, undici 7): undici
 * waits `minTimeout × timeoutFactor^n` with no jitter, shortens a `Retry-After` to `maxTimeout`
 * (30 s) rather than honouring it or giving up, has no retry budget and no breaker, knows no
 * `Idempotency-Key`, and resumes with `Range` even without an `ETag` (`If-Match` is sent only
 * when there is a strong one), so a file that changed between attempts can be spliced. ebb
 * resumes only under a strong ETag and checks the `Content-Range` and length.
 *
 * Upgrades (`CONNECT`, WebSocket) pass through untouched.
 */
export function retryInterceptor(options?: RetryInterceptorOptions): Interceptor {
  const caller = httpCaller('retryInterceptor()', options);
  const interceptor = (dispatch: Dispatch): Dispatch =>
    function ebbRetry(opts: Options, handler: Handler): boolean {
      if (opts.upgrade !== undefined && opts.upgrade !== null && opts.upgrade !== false) return dispatch(opts, handler);
      if (opts.method.toUpperCase() === 'CONNECT') return dispatch(opts, handler);
      new Call(caller, dispatch, opts, handler).start();
      return true;
    };
  return interceptor as unknown as Interceptor;
}
