/**
 * ebb/clients — ebb's retry under the HTTP clients people already use: axios, ky and got. Each
 * adapter turns the client's own retry off, so that two layers never multiply, and runs every
 * request through ebb: its policy, `Retry-After` up to `maxRetryAfterMs`, a retry budget, the
 * idempotency rules of `withRetry`, and the mechanisms of `use`. No client is imported: the
 * adapters take the client you pass, so `ebb` keeps zero dependencies.
 *
 * For undici and Node's global `fetch`, see `ebb/undici`.
 *
 * @packageDocumentation
 */

import { anySignal } from '../core/any-signal.js';
import { mistyped } from '../core/validate.js';
import type { AttemptContext } from '../retry/contexts.js';
import type { Result } from '../retry/errors.js';
import { type ClientRetryOptions, httpCaller, type ResponseHead } from './http-call.js';

export type { ClientRetryOptions } from './http-call.js';
export { type KyLike, withRetryKy } from './ky.js';

type Headers_ = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Headers of any client as a plain record: a `Headers`-like (`forEach`) or an object (axios's `AxiosHeaders`, got's). */
function plain(headers: unknown): Headers_ {
  const out: Record<string, string | string[]> = {};
  if (headers === null || typeof headers !== 'object') return out;
  const each = (headers as { forEach?: unknown }).forEach;
  if (typeof each === 'function' && typeof (headers as { get?: unknown }).get === 'function') {
    (headers as { forEach(f: (value: string, name: string) => void): void }).forEach((value, name) => {
      out[name.toLowerCase()] = value;
    });
    return out;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || value === null || typeof value === 'function') continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return out;
}

/** Both signals: the attempt's (a timeout, the retry's end) and the caller's. */
function both(attempt: AbortSignal, caller: unknown): AbortSignal {
  if (!(caller instanceof AbortSignal)) return attempt;
  return anySignal(attempt, caller);
}

/** What the axios adapter reads of a request config (axios's `InternalAxiosRequestConfig`). */
export interface AxiosConfigLike {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly baseURL?: string | undefined;
  readonly data?: unknown;
  readonly headers?: unknown;
  readonly signal?: unknown;
}

/** What the axios adapter reads of a response (axios's `AxiosResponse`). */
export interface AxiosResponseLike {
  readonly status: number;
  readonly statusText?: string;
  readonly headers: unknown;
  readonly data?: unknown;
}

const FIX_ADAPTER = 'Pass axios.getAdapter(axios.defaults.adapter).';

/**
 * Wraps an axios adapter (the function that sends one request) so that each request goes
 * through ebb's retry. axios has no retry of its own; the retry sits under axios's interceptors
 * and `validateStatus`, so a request interceptor runs once per call, not once per attempt.
 * Failed responses are judged by status and headers; when the retries end on one, axios
 * rejects (or resolves) with it as it would have. Errors are axios's own (`AxiosError`), never
 * wrapped. A stream body (`data` a `Readable`) is sent once.
 *
 * @example
 * import axios from 'axios';
 * import { withRetryAxios } from 'ebb/clients';
 * const api = axios.create({ adapter: withRetryAxios(axios.getAdapter(axios.defaults.adapter)) });
 */
export function withRetryAxios<C extends AxiosConfigLike, R extends AxiosResponseLike>(
  adapter: (config: C) => PromiseLike<R>,
  options?: ClientRetryOptions,
): (config: C) => Promise<R> {
  const where = 'withRetryAxios()';
  if (typeof adapter !== 'function') {
    mistyped(where, 'adapter', adapter, 'an axios adapter, a function (config) => Promise<response>', FIX_ADAPTER);
  }
  // axios itself is a function too: as the adapter, each request would call axios, which calls the
  // adapter again (a stack overflow at the first request).
  if (typeof (adapter as { request?: unknown }).request === 'function' && 'defaults' in adapter) {
    throw new TypeError(`${where}: got axios itself where its adapter goes. ${FIX_ADAPTER}`);
  }
  const caller = httpCaller(where, options);
  // The response of an attempt: resolved, or inside the AxiosError its `validateStatus` refused it with.
  const responseOf = (outcome: Result<R>): R | null | undefined =>
    outcome.ok ? outcome.value : (outcome.error as { response?: R } | null)?.response;
  const head = (outcome: Result<R>): ResponseHead | undefined => {
    const response = responseOf(outcome);
    if (response === undefined || response === null || typeof response.status !== 'number') return undefined;
    return { status: response.status, statusText: response.statusText, headers: plain(response.headers) };
  };
  // A failed response of `responseType: 'stream'` holds its socket until read, whether axios
  // resolved with it or rejected with it (a 503 under the default `validateStatus`): close it.
  const discard = (outcome: Result<R>): void => {
    const data = responseOf(outcome)?.data;
    const destroy = (data as { destroy?: unknown } | null | undefined)?.destroy;
    if (typeof destroy === 'function') destroy.call(data);
  };
  return (config: C): Promise<R> => {
    const url = config.url ?? '';
    const full =
      config.baseURL && !/^[a-z][a-z\d+\-.]*:/i.test(url)
        ? `${config.baseURL.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}`
        : url;
    const request = {
      method: (config.method ?? 'get').toUpperCase(),
      url: full,
      hasIdempotencyKey: plain(config.headers)['idempotency-key'] !== undefined,
      body: config.data,
      signal: config.signal instanceof AbortSignal ? config.signal : undefined,
    };
    return caller.call(
      request,
      (context) => Promise.resolve(adapter({ ...config, signal: both(context.signal, config.signal) })),
      head,
      discard,
    );
  };
}

