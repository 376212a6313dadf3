import { isThenable } from '../core/boundary.js';
import { invalid, optionsObject, show } from '../core/validate.js';
import type { Hedging } from '../resilience/hedging.js';
import { isRetryError, type Result as Outcome, prop } from '../retry/errors.js';
import { guard } from '../retry/guard.js';
import type { Mechanism } from '../retry/mechanism.js';
import {
  type AttemptContext,
  type Prepared,
  prepare,
  type RateController,
  type RetryContext,
  type RetryOptions,
} from '../retry/options.js';
import { execute } from '../retry/retry.js';
import { Scope } from '../retry/scope.js';
import { timeoutOn } from '../retry/timeout.js';
import { isReplayableBody } from './body.js';
import { type HttpClassifier, type HttpResult, type HttpVerdict, readTextPrefix, standard } from './classifier.js';
import { isNotSentError } from './network-error.js';
import { serverHintMs } from './server-hint.js';
import { HttpStatusError } from './status-error.js';

/** A function with `fetch`'s signature. */
export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** What `onRetry` is told before each wait: the executor's context, plus the HTTP side. Immutable. */
export interface HttpRetryContext extends RetryContext {
  /**
   * The response of the attempt that failed — its status and headers; its body is already
   * cancelled, to free the connection — or undefined when `fetch` threw (`error` says what).
   */
  readonly response: Response | undefined;
  /** The request method, upper-case. */
  readonly method: string;
  /** The request URL. */
  readonly url: string;
}

/**
 * Options of {@link withRetry}: the executor's options (see `retry()`), except that the signal
 * comes from each request's `init.signal` and `isFailure` is replaced by `retryOn`.
 */
export interface WithRetryOptions extends Omit<RetryOptions<Response>, 'isFailure' | 'signal' | 'onRetry'> {
  /** Decides which responses and errors are retried; default {@link standard}. */
  readonly retryOn?: HttpClassifier;
  /**
   * Methods that may be repeated (compared upper-case). Default: the idempotent methods of RFC
   * 9110 §9.2.2 — GET, HEAD, OPTIONS, TRACE, PUT, DELETE. A request of another method is
   * retried only if it carries an `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header)
   * or the failure proves it was never sent (connection refused, DNS failure).
   */
  readonly methods?: readonly string[];
  /** Called before each wait; may be async (awaited). A throw stops the retries with that error. */
  readonly onRetry?: (context: HttpRetryContext) => void | PromiseLike<void>;
  /**
   * Time limit of each attempt, up to its response headers and the classifier's decision: the
   * attempt's signal aborts with a `TimeoutError` and the attempt counts as failed (a
   * `timeout(ms)` inside the retry). Default: none.
   */
  readonly attemptTimeoutMs?: number;
  /**
   * A guard every attempt passes (`ebb/rate`'s controllers, `ebb/resilience`'s breaker and
   * limit): `acquire()` before the attempt — its refusal is a failed attempt, backed off and
   * retried —, `record()` after it (`'throttled'` for a 429).
   */
  readonly rate?: RateController;
  /**
   * Hedges each attempt of an idempotent request (a method of RFC 9110 §9.2.2 that `methods`
   * allows, with a replayable body): a `hedging()` from ebb/resilience, shared by every request.
   * Each hedged request is judged by `retryOn` on its own, so a fast 503 does not beat a slow
   * 200; the first response `retryOn` accepts wins and the others are aborted (their sockets
   * closed). Never for other requests — an `Idempotency-Key` allows a retry, not two copies in
   * flight at once. Default: none.
   */
  readonly hedge?: Hedging;
}

/** RFC 9110 §9.2.2: "PUT, DELETE, and safe request methods are idempotent." */
const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];

const OWN_KEYS = ['retryOn', 'methods', 'onRetry', 'hedge', 'attemptTimeoutMs', 'rate'];

/** RFC 9110 §9.1: a method is a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Errors made here for responses the classifier chose to retry: the executor retries exactly these. */
const retryable = new WeakSet<object>();
/**
 * Errors made here for responses the classifier called a failure or a throttle, of a request
 * that may not be repeated (not idempotent, or a stream body): the rate hook records them as
 * what they are, the executor does not retry them, and the caller gets the response itself.
 */
