import { mistyped, optionsObject } from '../core/validate.js';
import { isReplayableBody } from '../http/body.js';
import { isNotSentError } from '../http/network-error.js';
import { type HttpPredicate, standard } from '../http/predicates.js';
import { serverHintMs } from '../http/server-hint.js';
import { HttpStatusError } from '../http/status-error.js';
import type { AttemptContext } from '../retry/contexts.js';
import { type FailureVerdict, isRetryError, prop, type Result } from '../retry/errors.js';
import { innerAt, type Mechanism } from '../retry/mechanism.js';
import { type Pipeline, pipeline } from '../retry/pipeline.js';
import { RETRYING_KEYS, type RetryingOptions, retryingAs } from '../retry/retrying.js';

/**
 * Options of the client integrations (`retryInterceptor` for undici, `withRetryAxios`,
 * `withRetryKy`, `withRetryGot`): those of `retrying()` — `backoff`, `maxRetryAfterMs`, `budget`
 * (default: one of its own per integration, kind to a struggling service), the hooks, `clock`,
 * `random`, `unref` — and the HTTP side below. Durations are in milliseconds.
 */
export interface ClientRetryOptions extends Omit<RetryingOptions<unknown>, 'isFailure'> {
  /**
   * What counts as a failure, asked about each response as a `Response` with its status and
   * headers (no body) and about each error the client threw. Default `standard` from `ebb/http`:
   * network failures, 408, 429 (throttled), 500, 502, 503, 504.
   */
  readonly isFailure?: HttpPredicate;
  /**
   * Methods that may be repeated (compared upper-case). Default: RFC 9110 §9.2.2's idempotent
   * methods — GET, HEAD, OPTIONS, TRACE, PUT, DELETE. Another method is repeated only with an
   * `Idempotency-Key` header, or when the failure proves the request never left (connection
   * refused, DNS failure).
   */
  readonly methods?: readonly string[];
  /**
   * Mechanisms every attempt passes, inside the retry (a pipeline's inner part): a
   * `circuitBreaker()`, a `concurrencyLimit()`, a rate controller of `ebb/rate`, `timeout(ms)`.
   * They hear a failed response as an `HttpStatusError`. An open breaker's refusal reaches the
   * caller at once, and no request leaves. Made once, shared by every request. Default none.
   */
  readonly use?: readonly Mechanism[];
}

/** One request, as the integrations describe it to {@link HttpCaller.call}. @internal */
export interface CallRequest {
  /** Upper-case. */
  readonly method: string;
  readonly url: string;
  readonly hasIdempotencyKey: boolean;
  /** The request body as the client holds it (undefined or null: none). */
  readonly body: unknown;
  readonly signal?: AbortSignal | undefined;
}