/** What `withRetryGot` reads of a got response. */
export interface GotResponseLike<T = unknown> {
  readonly statusCode: number;
  readonly statusMessage?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: T;
}

/** The options `withRetryGot`'s calls take: got's own (`method`, `headers`, `json`, `responseType`, …). */
export interface GotRequestOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /**
   * Not supported: got's stream is handed to its caller before its response is known, so an
   * attempt could not be judged nor retried (refused with a `TypeError`). Call `got.stream()`
   * without ebb.
   */
  readonly isStream?: false;
  readonly [option: string]: unknown;
}

/** What `withRetryGot` needs of got: `extend`, and the instance it returns called as `got(url, options)`. */
export interface GotLike {
  extend(options: {
    retry: { limit: number };
  }): (url: string | URL, options: GotRequestOptions) => PromiseLike<unknown>;
}

/**
 * A function that calls got with its own retry off (`retry: { limit: 0 }`) once per attempt of
 * ebb's retry. Failed responses (got's `HTTPError`, or a response when `throwHttpErrors` is
 * false) are judged by status and headers; when the retries end on one, you get what got gave
 * for it (its `HTTPError` thrown, or the response). Errors are got's own, never wrapped. A
 * stream body is sent once. `T` is the body's type (got's default `responseType` is text).
 *
 * @example
 * import got from 'got';
 * import { withRetryGot } from 'ebb/clients';
 * const get = withRetryGot(got);
 * const { body } = await get<{ id: number }>('https://api.example.com/item', { responseType: 'json' });
 */
export function withRetryGot(
  got: GotLike,
  options?: ClientRetryOptions,
): <T = string>(url: string | URL, options?: GotRequestOptions) => Promise<GotResponseLike<T>> {
  const caller = httpCaller('withRetryGot()', options);
  const once = got.extend({ retry: { limit: 0 } });
  const head = (outcome: Result<GotResponseLike<unknown>>): ResponseHead | undefined => {
    const response = outcome.ok
      ? outcome.value
      : (outcome.error as { response?: GotResponseLike<unknown> } | null)?.response;
    if (response === undefined || response === null || typeof response.statusCode !== 'number') return undefined;
    return { status: response.statusCode, statusText: response.statusMessage, headers: response.headers };
  };
  return <T = string>(url: string | URL, options: GotRequestOptions = {}): Promise<GotResponseLike<T>> => {
    // Through ebb, the call resolved with undefined and the orphaned stream's error went unhandled.
    if (options.isStream) {
      return Promise.reject(
        new TypeError(
          'withRetryGot(): `isStream: true` is not supported: a stream reaches you before its response is known, so no attempt could be judged or retried. Call got.stream() without ebb, or leave isStream out.',
        ),
      );
    }
    const headers = plain(options.headers);
    const request = {
      method: (options.method ?? 'GET').toUpperCase(),
      url: String(url),
      hasIdempotencyKey: headers['idempotency-key'] !== undefined,
      body: options.body,
      signal: options.signal,
    };
    const send = async (context: AttemptContext): Promise<GotResponseLike<unknown>> =>
      // got's own retry stays off for every request, whatever the request's options say: ebb's
      // retry around it would multiply the attempts (3 × 3 for retry: { limit: 2 }).
      (await once(url, {
        ...options,
        retry: { limit: 0 },
        signal: both(context.signal, options.signal),
      })) as GotResponseLike<unknown>;
    return caller.call(request, send, head) as Promise<GotResponseLike<T>>;
  };
}