const reported = new WeakSet<object>();

const noop = (): void => {};

/** Frees the connection of a response nobody will read. */
function discard(response: Response): void {
  if (response.body === null || response.bodyUsed) return;
  try {
    response.body.cancel().catch(noop);
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
 * Both signals at once. `AbortSignal.any` (Node.js 20.3, all current browsers) ties the
 * combined signal's life to its sources; the fallback for older runtimes removes its listeners
 * when either source aborts.
 */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  // Stryker disable next-line StringLiteral: typeof never yields "", and the fallback behaves as AbortSignal.any.
  if (typeof any === 'function') return any.call(AbortSignal, [a, b]);
  const controller = new AbortController();
  const onA = (): void => {
    b.removeEventListener('abort', onB);
    controller.abort(a.reason);
  };
  const onB = (): void => {
    a.removeEventListener('abort', onA);
    controller.abort(b.reason);
  };
  if (a.aborted) controller.abort(a.reason);
  else if (b.aborted) controller.abort(b.reason);
  else {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: an abort event fires once; `once` only tidies.
    a.addEventListener('abort', onA, { once: true });
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: as above.
    b.addEventListener('abort', onB, { once: true });
  }
  return controller.signal;
}

/**
 * The signals behind each response's abort, held for as long as the response or its body can
 * still be read. On Node.js 20 `AbortSignal.any([attempt, caller])` registers with its sources
 * without an `abort` listener, so nothing keeps a caller's `AbortSignal.timeout(…)` alive once
 * `withRetry` has resolved: a collection frees it, its timer fires on nothing, and a body still
 * arriving from a server that stalls is never aborted (measured: 10 of 10 such reads hung with
 * a collection every 20 ms; plain `fetch`, whose listener keeps the timeout signal alive: 0).
 * Keyed weakly, so a response dropped frees its signals.
 */
const signalsOfResponse = new WeakMap<object, readonly AbortSignal[]>();
function pinSignals<T>(response: T, signals: readonly AbortSignal[]): T {
  if (typeof response === 'object' && response !== null) {
    signalsOfResponse.set(response, signals);
    let body: unknown;
    try {
      body = (response as { body?: unknown }).body;
    } catch {
      // A stand-in whose `body` getter throws: the response itself keeps the signals.
    }
    if (typeof body === 'object' && body !== null) signalsOfResponse.set(body, signals);
  }
  return response;
}

/** One attempt as a classifier sees it; the body text is read once, from a clone, on demand. */
class Result implements HttpResult {
  readonly method: string;
  readonly url: string;
  readonly attempt: number;
  readonly response: Response | undefined;
  readonly error: unknown;
  #text: Promise<string> | undefined;
  /** The error the body read failed with, if it did: an attempt failure, not a classifier bug. */
  readError: unknown;

  constructor(method: string, url: string, attempt: number, response: Response | undefined, error: unknown) {
    this.method = method;
    this.url = url;
    this.attempt = attempt;
    this.response = response;
    this.error = error;
  }

  text(): Promise<string> {
    if (this.response === undefined) return Promise.resolve('');
    this.#text ??= readTextPrefix(this.response).catch((error: unknown) => {
      this.readError = error;
      throw error;
    });
    return this.#text;
  }
}

/** Whether the request carries an `Idempotency-Key`; headers fetch would refuse count as none (fetch reports them). */
function hasIdempotencyKey(init: RequestInit | undefined, request: Request | undefined): boolean {
  try {
    return new Headers(init?.headers !== undefined ? init.headers : request?.headers).has('idempotency-key');
  } catch {
    return false;
  }
}

function verdictOf(value: unknown): HttpVerdict {
  if (value === true || value === 'retry') return 'retry';
  if (value === false || value === 'final') return 'final';
  if (value === 'throttled') return 'throttled';
  throw new TypeError(
    `withRetry(): \`retryOn\` returned ${show(value)}; expected 'retry', 'throttled', 'final' or a boolean.`,
  );
}

