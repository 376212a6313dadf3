import { Admission, Entry, type ShedOptions, type ShedStats, shedMessage } from './admission.js';

/** A fetch-style handler that sheds load; `stats()` reads its counters. */
export interface SheddingHandler<A extends unknown[]> {
  (request: Request, ...rest: A): Promise<Response>;
  /** The gate's counters now. */
  stats(): ShedStats;
}

/**
 * {@link shed} for fetch-style handlers, `(request: Request, ...rest) => Response | Promise<Response>`
 * (Deno.serve, Bun.serve, Cloudflare Workers, Hono and the like): up to `maxConcurrent` run, up
 * to `maxQueue` wait in order, the rest get `503` with `Retry-After` at once.
 *
 * A request counts as running until the handler's promise settles: a body the handler streams
 * after returning its `Response` is not counted. A request whose `request.signal` aborts while
 * it waits (the runtime's sign that the client went away) leaves the queue unhandled and is
 * answered 503, which nobody receives. The handler's rejections pass through unchanged.
 * Extra arguments (Deno's `info`, Bun's `server`, a Worker's `env`) are passed through.
 *
 * @example
 * Deno.serve(shedFetch(app, { maxConcurrent: 32, maxQueue: 64 }));
 */
export function shedFetch<A extends unknown[] = []>(
  handler: (request: Request, ...rest: A) => Response | PromiseLike<Response>,
  options: ShedOptions,
): SheddingHandler<A> {
  if (typeof handler !== 'function') {
    throw new TypeError('shedFetch(): expected `handler` to be a function (request) => Response.');
  }
  const gate = new Admission('shedFetch()', options);
  const message = shedMessage(gate.retryAfterSeconds);
  const overloaded = (): Response =>
    new Response(message, {
      status: 503,
      headers: { 'Retry-After': String(gate.retryAfterSeconds), 'Content-Type': 'text/plain; charset=utf-8' },
    });

  const wrapped = (request: Request, ...rest: A): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const signal = request.signal as AbortSignal | undefined;
      const onAbort = (): void => {
        gate.release(entry);
        resolve(overloaded());
      };
      const entry = new Entry(() => {
        signal?.removeEventListener('abort', onAbort);
        let result: Response | PromiseLike<Response>;
        try {
          result = handler(request, ...rest);
        } catch (error) {
          gate.release(entry);
          reject(error);
          return;
        }
        Promise.resolve(result).then(
          (response) => {
            gate.release(entry);
            resolve(response);
          },
          (error: unknown) => {
            gate.release(entry);
            reject(error);
          },
        );
      });
      if (!gate.admit(entry)) {
        resolve(overloaded());
        return;
      }
      if (entry.state === 'queued') {
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      }
    });
  return Object.assign(wrapped, { stats: () => gate.stats() });
}
