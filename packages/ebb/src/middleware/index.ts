/**
 * ebb/middleware — `shed` as the middleware of the servers people already run: Express (and any
 * Connect-style `(req, res, next)` stack), Fastify (an `onRequest` hook, registered as a plugin as
 * `@fastify/under-pressure` is) and Hono. Each keeps `shed`'s rule: up to `maxConcurrent`
 * requests run, up to `maxQueue` wait in arrival order, and the rest are answered **at once**
 * with `503` and `Retry-After`; an admitted request is never lost. For a bare `node:http`
 * server, wrap the listener with `shed` from `ebb/http`.
 *
 * No framework is imported: the middleware is typed by what it uses of the framework's request
 * and response, which Express's, Fastify's and Hono's satisfy, so it compiles under `strict`
 * without a cast and `ebb` keeps zero dependencies.
 *
 * @packageDocumentation
 */

import { Admission, Entry, type ShedOptions, type ShedStats, shedMessage } from '../http/admission.js';
import { shedListener } from '../http/shed.js';

export type { ShedOptions, ShedStats } from '../http/admission.js';

/**
 * A factory handed to the framework as the middleware itself (`app.use(shedMiddleware)`) is called
 * with a request: its options would be read by the request's own keys (`_events`, `addHook`).
 */
function notTheMiddleware(where: string, args: number, fix: string): TypeError | undefined {
  return args > 1
    ? new TypeError(`${where}: called as the middleware itself. Call ${fix} and pass what it returns.`)
    : undefined;
}

/** What the Express middleware uses of a response: `node:http`'s `ServerResponse` (Express's `res`) has it. */
export interface ShedNodeResponse {
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
  writeHead(statusCode: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
}

/** A Connect-style middleware that sheds load; `stats()` reads its counters. */
export interface ShedMiddleware {
  (req: unknown, res: ShedNodeResponse, next: () => void): void;
  /** The gate's counters now. */
  stats(): ShedStats;
}

/**
 * `shed` as Express (or Connect) middleware: `app.use(shedMiddleware({ maxConcurrent: 64 }))`.
 * Put it first, so that a shed request costs one short write and nothing else. A request counts
 * as running from `next()` until its response closes (sent, or its connection gone), so a
 * handler may answer asynchronously; one whose client leaves while it waits leaves the queue
 * unhandled.
 *
 * @example
 * import express from 'express';
 * import { shedMiddleware } from 'ebb/middleware';
 * const app = express();
 * app.use(shedMiddleware({ maxConcurrent: 64, maxQueue: 256, retryAfterMs: 2_000 }));
 */
export function shedMiddleware(options: ShedOptions): ShedMiddleware {
  // biome-ignore lint/complexity/noArguments: only the count is read, to tell a framework's call from the user's.
  const wrong = notTheMiddleware('shedMiddleware()', arguments.length, 'shedMiddleware({ maxConcurrent })');
  if (wrong) throw wrong;
  return shedListener('shedMiddleware()', options, (_req: unknown, _res: ShedNodeResponse, next: () => void) => next());
}

/** What the Fastify hook uses of a reply: Fastify's `FastifyReply` has it. */
export interface ShedFastifyReply {
  readonly raw: {
    once(event: 'close', listener: () => void): unknown;
    off(event: 'close', listener: () => void): unknown;
  };
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload: string): unknown;
}

/** What the Fastify plugin uses of an instance: `addHook`. */
export interface ShedFastifyInstance {
  addHook(name: 'onRequest', hook: (request: unknown, reply: ShedFastifyReply, done: () => void) => void): unknown;
}

/** A Fastify plugin that sheds load (register it), with its `onRequest` hook and counters. */
export interface ShedFastifyPlugin {
  (instance: ShedFastifyInstance, options: unknown, done: () => void): void;
  /** The hook itself, for `fastify.addHook('onRequest', plugin.onRequest)` in one scope only. */
  readonly onRequest: (request: unknown, reply: ShedFastifyReply, done: () => void) => void;
  /** The gate's counters now. */
  stats(): ShedStats;
}

/**
 * `shed` as a Fastify plugin: `fastify.register(shedFastify({ maxConcurrent: 64 }))` adds an
 * `onRequest` hook to the whole server (the plugin skips Fastify's encapsulation, as
 * `fastify-plugin` does, and as `@fastify/under-pressure` is registered). A shed request is
 * answered by `reply` with `503` and `Retry-After` before any other hook or handler runs; an
 * admitted one counts as running until its response closes.
 *
 * @example
 * import Fastify from 'fastify';
 * import { shedFastify } from 'ebb/middleware';
 * const app = Fastify();
 * await app.register(shedFastify({ maxConcurrent: 64, maxQueue: 256 }));
 */
