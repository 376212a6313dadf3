// No Node.js import, not even of types: `ebb/http`'s declarations must compile in a browser
// project (`types: []`, `skipLibCheck: false`), where `node:http` does not exist. `shed` is
// typed by what it uses of a response (`ShedResponse`), which node:http's `ServerResponse`
// (and any compatible server's) satisfies, and infers the caller's own request and response
// types from the handler.
import { Admission, Entry, type ShedOptions, type ShedStats, shedMessage } from './admission.js';

/**
 * What `shed` uses of a response: the parts of `node:http`'s `ServerResponse` it calls to
 * answer 503 and to learn when a response is over. `ServerResponse` satisfies it.
 */
export interface ShedResponse {
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
  writeHead(statusCode: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/**
 * A `node:http` request listener that sheds load; `stats()` reads its counters. `Req` and `Res`
 * are the handler's own types (`IncomingMessage` and `ServerResponse` for `node:http`).
 */
export interface SheddingListener<Req = unknown, Res extends ShedResponse = ShedResponse> {
  (req: Req, res: Res): void;
  /** The gate's counters now. */
  stats(): ShedStats;
}

// The first signature infers nothing from the handler (`NoInfer`): its types come from the
// listener the call must return (createServer's `RequestListener`), and the handler is checked
// against them — which an Express app passes through its node:http signature. Where no listener
// type is asked for, the first signature does not fit (`unknown` is no `IncomingMessage`) and the
// second infers the types from the handler.
/**
 * Wraps a `node:http` request listener so that the server sheds load instead of drowning: up
 * to `maxConcurrent` requests run, up to `maxQueue` more wait in arrival order, and any beyond
 * that is answered **at once** with `503 Service Unavailable` and `Retry-After` — the AWS seed
 * article's "queue requests up to a limit, then return an error with NO WAIT and let the client
 * retry with exponential backoff". A rejected request costs the server one short write.
 *
 * Guarantees:
 * - a request is counted as running until its response is over — `res` emits `'close'`, after
 *   the last byte or when the connection dies — so a handler may answer asynchronously;
 * - no admitted request is lost or answered twice: each is handled exactly once, or, if its
 *   client disconnects while it waits, leaves the queue without being handled;
 * - the handler's own errors are not caught: they surface exactly as they would without `shed`.
 *
 * Types: the listener takes the request and response types of the server it is given to —
 * `createServer(shed(handler, …))` (or any place that asks for a `node:http` listener) decides
 * them, so a handler written inline gets `IncomingMessage` and `ServerResponse`, and an Express
 * app fits as it is: `createServer(shed(app, …))`. (An Express app has two call signatures,
 * node:http's listener and its router's `(req, res, next)` over Express's own types; TypeScript
 * would infer from the last, the router's, so `shed` takes its types from where the listener
 * goes first.) Where nothing asks for a listener (`const listener = shed(handler, …)`), they
 * are the handler's own: annotate it (`(req: IncomingMessage, res: ServerResponse) => …`).
 * Fastify's raw handler fits as it is: `fastify({ serverFactory: (h) => createServer(shed(h, …)) })`.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { shed } from 'ebb/http';
 * createServer(shed(app, { maxConcurrent: 64, maxQueue: 256, retryAfterMs: 2_000 })).listen(8080);
 */
export function shed<Req, Res extends ShedResponse>(
  handler: NoInfer<(req: Req, res: Res) => unknown>,
  options: ShedOptions,
): SheddingListener<Req, Res>;
/**
 * {@link shed} of an Express app where the listener's type is not fixed before the call
 * (`createServer(shed(app, …)).listen(…)`: `createServer` is generic). An app has two call
 * signatures, node:http's listener over either request type and its router's `(req, res, next)`;
 * `Req` and `Res` are read off the first (a union of node:http's and Express's types), which
 * every `node:http` server accepts.
 */
export function shed<Req, Res extends ShedResponse>(
  handler: { (req: Req, res: Res): unknown; (req: never, res: never, next: never): unknown },
  options: ShedOptions,
): SheddingListener<Req, Res>;
/**
 * {@link shed} where nothing asks for a listener type (`const listener = shed(handler, …)`): `Req`
 * and `Res` are the handler's own.
 */
export function shed<Req = unknown, Res extends ShedResponse = ShedResponse>(
  handler: (req: Req, res: Res) => unknown,
  options: ShedOptions,
): SheddingListener<Req, Res>;
export function shed(handler: (req: unknown, res: ShedResponse) => unknown, options: ShedOptions): SheddingListener {
  if (typeof handler !== 'function') {
    throw new TypeError('shed(): expected `handler` to be a request listener (req, res) => void.');
  }
  return shedListener('shed()', options, handler);
}

/**
 * The listener `shed` and `ebb/middleware`'s `shedMiddleware` both are: each request is admitted
 * by one gate and then `handle`d (with the stack's `next`, for a middleware), or answered at once
 * with `503` and `Retry-After`. A request counts as running until its response closes.
 * @internal
 */
export function shedListener<Req, Res extends ShedResponse, Next = undefined>(
  where: string,
  options: ShedOptions,
  handle: (req: Req, res: Res, next: Next) => unknown,
): ((req: Req, res: Res, next?: Next) => void) & { stats(): ShedStats } {
  const gate = new Admission(where, options);
  const retryAfter = String(gate.retryAfterSeconds);
  const message = shedMessage(gate.retryAfterSeconds);
  const listener = (req: Req, res: Res, next?: Next): void => {
    const entry = new Entry(() => {
      handle(req, res, next as Next);
    });
    const release = (): void => gate.release(entry);
    // Before admit: a handler that answers at once must find the listener in place.
    res.once('close', release);
    if (gate.admit(entry)) return;
    res.off('close', release);
    res.writeHead(503, {
      'Retry-After': retryAfter,
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': String(message.length), // ASCII: one byte a character
    });
    res.end(message);
  };
  return Object.assign(listener, { stats: () => gate.stats() });
}
