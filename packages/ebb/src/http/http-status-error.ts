import { EBB_ERROR } from '../core/boundary.js';

// A module of its own: a bundle that only recognises the error (`isHttpStatusError` reads its
// brand) does not carry the class. esbuild keeps a class whose getter has a computed key (the
// brand) whenever its module is in the bundle (docs/dev/size.md).

/**
 * A response the classifier chose to retry, as the error the executor sees: it carries the
 * server's hint (`retryAfterMs`, which makes the next wait at least that long) and whether the
 * server is throttling (`throttled`, which a rate controller records as `'throttled'`).
 *
 * `withRetry` never throws it: when the retries end, you get the last response itself, as
 * `fetch` would have returned it. You meet it in `onRetry` (`context.error`) and in a retry
 * budget's `tryAcquireRetry(error)`.
 */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  /** Stable across versions, for matching without `instanceof`: see {@link isHttpStatusError}. */
  readonly code = 'EBB_HTTP_STATUS';
  /** The response's status, such as 503. */
  readonly status: number;
  /** The response itself (its body is cancelled before the next attempt starts). */
  readonly response: Response;
  /** The request method. */
  readonly method: string;
  /** The request URL. */
  readonly url: string;
  /** The server's `Retry-After` (or `RateLimit` `t`) in milliseconds; undefined when it gave none. */
  readonly retryAfterMs: number | undefined;
  /** True for 429 and the classifier's `'throttled'` verdicts. */
  readonly throttled: boolean;

  constructor(response: Response, method: string, url: string, retryAfterMs: number | undefined, throttled: boolean) {
    const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    const hint = retryAfterMs === undefined ? '' : ` (server asked to wait ${retryAfterMs} ms)`;
    super(`HTTP ${status} from ${method} ${url}${hint}`);
    this.status = response.status;
    this.response = response;
    this.method = method;
    this.url = url;
    this.retryAfterMs = retryAfterMs;
    this.throttled = throttled;
  }

  /** The brand other copies of ebb recognise it by: its code. @internal */
  get [EBB_ERROR](): string {
    return 'EBB_HTTP_STATUS';
  }
}