export function shedFastify(options: ShedOptions): ShedFastifyPlugin {
  // Fastify calls a plugin (instance, options, done), and waits for `done`: the error goes there.
  // biome-ignore lint/complexity/noArguments: only the framework's `done` is read, to report to it.
  const done: unknown = arguments[2];
  // biome-ignore lint/complexity/noArguments: only the count is read, to tell a framework's call from the user's.
  const wrong = notTheMiddleware('shedFastify()', arguments.length, 'shedFastify({ maxConcurrent })');
  if (wrong) {
    if (typeof done !== 'function') throw wrong;
    done(wrong);
    return undefined as never;
  }
  const gate = new Admission('shedFastify()', options);
  const retryAfter = String(gate.retryAfterSeconds);
  const message = shedMessage(gate.retryAfterSeconds);
  const onRequest = (_request: unknown, reply: ShedFastifyReply, done: () => void): void => {
    const entry = new Entry(() => done());
    const release = (): void => gate.release(entry);
    reply.raw.once('close', release);
    if (gate.admit(entry)) return;
    reply.raw.off('close', release);
    reply.code(503);
    reply.header('Retry-After', retryAfter);
    reply.header('Content-Type', 'text/plain; charset=utf-8');
    reply.send(message);
  };
  const plugin = (instance: ShedFastifyInstance, _options: unknown, done: () => void): void => {
    instance.addHook('onRequest', onRequest);
    done();
  };
  // What `fastify-plugin` sets: the hook applies to the whole server, not only inside the plugin.
  return Object.assign(plugin, {
    onRequest,
    stats: () => gate.stats(),
    [Symbol.for('skip-override')]: true,
  });
}

/** What the Hono middleware uses of a context: the request (its `signal` tells a client that left). */
export interface ShedHonoContext {
  readonly req: { readonly raw: Request };
}

/** A Hono middleware that sheds load; `stats()` reads its counters. */
export interface ShedHonoMiddleware {
  (c: ShedHonoContext, next: () => Promise<void>): Promise<Response | undefined>;
  /** The gate's counters now. */
  stats(): ShedStats;
}

/**
 * `shed` as Hono middleware: `app.use(shedHono({ maxConcurrent: 64 }))`. A request counts as
 * running until `next()` settles (a body streamed after that is not counted, as with
 * `shedFetch`); one whose `request.signal` aborts while it waits leaves the queue unhandled.
 *
 * @example
 * import { Hono } from 'hono';
 * import { shedHono } from 'ebb/middleware';
 * const app = new Hono();
 * app.use(shedHono({ maxConcurrent: 64, maxQueue: 256 }));
 */
export function shedHono(options: ShedOptions): ShedHonoMiddleware {
  // biome-ignore lint/complexity/noArguments: only the count is read, to tell a framework's call from the user's.
  const wrong = notTheMiddleware('shedHono()', arguments.length, 'shedHono({ maxConcurrent })');
  if (wrong) throw wrong;
  const gate = new Admission('shedHono()', options);
  const message = shedMessage(gate.retryAfterSeconds);
  const overloaded = (): Response =>
    new Response(message, {
      status: 503,
      headers: { 'Retry-After': String(gate.retryAfterSeconds), 'Content-Type': 'text/plain; charset=utf-8' },
    });
  const middleware = async (c: ShedHonoContext, next: () => Promise<void>): Promise<Response | undefined> => {
    const signal = c.req.raw.signal as AbortSignal | undefined;
    let go: (admitted: boolean) => void = () => {};
    const turn = new Promise<boolean>((resolve) => {
      go = resolve;
    });
    const entry = new Entry(() => go(true));
    const onAbort = (): void => {
      gate.release(entry);
      go(false);
    };
    if (!gate.admit(entry)) return overloaded();
    if (entry.state === 'queued') {
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    }
    const admitted = await turn;
    signal?.removeEventListener('abort', onAbort);
    // Gone before its turn: answered, though nobody is there to read it.
    if (!admitted) return overloaded();
    try {
      await next();
    } finally {
      gate.release(entry);
    }
    return undefined;
  };
  return Object.assign(middleware, { stats: () => gate.stats() });
}
