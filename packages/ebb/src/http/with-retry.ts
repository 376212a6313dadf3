import { anySignal } from '../core/any-signal.js';
import { ignored, isA, isThenable, verdict } from '../core/boundary.js';
import { DEV } from '../core/dev.js';
import { hostQueue } from '../core/host-queues.js';
import { MOVED, refuseNamed } from '../core/option-names.js';
import { brief, mistyped, optionsObject, show } from '../core/validate.js';
import type { Hedging } from '../resilience/hedging.js';
import type { AttemptContext, RetryContext } from '../retry/contexts.js';
import { type DefaultBudget, defaultBudget } from '../retry/default-budget.js';
import { type FailureVerdict, isRetryError, prop, type Result } from '../retry/errors.js';
import type { RetryBudget } from '../retry/hook-points.js';
import { innerAt, type Mechanism } from '../retry/mechanism.js';
import { KEYS, type Prepared, prepare, type RetryOptions } from '../retry/options.js';
import { execute } from '../retry/retry.js';
import { Scope } from '../retry/scope.js';
import { isReplayableBody } from './body.js';
import { isNotSentError } from './network-error.js';
import { type HttpPredicate, standard } from './predicates.js';
import { isReadFailure } from './response-text.js';
import { retryAfterMs } from './retry-after.js';
import { HttpStatusError } from './status-error.js';

/**
 * What `withRetry` reads of a response: its status and headers, its body (cancelled when a failed
 * response is retried) and `clone()` (for `responseText`). The `Response` of every runtime's
 * `fetch`, and of undici's, has them.
 */
export interface ResponseLike {
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  readonly bodyUsed: boolean;
  readonly body: unknown;
  clone(): unknown;
}

/**
 * A function `withRetry` can wrap: called as `fetch` is — `(input, init)` — and returning a
 * promise of a response. Its own parameter types are kept: `withRetry(undiciFetch)` takes
 * undici's `RequestInit` (its `dispatcher`), `withRetry(fetch)` the global one.
 */
export type FetchLike = (input: never, init?: never) => Promise<ResponseLike>;

/** What `withRetry`'s `isFailure` is told with the outcome: the attempt's context, and the request. Immutable. */
export interface HttpAttemptContext extends AttemptContext {
  /** The request method, upper-case. */
  readonly method: string;
  /** The request URL. */
  readonly url: string;
}

/** `withRetry`'s failure predicate: an {@link HttpPredicate}, or your own over `R`, the wrapped fetch's response. */
export interface HttpIsFailure<R = Response> {
  (outcome: Result<R>, context: HttpAttemptContext): FailureVerdict | PromiseLike<FailureVerdict>;
  /** How a failed response's hint is read (see {@link HttpPredicate}); `withRetry`'s own `serverHintMs` comes first. */
  serverHintMs?(response: R): number | undefined;
}

/** What `onRetry` is told before each wait: the executor's context, plus the HTTP side. Immutable. */
export interface HttpRetryContext<R = Response> extends RetryContext {
  /**
   * The response of the attempt that failed — its status and headers; its body is already
   * cancelled, to free the connection — or undefined when `fetch` threw (`error` says what).
   */
  readonly response: R | undefined;
  /** The request method, upper-case. */
  readonly method: string;
  /** The request URL. */
  readonly url: string;
}

/**
 * Options of {@link withRetry}: the executor's options (see `retry()`), except that the signal
 * comes from each request's `init.signal`. Every duration is in milliseconds. `R` is the wrapped
 * fetch's response type.
 */
