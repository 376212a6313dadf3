import { describe, expect, it } from 'vitest';
import { retryInterceptor } from './undici.js';

/*
 * The interceptor's two handler protocols, with a scripted dispatch (no network): undici 7's
 * controller methods, and the older onConnect/onHeaders/onData/onComplete/onError that Node's
 * own fetch still calls; and a caller's handler that throws.
 */

type Headers_ = Record<string, string | string[]>;
interface Ctl {
  abort(reason: unknown): void;
  pause(): void;
  resume(): void;
  aborted: boolean;
  paused: boolean;
  reason: unknown;
}
interface H {
  onRequestStart?(c: Ctl, ctx: unknown): void;
  onResponseStart?(c: Ctl, status: number, headers: Headers_, text?: string): void;
  onResponseData?(c: Ctl, chunk: Uint8Array): void;
  onResponseEnd?(c: Ctl, trailers: Headers_): void;
  onResponseError?(c: Ctl, error: unknown): void;
}

/** A dispatch that answers each call with the next status, body 'b<status>'. */
function scripted(...statuses: number[]) {
  const calls: { method: string; headers: unknown }[] = [];
  const controllers: Ctl[] = [];
  const dispatch = (opts: { method: string; path: string; headers?: unknown }, handler: H): boolean => {
    const status = statuses[Math.min(calls.length, statuses.length - 1)] as number;
    calls.push({ method: opts.method, headers: opts.headers });
    const c: Ctl = {
      aborted: false,
      paused: false,
      reason: null,
      abort(reason) {
        this.aborted = true;
        this.reason = reason;
      },
      pause() {
        this.paused = true;
      },
      resume() {
        this.paused = false;
      },
    };
    controllers.push(c);
    queueMicrotask(() => {
      handler.onRequestStart?.(c, {});
      handler.onResponseStart?.(c, status, { 'content-type': 'text/plain' }, 'S');
      if (c.aborted) return;
      handler.onResponseData?.(c, new TextEncoder().encode(`b${status}`));
      handler.onResponseEnd?.(c, {});
    });
    return true;
  };
  return { dispatch, calls, controllers };
}

const options = { budget: false as const, random: () => 0 };

describe('retryInterceptor speaks both handler protocols', () => {
  it("undici 7's: onRequestStart once, then the final response's head, data and end", async () => {
    const { dispatch, calls } = scripted(503, 200);
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      retryInterceptor(options)(dispatch)(
        { method: 'GET', path: '/' },
        {
          onRequestStart: () => seen.push('start'),
          onResponseStart: (_c, status) => seen.push(`head ${status}`),
          onResponseData: (_c, chunk) => seen.push(`data ${new TextDecoder().decode(chunk)}`),
          onResponseEnd: () => resolve(),
          onResponseError: (_c, e) => reject(e),
        },
      );
    });
    expect(calls.length).toBe(2);
    expect(seen).toEqual(['start', 'head 200', 'data b200']);
  });

  it("the older one (Node's fetch): onConnect once, onHeaders with raw Latin-1 pairs, onData, onComplete", async () => {
    const { dispatch } = scripted(502, 200);
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      retryInterceptor(options)(dispatch)({ method: 'GET', path: '/' }, {
        onConnect: () => seen.push('connect'),
        onHeaders: (status: number, raw: Uint8Array[]) => {
          seen.push(`head ${status} ${raw.map((b) => new TextDecoder('latin1').decode(b)).join(':')}`);
          return true;
        },
        onData: (chunk: Uint8Array) => {
          seen.push(`data ${new TextDecoder().decode(chunk)}`);
          return true;
        },
        onComplete: () => resolve(),
        onError: (e: unknown) => reject(e),
      } as never);
    });
    expect(seen).toEqual(['connect', 'head 200 content-type:text/plain', 'data b200']);
  });

  it("a caller's handler that throws on the head gets that error in onResponseError, not an unhandled rejection", async () => {
    const { dispatch, controllers } = scripted(200);
    const boom = new Error('handler bug');
    const error = await new Promise<unknown>((resolve) => {
      retryInterceptor(options)(dispatch)(
        { method: 'GET', path: '/' },
        {
          onResponseStart: () => {
            throw boom;
          },
          onResponseError: (_c, e) => resolve(e),
        },
      );
    });
    expect(error).toBe(boom);
    expect(controllers.length).toBe(1);
  });
});