/**
 * Wraps `fetchImpl` (default: the global `fetch`) into a function with `fetch`'s signature that
 * retries failed attempts with ebb's executor, backing off by `options.backoff` (default
 * `defaultBackoff`, that is `presets.default`).
 *
 * **What is retried.** What `retryOn` (default {@link standard}) calls `'retry'` or
 * `'throttled'`: by default network failures, attempt timeouts, 408, 429, 500, 502, 503 and 504;
 * never another 4xx. Only for idempotent methods (`methods`), unless the request has an
 * `Idempotency-Key` header; a request that provably never left (connection refused, DNS
 * failure) is retried whatever its method.
 *
 * **Bodies.** A string, `ArrayBuffer`, typed array, `Blob`, `URLSearchParams` or `FormData`
 * body is sent again intact; a `Request` with a body is replayed from `request.clone()` (the
 * bytes stay in memory until the call settles). A `ReadableStream` body is never retried: it
 * is consumed as it is sent, and keeping a copy would hold an upload of unknown size in memory.
 *
 * **Responses.** A retried response's body is cancelled before the next attempt, so it holds no
 * connection. When the retries end — attempts used up, the time budget, a `Retry-After` longer
 * than `maxRetryAfterMs` (default 60 s), a budget's refusal — you get the **last response**, as
 * `fetch` would have returned it (a 503, say, unread); check `response.ok` as with `fetch`. When
 * the last attempt threw, the promise rejects with `RetryError` (`cause`: the last error). A
 * failure `retryOn` calls final reaches you unchanged.
 *
 * **Hints.** `Retry-After` (seconds or an HTTP-date) or an exhausted `RateLimit` policy's `t`
 * on a retried response becomes the error's `retryAfterMs`: the next wait is at least that long.
 * 429 and `'throttled'` verdicts set `throttled: true`, which a rate controller (`rate`) records
 * as `'throttled'`.
 *
 * **What the `rate` hook hears.** Every response is reported by what it says about the service,
 * whatever the method: one `retryOn` calls `'retry'` (a 503, a 500) is a `'failure'`, a 429 or a
 * `'throttled'` verdict is `'throttled'`, anything else a `'success'`; an error `fetch` threw (a
 * timeout, a reset) is a failure. So a circuit breaker opens, and a concurrency limit sees its
 * drops, in a write-only API's outage as in a read-only one's. Whether the request is *retried*
 * is a separate decision that keeps to idempotency: a POST answered 503 is reported as a failure
 * (`onFailedAttempt` with `next: 'final'`, then `onGiveUp` with reason `'final'`) and not
 * repeated, and you get its response, as `fetch` returned it.
 *
 * **Cancelling.** `init.signal` (or the `Request`'s signal) aborts everything: the running
 * attempt, a wait, and the body of the response you got. `attemptTimeoutMs` bounds each
 * attempt up to its response headers and the classifier's decision; reading the body of the
 * returned response is bounded by `init.signal` only. An aborted attempt's connection is closed
 * by `fetch` at once; Node's `fetch` then keeps one idle spare connection to the origin for its
 * 4 s keep-alive (bare `fetch` does the same). Pass your own `init.dispatcher` (an undici `Agent`
 * with a shorter `keepAliveTimeout`) to free it sooner: `init` reaches `fetchImpl` unchanged but
 * for its signal. See docs/http-notes.md for the measurements.
 *
 * Options are checked here, once: a bad one throws `TypeError`/`RangeError` naming it.
 *
 * @example
 * import { withRetry } from 'ebb/http';
 * const fetchRetrying = withRetry(fetch, { attemptTimeoutMs: 5_000 });
 * const res = await fetchRetrying('https://api.example.com/items', { signal: AbortSignal.timeout(30_000) });
 * if (!res.ok) throw new Error(`HTTP ${res.status}`);   // the last response, after the retries
 */
