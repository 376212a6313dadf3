// Types only: this module runs no Node.js code at import, so a browser bundle of `ebb/http`
// that never calls `shed` carries nothing of it (and tree-shaking drops it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Admission, Entry, type ShedOptions, type ShedStats, shedMessage } from './admission.js';

/** A `node:http` request listener that sheds load; `stats()` reads its counters. */
export interface SheddingListener<Req extends IncomingMessage, Res extends ServerResponse> {
  (req: Req, res: Res): void;
  /** The gate's counters now. */
  stats(): ShedStats;
}

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
 * @example
 * import { createServer } from 'node:http';
 * import { shed } from 'ebb/http';
 * createServer(shed(app, { maxConcurrent: 64, maxQueue: 256, retryAfterMs: 2_000 })).listen(8080);
 */
export function shed<Req extends IncomingMessage = IncomingMessage, Res extends ServerResponse = ServerResponse>(
  handler: (req: Req, res: Res) => unknown,
  options: ShedOptions,
): SheddingListener<Req, Res> {
  if (typeof handler !== 'function') {
    throw new TypeError('shed(): expected `handler` to be a request listener (req, res) => void.');
  }
  const gate = new Admission('shed()', options);
  const retryAfter = String(gate.retryAfterSeconds);
  const message = shedMessage(gate.retryAfterSeconds);
  const listener = (req: Req, res: Res): void => {
    const entry = new Entry(() => {
      handler(req, res);
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