export interface WithRetryOptions<R = Response>
  extends Omit<RetryOptions<R>, 'isFailure' | 'signal' | 'onRetry' | 'budget'> {
  /**
   * What counts as a failure, asked about every response (`{ ok: true, value: response }`) and
   * about what `fetch` threw (`{ ok: false, error }`), with the request's {@link HttpAttemptContext}:
   * `true` or `'throttled'` (a 429: a rate controller slows down) retries it, `false` returns it
   * as it is. Default {@link standard}; ready-made: `aws`, `awsGeneralReference`, `googleDrive`,
   * `googleHttpClient`. The body: `responseText(response)`, read once and shared.
   *
   * Every response is asked about, whatever the method: its answer is also what the mechanisms of
   * `use` are told (a failure, a throttle or a success). Whether a failure is *retried* keeps to
   * idempotency (see `methods`). Not asked about an abort of the caller's signal, nor about an
   * error `fetch` threw for a request that may not be repeated.
   */
  readonly isFailure?: HttpIsFailure<R>;
  /**
   * Methods that may be repeated (compared upper-case). Default: the idempotent methods of RFC
   * 9110 §9.2.2 — GET, HEAD, OPTIONS, TRACE, PUT, DELETE. A request of another method is
   * retried only if it carries an `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header)
   * or the failure proves it was never sent (connection refused, DNS failure).
   */
  readonly methods?: readonly string[];
  /** Called before each wait; may be async (awaited). A throw stops the retries with that error. */
  readonly onRetry?: (context: HttpRetryContext<R>) => void | PromiseLike<void>;
  /**
   * Mechanisms every attempt runs through, inside the retry, the first outermost — a pipeline's
   * inner part: `circuitBreaker()`, `concurrencyLimit()`, the rate controllers of `ebb/rate`,
   * `timeout(ms)` (the time limit of each attempt, up to its response headers and `isFailure`'s
   * answer), any `Mechanism` (a hand-written guard wrapped: `guard(myGuard)`). Each hears every response as `isFailure` judged it: a failed one
   * as an `HttpStatusError` (`throttled: true` for a 429 or a `'throttled'` answer), whatever the
   * method. A refusal (an open breaker's `BrokenCircuitError`) is asked about as an error; the
   * ready-made predicates call it no failure, so it reaches you at once. Made once, shared by
   * every request. Default none.
   *
   * @example
   * withRetry(fetch, { use: [circuitBreaker(), concurrencyLimit(), timeout(5_000)] })
   */
  readonly use?: readonly Mechanism[];
  /**
   * Hedges each attempt of an idempotent request (a method of RFC 9110 §9.2.2 that `methods`
   * allows, with a replayable body): a `hedging()` from ebb/resilience, shared by every request.
   * Each hedged request is judged by `isFailure` on its own, so a fast 503 does not beat a slow
   * 200; the first response `isFailure` accepts wins and the others are aborted (their sockets
   * closed). Never for other requests — an `Idempotency-Key` allows a retry, not two copies in
   * flight at once. Default none.
   */
  readonly hedge?: Hedging;
  /**
   * Reads the server's hint off a failed response, in ms (undefined: no hint); the next wait is
   * at least that long, and a hint above `maxRetryAfterMs` ends the retries. Default: the
   * predicate's own (`aws` reads `x-amz-retry-after`), else `retryAfterMs` (`Retry-After`, both
   * forms). Pass `serverHintMs` (exported) to honour an exhausted IETF `RateLimit` policy too.
   */
  readonly serverHintMs?: (response: R) => number | undefined;
  /**
   * The retry budget. Default: one per origin (scheme, host and port; 256 origins at once, an
   * origin unused for a minute forgotten, any more in use sharing one), kind to a struggling
   * service — retries in the last ~10 s ≤ max(20 % of the calls to that origin, 10): a total
   * outage costs about 1.2 requests a call, a blip that fails 10 % of requests is retried in
   * full, a client with little traffic keeps its few retries (see docs/retry.md, "The default
   * retry budget"). A refused retry ends the call with the last
   * response. `false`: none. A budget of `ebb/rate` is shared by every origin.
   */
  readonly budget?: RetryBudget | false;
}

/** RFC 9110 §9.2.2: "PUT, DELETE, and safe request methods are idempotent." */
const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];

/**
 * The option names `withRetry()` knows (named in its messages): the executor's but `signal` (per
 * request here, refused with a pointer to `init.signal`), and its own. `isFailure` and `onRetry`
 * are the executor's names with withRetry's own types.
 */