/** A response as an integration sees it: the status and headers it judges by. @internal */
export interface ResponseHead {
  readonly status: number;
  readonly statusText?: string | undefined;
  /** Header names and values; an array value is one header sent several times. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** Runs one request through the retry and the mechanisms of `use`. @internal */
export interface HttpCaller {
  /**
   * Calls `send` once per attempt. `head` tells, for what `send` resolved with or threw, the
   * response it carries (or undefined: a network error). When the retries end on a failed
   * response, that attempt's own outcome is the result: its value, or its error rethrown.
   * When they end on an error, that error (the cause of ebb's `RetryError`) is thrown.
   * `onDiscard` is told about each failed outcome that is retried, to free its connection.
   */
  call<T>(
    request: CallRequest,
    send: (context: AttemptContext) => Promise<T>,
    head: (outcome: Result<T>) => ResponseHead | undefined,
    onDiscard?: (outcome: Result<T>) => void,
  ): Promise<T>;
}

/** RFC 9110 §9.2.2: "PUT, DELETE, and safe request methods are idempotent." */
const IDEMPOTENT_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A `Response` with no body from a head, for the predicates and hint readers of `ebb/http`. */
function toResponse(head: ResponseHead): Response | undefined {
  // The Response constructor takes 200–599 only (Fetch standard); anything else is no failure here.
  if (!(head.status >= 200 && head.status <= 599)) return undefined;
  try {
    const headers = new Headers();
    for (const name of Object.keys(head.headers)) {
      const value = head.headers[name];
      if (value === undefined) continue;
      if (typeof value === 'string') headers.append(name, value);
      else for (const v of value) headers.append(name, v);
    }
    return new Response(null, { status: head.status, statusText: head.statusText ?? '', headers });
  } catch {
    // A header a Headers refuses (a value out of Latin-1): judged by status alone.
    return new Response(null, { status: head.status });
  }
}

/** The options an adapter takes, as its message for an unknown one lists them. */
const CLIENT_KEYS: readonly string[] = [...RETRYING_KEYS, 'methods', 'use'];

/** The outcome behind an error this module made for a failed response. */
const held = new WeakMap<object, Result<unknown>>();

/**
 * The shared core of the client integrations: the options checked once, two pipelines made once
 * (one for requests that may be repeated, one for those that may not), and the rules of
 * `withRetry` (idempotency, replayable bodies, the last response when the retries end). @internal
 */
export function httpCaller(where: string, options: ClientRetryOptions | undefined): HttpCaller {
  const o = optionsObject(where, options) as ClientRetryOptions & Record<string, unknown>;
  if ('signal' in o) throw new TypeError(`${where}: \`signal\` is per request: pass it with each request.`);
  const { isFailure = standard, methods, use, ...retryOptions } = o;
  if (typeof isFailure !== 'function') {
    mistyped(where, 'isFailure', isFailure, 'a function (outcome, context)', 'Such as standard from ebb/http.');
  }
  if (
    methods !== undefined &&
    (!Array.isArray(methods) || methods.some((m) => typeof m !== 'string' || !TOKEN.test(m)))
  ) {
    mistyped(where, 'methods', methods, "an array of method names such as ['GET', 'PUT']");
  }
  if (use !== undefined && !Array.isArray(use)) mistyped(where, 'use', use, 'an array of mechanisms');
  const inner: Mechanism[] = (use ?? []).map((m: unknown, i: number) => innerAt(where, `use[${i}]`, m));
  const allowed = new Set((methods ?? IDEMPOTENT_METHODS).map((m) => m.toUpperCase()));
  const hint = isFailure.serverHintMs ?? serverHintMs;

  // An error made here for a failed response is a failure (throttled when it says so); anything
  // else thrown by an attempt is asked of `isFailure` (a reset: retried; a breaker's refusal: not).
  const repeatable = (outcome: Result, context: AttemptContext): FailureVerdict | Promise<FailureVerdict> => {
    if (outcome.ok) return false;
    if (held.has(outcome.error as object)) return (outcome.error as HttpStatusError).throttled ? 'throttled' : true;
    return isFailure(outcome, context);
  };
  // A request that may not be repeated is retried only when it never left.
  const once = (outcome: Result): boolean => !outcome.ok && isNotSentError(outcome.error);
  const retried: Pipeline = pipeline([
    retryingAs(where, { ...retryOptions, isFailure: repeatable }, CLIENT_KEYS),
    ...inner,
  ]);
  const single: Pipeline = pipeline([retryingAs(where, { ...retryOptions, isFailure: once }, CLIENT_KEYS), ...inner]);
  // A stream body is read as it is sent: nothing is left to send again, so no retry at all.
  const bare: Pipeline = pipeline([...inner]);

  return {
    call<T>(
      request: CallRequest,
      send: (context: AttemptContext) => Promise<T>,
      head: (outcome: Result<T>) => ResponseHead | undefined,
      onDiscard?: (outcome: Result<T>) => void,
    ): Promise<T> {
      const replayable = isReplayableBody(request.body ?? null);
      const idempotent = allowed.has(request.method) || request.hasIdempotencyKey;
      let last: Result<T> | undefined;
      const attempt = async (context: AttemptContext): Promise<T> => {
        if (last !== undefined && onDiscard !== undefined) onDiscard(last);
        last = undefined;
        let outcome: Result<T>;
        try {
          outcome = { ok: true, value: await send(context) };
        } catch (error) {
          outcome = { ok: false, error };
        }
        const h = head(outcome);
        const response = h === undefined ? undefined : toResponse(h);
        if (response !== undefined) {
          const verdict = await isFailure({ ok: true, value: response }, context);
          if (verdict !== false) {
            const error = new HttpStatusError(
              response,
              request.method,
              request.url,
              hint(response),
              verdict === 'throttled' || response.status === 429,
            );
            held.set(error, outcome);
            last = outcome;
            throw error;
          }
        }
        if (outcome.ok) return outcome.value;
        throw outcome.error;
      };
      const through = !replayable ? bare : idempotent ? retried : single;
      return through.execute(attempt, { signal: request.signal }).catch((error: unknown) => {
        const cause = isRetryError(error) ? prop(error, 'cause') : error;
        const outcome = held.get(cause as object) as Result<T> | undefined;
        if (outcome !== undefined) {
          if (outcome.ok) return outcome.value;
          throw outcome.error;
        }
        // Ended otherwise (an abort, a hook's throw) while a failed response was held: free it.
        if (last !== undefined && onDiscard !== undefined) onDiscard(last);
        throw cause;
      });
    },
  };
}