export function withRetry(fetchImpl: FetchLike = globalThis.fetch, options?: WithRetryOptions): FetchLike {
  // The default is read here, once: a fetch patched later (a test's mock) is not seen; pass it.
  const where = 'withRetry()';
  if (typeof fetchImpl !== 'function') {
    invalid(where, 'fetchImpl', fetchImpl, 'a function with the signature of fetch', 'Pass fetch, or leave it out.');
  }
  const o = optionsObject(where, options) as WithRetryOptions & Record<string, unknown>;
  if ('signal' in o) {
    throw new TypeError(`${where}: \`signal\` is per request: pass it as init.signal of each call.`);
  }
  for (const key of ['retryIf', 'isFailure']) {
    if (key in o) {
      throw new TypeError(`${where}: use \`retryOn\` (a classifier of responses and errors) instead of \`${key}\`.`);
    }
  }
  const { retryOn = standard, methods, onRetry, hedge, attemptTimeoutMs, rate, ...executorOptions } = o;
  // The executor's own checks (and its hints for options that moved), now rather than at the first request.
  const prepared = prepare(where, executorOptions, OWN_KEYS);
  if (hedge !== undefined && (typeof hedge !== 'object' || hedge === null || typeof hedge.run !== 'function')) {
    invalid(where, 'hedge', hedge, 'a hedging() from ebb/resilience', 'Such as hedging({ delayMs: 50 }).');
  }
  if (typeof retryOn !== 'function') {
    invalid(where, 'retryOn', retryOn, 'a classifier function', 'Use standard, aws, googleDrive or your own.');
  }
  if (retryOn.serverHintMs !== undefined && typeof retryOn.serverHintMs !== 'function') {
    invalid(where, 'retryOn.serverHintMs', retryOn.serverHintMs, 'a function (response) => ms or undefined');
  }
  if (onRetry !== undefined && typeof onRetry !== 'function') {
    invalid(where, 'onRetry', onRetry, 'a function (context) => void');
  }
  if (
    methods !== undefined &&
    (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !TOKEN.test(m)))
  ) {
    invalid(where, 'methods', methods, "an array of method names such as ['GET', 'PUT']");
  }
  if (
    attemptTimeoutMs !== undefined &&
    (typeof attemptTimeoutMs !== 'number' || !(attemptTimeoutMs > 0) || Number.isNaN(attemptTimeoutMs))
  ) {
    invalid(
      where,
      'attemptTimeoutMs',
      attemptTimeoutMs,
      'a number > 0 (or Infinity for no limit)',
      'For example 5000 for five seconds.',
    );
  }
  if (rate !== undefined && (typeof rate?.acquire !== 'function' || typeof rate.record !== 'function')) {
    invalid(where, 'rate', rate, 'a guard { acquire(), record() }');
  }
  const allowed = new Set((methods ?? IDEMPOTENT_METHODS).map((m) => m.toUpperCase()));
  // Each attempt passes the guard, then the attempt timeout: made once, shared by every request.
  const inner: Mechanism[] = [];
  if (rate !== undefined) inner.push(guard(rate));
  if (attemptTimeoutMs !== undefined && attemptTimeoutMs !== Infinity) {
    // On the caller's clock, or on the host queue (with `unref`, the one that does not hold the process).
    inner.push(timeoutOn(attemptTimeoutMs, prepared.clock, prepared.unref === true));
  }
  // As a pipeline runs its mechanisms: `next` never throws (a mechanism holding a ticket or a
  // timer must see a rejection, not a throw past it).
  const through = (
    i: number,
    context: AttemptContext,
    last: (context: AttemptContext) => Promise<Response>,
  ): Promise<Response> => {
    try {
      return i === inner.length
        ? last(context)
        : (inner[i] as Mechanism).execute((c) => through(i + 1, c, last), context);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  return function fetchWithRetry(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
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
    // What the classifier itself threw while judging a response: its own bug, not a failed
    // attempt, so it reaches the caller unchanged. A Set, not a WeakSet: a thrown string or
    // null must be recognized too.
    let classifierErrors: Set<unknown> | undefined;

    const judge = async (response: Response, attempt: number): Promise<Response> => {
      const result = new Result(method, url, attempt, response, undefined);
      let verdict: HttpVerdict;
      try {
        const answer = retryOn(result);
        verdict = verdictOf(isThenable(answer) ? await answer : answer);
      } catch (error) {
        discard(response);
        // A body that failed mid-read is an attempt failure (classified as such); anything else
        // thrown is the classifier's own error, and reaches the caller unchanged.
        if (error !== result.readError) {
          classifierErrors ??= new Set();
          classifierErrors.add(error);
        }
        throw error;
      }
      if (verdict === 'final') return response;
      const throttled = verdict === 'throttled' || response.status === 429;
      let hint: number | undefined;
      try {
        hint = retryOn.serverHintMs ? retryOn.serverHintMs(response) : serverHintMs(response);
      } catch (error) {
        // The classifier's own hint reader failed: its bug, as if retryOn had thrown.
        discard(response);
        classifierErrors ??= new Set();
        classifierErrors.add(error);
        throw error;
      }
      const error = new HttpStatusError(response, method, url, hint, throttled);
      // Reported to the rate hook either way; retried only when the request may be repeated.
      (judgesResponses ? retryable : reported).add(error);
      throw error;
    };

    const send = (signal: AbortSignal, attempt: number): Promise<Response> => {
      const attemptInput = cloneRequest ? (request as Request).clone() : input;
      const pending = fetchImpl(attemptInput, init === undefined ? { signal } : { ...init, signal });
      if (!isThenable<Response>(pending)) {
        throw new TypeError(`${where}: \`fetchImpl\` returned ${show(pending)}; expected a promise of a Response.`);
      }
      const signals = callerSignal === undefined ? [signal] : [signal, callerSignal];
      // Every response is judged, so that the rate hook hears what it says about the service;
      // only one of a request that may be repeated can be retried (judge decides).
      return pending.then((response) => judge(pinSignals(response, signals), attempt));
    };
    const attempt = (context: AttemptContext): Promise<Response> => {
      const signal = callerSignal === undefined ? context.signal : anySignal(context.signal, callerSignal);
      // Hedged: each copy is sent and judged on its own signal, which hedging aborts for the losers.
      return hedged
        ? (hedge as Hedging).run((copy) => send(copy.signal, context.attempt), { signal, method })
        : send(signal, context.attempt);
    };
    const operation = (context: AttemptContext): Promise<Response> => through(0, context, attempt);

    // A response the classifier let through is the result; a failure of the attempt (a retried
    // response, made an HttpStatusError by `judge`, or a thrown error) is asked about below.
    const isFailure = (outcome: Outcome, context: AttemptContext): boolean | Promise<boolean> => {
      if (outcome.ok) return false;
      const error = outcome.error;
      // WeakSet.has is false for a primitive (ECMA-262 §24.4.3.4), no check needed.
      if (retryable.has(error as object)) return true;
      if (reported.has(error as object) || classifierErrors?.has(error)) return false;
      if (!replayable || !(idempotent || isNotSentError(error))) return false;
      const answer = retryOn(new Result(method, url, context.attempt, undefined, error));
      return isThenable(answer)
        ? Promise.resolve(answer).then((v) => verdictOf(v) !== 'final')
        : verdictOf(answer) !== 'final';
    };

    const hook = (context: RetryContext): void | PromiseLike<void> => {
      const error = context.error;
      const response = retryable.has(error as object) ? (error as HttpStatusError).response : undefined;
      if (response !== undefined) discard(response);
      if (onRetry === undefined) return;
      return onRetry(
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

    const o: Prepared = { ...prepared, full: true, isFailure, onRetry: hook, Context: Scope };
    return execute(operation, o, callerSignal).catch((error: unknown) => {
      // A failed response of a request that may not be repeated: that response is the answer.
      if (reported.has(error as object)) return (error as HttpStatusError).response;
      // Giving up after a retried response: that response is the answer, as fetch gives it.
      const cause = isRetryError(error) ? prop(error, 'cause') : undefined;
      if (retryable.has(cause as object)) return (cause as HttpStatusError).response;
      throw error;
    });
  };
}