const KNOWN_KEYS = /* @__PURE__ */ KEYS.filter((key) => key !== 'signal').concat([
  'methods',
  'hedge',
  'use',
  'serverHintMs',
]);

/** Options of 0.1 and where they went. */
const MOVED_OPTIONS: Record<string, string> = DEV
  ? {
      retryOn: 'use `isFailure`.',
      rate: 'use `use: [rate]`.',
      attemptTimeoutMs: 'use `use: [timeout(ms)]`.',
    }
  : {};

/** RFC 9110 §9.1: a method is a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The origins whose default budgets are kept, each its own. */
const MAX_ORIGINS = 256;
/**
 * How long an origin goes unused before its budget may be forgotten: six of the budget's 10-s
 * windows, after which its counts weigh e^−6 (0.25 %) of what they did.
 */
const IDLE_MS = 60_000;

/** Scheme and authority of an absolute URL, without user info; '' for a relative one (same origin). */
const ORIGIN = /^([a-z][a-z\d+.-]*:\/\/)(?:[^@/?#]*@)?([^/?#]*)/i;

/** Errors made here for responses `isFailure` called a failure: the executor retries exactly these. */
const retryable = /* @__PURE__ */ new WeakSet<object>();
/**
 * Errors made here for failed responses of a request that may not be repeated (not idempotent,
 * or a stream body): the mechanisms of `use` hear them as what they are, the executor does not
 * retry them, and the caller gets the response itself.
 */
const reported = /* @__PURE__ */ new WeakSet<object>();

const noop = (): void => {};

/** Frees the connection of a response nobody will read. */
function discard(response: ResponseLike): void {
  const body = response.body as ReadableStream | null;
  if (body === null || response.bodyUsed) return;
  try {
    body.cancel().catch(noop);
  } catch {
    // A locked body belongs to whoever locked it.
  }
}

function isRequest(input: unknown): input is Request {
  return (
    typeof input === 'object' &&
    input !== null &&
    typeof (input as Request).url === 'string' &&
    typeof (input as Request).method === 'string' &&
    typeof (input as Request).clone === 'function'
  );
}

/**
 * The signals behind each response's abort, held for as long as the response or its body can
 * still be read: the joined signal (`anySignal`, whose controller it keeps) and the caller's.
 * When the attempt's signal was joined with `AbortSignal.any`, nothing kept a caller's
 * `AbortSignal.timeout(…)` alive once `withRetry` had resolved: a collection freed it, its timer
 * fired on nothing, and a body still arriving from a server that stalls was never aborted
 * (measured: 10 of 10 such reads hung with a collection every 20 ms; test/http/signal-gc.test.ts
 * holds every way of joining to it). Keyed weakly, so a response dropped frees its signals.
 */
const signalsOfResponse = /* @__PURE__ */ new WeakMap<object, readonly AbortSignal[]>();
function pinSignals<T>(response: T, signals: readonly AbortSignal[]): T {
  if (typeof response === 'object' && response !== null) {
    signalsOfResponse.set(response, signals);
    const body = prop(response, 'body');
    if (typeof body === 'object' && body !== null) signalsOfResponse.set(body, signals);
  }
  return response;
}

/** Whether the request carries an `Idempotency-Key`; headers fetch would refuse count as none (fetch reports them). */
function hasIdempotencyKey(init: RequestInit | undefined, request: Request | undefined): boolean {
  try {
    return new Headers(init?.headers !== undefined ? init.headers : request?.headers).has('idempotency-key');
  } catch {
    return false;
  }
}

/** The context `isFailure` is told: the attempt's (its signal made only if read), and the request. */
function httpContext(context: AttemptContext, method: string, url: string): HttpAttemptContext {
  return {
    attempt: context.attempt,
    elapsedMs: context.elapsedMs,
    get signal() {
      return context.signal;
    },
    method,
    url,
  };
}

/**
 * Wraps `fetchImpl` (default: the global `fetch`) into a function of the same type that retries
 * failed attempts with ebb's executor, backing off by `options.backoff` (default
 * `defaultBackoff`: 100 ms ×2, 20 s cap, full jitter, 5 attempts).
 *
 * **What is retried.** What `isFailure` (default {@link standard}) calls a failure: by default
 * network failures, attempt timeouts, 408, 429, 500, 502, 503 and 504; never another 4xx. Only
 * for idempotent methods (`methods`), unless the request has an `Idempotency-Key` header; a
 * request that provably never left (connection refused, DNS failure) is retried whatever its
 * method. Within a retry budget per origin (`budget`): a service that is down gets about 1.2
 * requests a call, not five.
 *
 * **Bodies.** A string, `ArrayBuffer`, typed array, `Blob`, `URLSearchParams` or `FormData`
 * body is sent again intact; a `Request` with a body is replayed from `request.clone()` (the
 * bytes stay in memory until the call settles), whatever made its body — a stream too, since a
 * `Request` does not tell: ky calls with a `Request`, so under `withRetryKy` a streamed upload is
 * buffered and sent again. A `ReadableStream` given as `init.body` is never retried: it is
 * consumed as it is sent, and keeping a copy would hold an upload of unknown size in memory.
 *
 * **Responses.** A retried response's body is cancelled before the next attempt, so it holds no
 * connection. When the retries end — attempts used up, the time budget, a `Retry-After` longer
 * than `maxRetryAfterMs` (default 60 s), the retry budget — you get the **last response**, as
 * `fetch` would have returned it (a 503, say, unread); check `response.ok` as with `fetch`. When
 * the last attempt threw after retries, the promise rejects with `RetryError` (`cause`: the last
 * error). An error that is not retried reaches you unchanged, as `fetch` threw it: one
 * `isFailure` calls no failure, and one thrown for a request that may not be repeated (a POST
 * whose connection was reset). In a browser `fetch` gives no error code, so a POST is never
 * known to be unsent there, and never retried.
 *
 * **Hints.** `Retry-After` (seconds or an HTTP-date) on a failed response becomes the error's
 * `retryAfterMs`: the next wait is at least that long (see `serverHintMs`). 429 and
 * `'throttled'` answers set `throttled: true`, which a rate controller in `use` records as
 * `'throttled'`.
 *
 * **What the mechanisms of `use` hear.** Every response, by what `isFailure` says about it,
 * whatever the method: a failure is an `HttpStatusError` (`'failure'`, or `'throttled'`),
 * anything else a success; an error `fetch` threw (a timeout, a reset) is a failure. So a circuit
 * breaker opens, and a concurrency limit sees its drops, in a write-only API's outage as in a
 * read-only one's. Whether the request is *retried* is a separate decision that keeps to
 * idempotency: a POST answered 503 is reported as a failure (`onFailedAttempt` with
 * `next: 'final'`, then `onGiveUp` with reason `'final'`) and not repeated, and you get its
 * response, as `fetch` returned it.
 *
 * **Cancelling.** `init.signal` (or the `Request`'s signal) aborts everything: the running
 * attempt, a wait, and the body of the response you got. A `timeout(ms)` in `use` bounds each
 * attempt up to its response headers and `isFailure`'s answer; reading the body of the returned
 * response is bounded by `init.signal` only. `init` reaches `fetchImpl` unchanged but for its
 * signal: undici's `dispatcher` too. See docs/http-notes.md for what the connections do.
 *
 * **Types.** The result has `fetchImpl`'s own type: `withRetry(fetch)` is a `typeof fetch`,
 * `withRetry(undiciFetch)` takes undici's `RequestInit`.
 *
 * Options are checked here, once: a bad one throws `TypeError`/`RangeError` naming it.
 *
 * @example
 * import { timeout } from 'ebb';
 * import { withRetry } from 'ebb/http';
 * const fetchRetrying = withRetry(fetch, { use: [timeout(5_000)] });
 * const res = await fetchRetrying('https://api.example.com/items', { signal: AbortSignal.timeout(30_000) });
 * if (!res.ok) throw new Error(`HTTP ${res.status}`);   // the last response, after the retries
 */
export function withRetry<F extends FetchLike = typeof fetch>(
  fetchImpl?: F,
  options?: WithRetryOptions<Awaited<ReturnType<F>>>,
): F {
  return withRetryAs('withRetry()', fetchImpl, options);
}

/** {@link withRetry}, its messages naming `where` (an adapter built on it: `withRetryKy()`). @internal */
export function withRetryAs<F extends FetchLike = typeof fetch>(
  where: string,
  fetchImpl?: F,
  options?: WithRetryOptions<Awaited<ReturnType<F>>>,
): F {
  // The default is read here, once: a fetch patched later (a test's mock) is not seen; pass it.
  const impl = (fetchImpl ?? globalThis.fetch) as unknown as (input: unknown, init?: RequestInit) => unknown;
  if (typeof impl !== 'function') {
    mistyped(
      where,
      'fetchImpl',
      impl,
      DEV ? 'a function with the signature of fetch' : '',
      DEV ? 'Pass fetch, or leave it out.' : '',
    );
  }
  const o = optionsObject(where, options) as WithRetryOptions<ResponseLike> & Record<string, unknown>;
  // The production build leaves these to prepare(), which refuses them as unknown options with
  // the same short message.
  if (DEV) refuseNamed(where, o, MOVED_OPTIONS, MOVED);
  if ('signal' in o) {
    throw new TypeError(
      DEV
        ? `${where}: \`signal\` is per request: pass it as init.signal of each call.`
        : brief(where, 'signal', o.signal),
    );
  }
  const { isFailure = standard, methods, onRetry, hedge, use, serverHintMs, budget, ...executorOptions } = o;
  // The executor's own checks (and its hints for options that moved), now rather than at the first request.
  const checked = prepare(where, budget === false ? executorOptions : { ...executorOptions, budget }, KNOWN_KEYS);
  // A failed response reaches the executor as the HttpStatusError that carries it; the hooks
  // that report a failure are told the response as `value` too, as their type says.
  const { onFailedAttempt, onGiveUp } = checked;
  const told = <C extends { readonly error: unknown }>(
    user: ((context: C) => void | PromiseLike<void>) | undefined,
  ): typeof user =>
    user &&
    ((context: C) =>
      user(
        isA(context.error, HttpStatusError)
          ? Object.freeze({ ...context, value: (context.error as HttpStatusError).response })
          : context,
      ));
  const prepared: Prepared = { ...checked, onFailedAttempt: told(onFailedAttempt), onGiveUp: told(onGiveUp) };
  if (typeof isFailure !== 'function') {
    mistyped(
      where,
      'isFailure',
      isFailure,
      DEV ? 'a function (outcome, context)' : '',
      DEV ? 'Such as standard, aws or googleDrive.' : '',
    );
  }
  // Its own hint reader first, then the predicate's, then Retry-After's.
  const [hintName, hint] = (
    serverHintMs !== undefined
      ? ['serverHintMs', serverHintMs]
      : ['isFailure.serverHintMs', (isFailure as HttpPredicate).serverHintMs ?? retryAfterMs]
  ) as [string, (response: ResponseLike) => number | undefined];
  if (typeof hint !== 'function')
    mistyped(where, hintName, hint, DEV ? 'a function (response) => ms or undefined' : '');
  if (onRetry !== undefined && typeof onRetry !== 'function') {
    mistyped(where, 'onRetry', onRetry, DEV ? 'a function (context) => void' : '');
  }
  if (hedge !== undefined && (typeof hedge !== 'object' || hedge === null || typeof hedge.run !== 'function')) {
    mistyped(
      where,
      'hedge',
      hedge,
      DEV ? 'a hedging() from ebb/resilience' : '',
      DEV ? 'Such as hedging({ delayMs: 50 }).' : '',
    );
  }
  if (
    methods !== undefined &&
    (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !TOKEN.test(m)))
  ) {
    mistyped(where, 'methods', methods, DEV ? "an array of method names such as ['GET', 'PUT']" : '');
  }
  if (use !== undefined && !Array.isArray(use)) mistyped(where, 'use', use, DEV ? 'an array of mechanisms' : '');
  // Each attempt passes the mechanisms of `use`, the first outermost: made once, shared by every request.
  const inner: Mechanism[] = (use ?? []).map((m: unknown, i: number) => innerAt(where, `use[${i}]`, m));
  const allowed = new Set((methods ?? IDEMPOTENT_METHODS).map((m) => m.toUpperCase()));
  // The default budget: one per origin for MAX_ORIGINS origins, least recently used first; an
  // origin is forgotten only once idle for IDLE_MS. Past that many origins in use at once, the
  // rest share one budget: forgetting an active origin's budget would hand it a fresh floor of
  // retries at every call (an outage over 257 origins cost 5 requests a call, not 1.2).
  const budgets = new Map<string, { readonly budget: DefaultBudget; seenAt: number }>();
  let shared: DefaultBudget | undefined;
  const now = (): number => (prepared.clock ?? hostQueue(prepared.unref)).now();
  const budgetOf = (url: string): RetryBudget => {
    const m = ORIGIN.exec(url);
    const origin = m ? `${m[1]}${m[2]}`.toLowerCase() : '';
    let t: number;
    try {
      t = now();
    } catch {
      t = Number.NaN; // the budget's own reading fails the call; here it only keeps every origin
    }
    let kept = budgets.get(origin);
    if (kept) budgets.delete(origin);
    else if (budgets.size >= MAX_ORIGINS) {
      const [oldest, first] = budgets.entries().next().value as [string, { seenAt: number }];
      if (!(t - first.seenAt >= IDLE_MS)) {
        shared ??= defaultBudget(now);
        return shared;
      }
      budgets.delete(oldest);
    }
    kept ??= { budget: defaultBudget(now), seenAt: t };
    kept.seenAt = t;
    budgets.set(origin, kept);
    return kept.budget;
  };
  // As a pipeline runs its mechanisms: `next` never throws (a mechanism holding a ticket or a
  // timer must see a rejection, not a throw past it).
  const through = (
    i: number,
    context: AttemptContext,
    last: (context: AttemptContext) => Promise<ResponseLike>,
  ): Promise<ResponseLike> => {
    try {
      return i === inner.length
        ? last(context)
        : (inner[i] as Mechanism).execute((c) => through(i + 1, c, last), context);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const fetchWithRetry = (input: unknown, init?: RequestInit): Promise<ResponseLike> => {
    const request = isRequest(input) ? input : undefined;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    const url = request ? request.url : String(input);
    const ownBody = init?.body !== undefined && init.body !== null;
    // Stryker disable next-line OptionalChaining: ownBody implies init.
    const replayable = ownBody ? isReplayableBody(init?.body) : true;
    const idempotent = allowed.has(method) || hasIdempotencyKey(init, request);
    const judgesResponses = replayable && idempotent;
    const hedged = hedge !== undefined && replayable && IDEMPOTENT_METHODS.includes(method) && allowed.has(method);
    // As fetch reads init (WebIDL: a member set to undefined is absent): `signal: undefined` keeps
    // the Request's own signal, `signal: null` drops it.
    const callerSignal = (init?.signal !== undefined ? init.signal : request?.signal) ?? undefined;
    const cloneRequest = !ownBody && request !== undefined && request.body !== null;
    // What `isFailure` (or the hint reader) itself threw while judging a response: its own bug, not
    // a failed attempt, so it reaches the caller unchanged. A Set, not a WeakSet: a thrown string
    // or null must be recognized too.
    let predicateErrors: Set<unknown> | undefined;
    const own = (error: unknown, response: ResponseLike): never => {
      discard(response);
      // A body that failed mid-read is an attempt failure; anything else thrown is the predicate's own.
      if (!isReadFailure(response, error)) {
        predicateErrors ??= new Set();
        predicateErrors.add(error);
      }
      throw error;
    };

    const judge = async (response: ResponseLike, context: AttemptContext): Promise<ResponseLike> => {
      let failed: FailureVerdict;
      let ms: number | undefined;
      try {
        const answer = isFailure({ ok: true, value: response }, httpContext(context, method, url));
        failed = verdict(where, 'isFailure', isThenable(answer) ? await answer : answer);
        if (!failed) return response;
        // Checked where it enters: anything but a number >= 0 is no hint (as the executor reads
        // one); a promise is none either, and its rejection is handled.
        const h = hint(response);
        ignored(h);
        ms = typeof h === 'number' && h >= 0 ? h : undefined;
      } catch (error) {
        return own(error, response);
      }
      const error = new HttpStatusError(
        response as unknown as Response,
        method,
        url,
        ms,
        failed === 'throttled' || response.status === 429,
      );
      // Heard by the mechanisms of `use` either way; retried only when the request may be repeated.
      (judgesResponses ? retryable : reported).add(error);
      throw error;
    };

    const send = (signal: AbortSignal, context: AttemptContext): Promise<ResponseLike> => {
      const attemptInput = cloneRequest ? (request as Request).clone() : input;
      const pending = impl(attemptInput, init === undefined ? { signal } : { ...init, signal });
      if (!isThenable<ResponseLike>(pending)) {
        throw new TypeError(
          DEV
            ? `${where}: \`fetchImpl\` returned ${show(pending)}; expected a promise of a Response.`
            : brief(where, 'fetchImpl()', pending),
        );
      }
      const signals = callerSignal === undefined ? [signal] : [signal, callerSignal];
      // Every response is judged, so that the mechanisms of `use` hear what it says about the
      // service; only one of a request that may be repeated can be retried (judge decides).
      return Promise.resolve(pending).then((response) => judge(pinSignals(response, signals), context));
    };
    const attempt = (context: AttemptContext): Promise<ResponseLike> => {
      const signal = callerSignal === undefined ? context.signal : anySignal(context.signal, callerSignal);
      // Hedged: each copy is sent and judged on its own signal, which hedging aborts for the losers.
      return hedged
        ? (hedge as Hedging).run((copy) => send(copy.signal, context), { signal, method })
        : send(signal, context);
    };

    // A response `isFailure` let through is the result; a failure of the attempt (a failed
    // response, made an HttpStatusError by `judge`, or a thrown error) is asked about here.
    const failure = (outcome: Result, context: AttemptContext): FailureVerdict | PromiseLike<FailureVerdict> => {
      if (outcome.ok) return false;
      const error = outcome.error;
      // WeakSet.has is false for a primitive (ECMA-262 §24.4.3.4), no check needed.
      if (retryable.has(error as object)) return true;
      if (reported.has(error as object) || predicateErrors?.has(error)) return false;
      if (!replayable || !(idempotent || isNotSentError(error))) return false;
      const answer = isFailure(outcome, httpContext(context, method, url));
      return isThenable(answer)
        ? Promise.resolve(answer).then((a) => verdict(where, 'isFailure', a))
        : verdict(where, 'isFailure', answer);
    };

    const hook = (context: RetryContext): void | PromiseLike<void> => {
      const error = context.error;
      const response = retryable.has(error as object) ? (error as HttpStatusError).response : undefined;
      if (response !== undefined) discard(response);
      return onRetry?.(
        Object.freeze({
          attempt: context.attempt,
          error,
          delayMs: context.delayMs,
          elapsedMs: context.elapsedMs,
          response,
          method,
          url,
        }),
      );
    };

    const run: Prepared = {
      ...prepared,
      full: true,
      isFailure: failure,
      onRetry: hook,
      Context: Scope,
      budget: budget === undefined ? budgetOf(url) : prepared.budget,
    };
    return execute((context: AttemptContext) => through(0, context, attempt), run, callerSignal).catch(
      (error: unknown) => {
        // A failed response of a request that may not be repeated: that response is the answer.
        if (reported.has(error as object)) return (error as HttpStatusError).response;
        // Giving up after a retried response: that response is the answer, as fetch gives it.
        const cause = isRetryError(error) ? prop(error, 'cause') : undefined;
        if (retryable.has(cause as object)) return (cause as HttpStatusError).response;
        throw error;
      },
    );
  };
  return fetchWithRetry as unknown as F;
}
