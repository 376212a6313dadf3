import { DEV } from '../core/dev.js';
import { invalid, optionsObject } from '../core/validate.js';
import { type FetchLike, type WithRetryOptions, withRetryAs } from '../http/with-retry.js';
import { isRetryError, prop } from '../retry/errors.js';

/** What `withRetryKy` needs of ky: `extend`, as ky's own instance has it. */
export interface KyLike<K> {
  extend(options: { retry: number; fetch: typeof fetch }): K;
}

/** What `withRetryKy` reads of the instance's options (ky 1.5 and later hand them to a function given to `extend`). */
interface KyDefaults {
  readonly timeout?: unknown;
  readonly totalTimeout?: unknown;
}

/** ky's own default `timeout`. */
const KY_TIMEOUT_MS = 10_000;

/**
 * A ky instance whose own retry is off (`retry: 0`) and whose `fetch` is `withRetry(fetch,
 * options)`: every request is retried by ebb (idempotency, bodies, `Retry-After`, a budget per
 * origin), under ky's hooks, `timeout` and `throwHttpErrors` — ky sees the last response when
 * the retries end and throws its `HTTPError` for it as usual. When the retries end on a network
 * error (a reset, a refused connection, whatever the reason they ended: attempts, the time
 * budget, the retry budget), ky gets that error from its `fetch`, as without ebb: never ebb's
 * `RetryError`. `fetch` is the fetch to wrap (default the global one).
 *
 * **ky's `timeout` bounds the whole call** (default 10 s), ebb's waits included: ky starts it
 * when it calls its `fetch`, which is the whole retry. So `maxRetryAfterMs` defaults to the
 * instance's `timeout` when that is shorter than 60 s (a longer `Retry-After` returns the
 * response at once, as ky's own `maxRetryAfter` does), and a `maxRetryAfterMs` longer than the
 * instance's `timeout` is refused (a `RangeError`): give ky a longer `timeout`, or `false`. A
 * `timeout` passed with one request is not seen here; it bounds that call as well.
 *
 * @example
 * import ky from 'ky';
 * import { withRetryKy } from 'ebb/clients';
 * const api = withRetryKy(ky.extend({ timeout: 60_000 }), { maxRetryAfterMs: 30_000 });
 * const items = await api.get('https://api.example.com/items').json();
 */
export function withRetryKy<K>(
  ky: KyLike<K>,
  options?: WithRetryOptions,
  fetchImpl: FetchLike & typeof fetch = globalThis.fetch,
): K {
  const where = 'withRetryKy()';
  const o = optionsObject(where, options) as WithRetryOptions;
  let read = false;
  const ours = (defaults: KyDefaults): { retry: number; fetch: typeof fetch } => {
    read = true;
    const timeout = defaults.timeout === undefined ? KY_TIMEOUT_MS : defaults.timeout;
    const total = defaults.totalTimeout;
    const bound = Math.min(
      typeof timeout === 'number' ? timeout : Infinity,
      typeof total === 'number' ? total : Infinity,
    );
    const max = o.maxRetryAfterMs;
    if (typeof max === 'number' && max > bound) {
      invalid(
        where,
        'maxRetryAfterMs',
        max,
        DEV ? `at most ky's timeout, ${bound} ms, which bounds the whole call, ebb's waits included` : '',
        DEV ? 'Give ky a longer one: withRetryKy(ky.extend({ timeout: 60_000 }), options), or timeout: false.' : '',
      );
    }
    const retried = withRetryAs(
      where,
      fetchImpl,
      max === undefined && bound < 60_000 ? { ...o, maxRetryAfterMs: bound } : o,
    );
    // A network error that outlasted the retries reaches ky as fetch's own rejection, not wrapped.
    const kyFetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
      retried(input, init).catch((error: unknown) => {
        throw isRetryError(error) ? prop(error, 'cause') : error;
      });
    return { retry: 0, fetch: kyFetch as typeof fetch };
  };
  try {
    return (ky.extend as unknown as (f: (defaults: KyDefaults) => object) => K)(ours);
  } catch (error) {
    // A ky before 1.5 takes no function: its instance's timeout is not known here.
    if (read) throw error;
    return ky.extend(ours({ timeout: false }));
  }
}
