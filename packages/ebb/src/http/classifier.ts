import { isNetworkError, isTimeoutError } from './network-error.js';

/**
 * A classifier's answer about one attempt:
 * - `'retry'`: a transient failure; try again after the backoff (and any server hint).
 * - `'throttled'`: the server is rate-limiting; try again, and tell the rate controller
 *   (`ebb/rate`) so that it slows the whole client down.
 * - `'final'`: return this response (or throw this error) to the caller as it is.
 *
 * `true` and `false` are accepted as `'retry'` and `'final'`.
 */
export type HttpVerdict = 'retry' | 'throttled' | 'final';

/** What a classifier sees of one attempt: the response, or the error `fetch` threw. */
export interface HttpResult {
  /** The request method, upper-case. */
  readonly method: string;
  /** The request URL. */
  readonly url: string;
  /** 1 for the first call, 2 for the first retry, … */
  readonly attempt: number;
  /** The response, when the server answered; undefined when `fetch` threw. */
  readonly response: Response | undefined;
  /** What `fetch` threw; undefined when there is a response. */
  readonly error: unknown;
  /**
   * The first 64 KiB of the response body as text, read from a clone, so that the response
   * itself stays unread for the caller; '' when there is no response or no body. Read once and
   * shared by every classifier that asks. Rejects if the body fails mid-way (a reset), which
   * makes the attempt fail with that error.
   */
  text(): Promise<string>;
}

/**
 * Decides whether an attempt is worth repeating. May be async (reading the body, say). It is
 * asked about every response, whatever the method: its verdict is also what the `rate` hook is
 * told about the service (`'retry'`: a failure, `'throttled'`: a throttle, `'final'`: a success),
 * and a response of a request that may not be repeated (see `withRetry`'s `methods`) is not
 * retried whatever it says. About an error `fetch` threw it is asked only when the request may be
 * repeated. It never sees an abort of the caller's signal.
 */
export interface HttpClassifier {
  (result: HttpResult): HttpVerdict | boolean | PromiseLike<HttpVerdict | boolean>;
  /**
   * How the system this classifier stands for reads a server's hint off a retried response, in
   * ms (the AWS classifiers: `x-amz-retry-after`, then `Retry-After`). Default: `serverHintMs`
   * (`Retry-After`, and an exhausted `RateLimit` policy).
   */
  readonly serverHintMs?: (response: Response) => number | undefined;
}

/** How much of a body a classifier may read: error documents are small, and a stall must not cost memory. */
export const TEXT_LIMIT_BYTES = 64 * 1024;

/**
 * Reads at most `limit` bytes of a clone of `response` as UTF-8 text, then cancels the clone.
 * @internal
 */
export async function readTextPrefix(response: Response, limit: number = TEXT_LIMIT_BYTES): Promise<string> {
  if (response.body === null || response.bodyUsed) return '';
  // The clone of a response with a body has one too.
  const reader = (response.clone().body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let read = 0;
  try {
    while (read < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      // subarray clamps its end to the chunk's length: a chunk within the limit is taken whole.
      const chunk = value.subarray(0, limit - read);
      read += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
    }
    text += decoder.decode();
  } finally {
    // Stops this branch of the tee; the caller's branch keeps the whole body.
    reader.cancel().catch(() => {});
  }
  return text;
}

/** The statuses `standard` retries: 408, 429, 500, 502, 503, 504. */
const STANDARD_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * True for failures of the connection and for attempt timeouts: what every classifier here
 * retries. @internal
 */
export function isTransientError(error: unknown): boolean {
  return isNetworkError(error) || isTimeoutError(error);
}

/**
 * ebb's default classifier, what `withRetry` uses unless told otherwise:
 * - **retry** network failures (reset, refused, DNS, a socket closed mid-response, the
 *   browsers' "Failed to fetch" family; see `isNetworkError`), attempt timeouts, and the
 *   statuses 408 Request Timeout, 500, 502, 503 and 504;
 * - **throttled** for 429 Too Many Requests;
 * - **final** for everything else: success, redirects, and every other 4xx (the request itself
 *   is wrong and repeating it cannot help — the rule the AWS General Reference states, and
 *   RFC 9110's meaning of 4xx), and 501, 505 and the like, which say the server cannot do it.
 *
 * Pairs with `presets.default`.
 */
export const standard: HttpClassifier = ({ response, error }) => {
  if (response === undefined) return isTransientError(error) ? 'retry' : 'final';
  const status = response.status;
  if (status === 429) return 'throttled';
  return STANDARD_STATUSES.has(status) ? 'retry' : 'final';
};
