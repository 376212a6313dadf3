// The floor of ebb's typical import: the smallest retry executor and exponential full-jitter
// policy that keep the asks counted as non-negotiable, and each further ask behind a build-time
// flag. Not shipped, not exported by the package: bench/figures/floor.mjs bundles it (esbuild
// `define` turns every `ASK_*` below into `true` or `false`, and the minifier drops what is
// off) to weigh the asks one by one; test/bench/floor-retry.test.ts runs it.
//
// Always kept (the floor): abort cuts every wait and starts nothing after it; `isFailure`
// judges thrown errors and returned values (`{ ok, value } | { ok: false, error }`), its
// answer checked; a value judged a failure at the end is returned as it is, an error ends in a
// `RetryError` (`reason`, `attempts`, `cause`); a `FinalError` (`stop(error)`) ends the run at
// once, recognised by its brand across copies; every wait a policy's `next()` returns is checked
// before it reaches a timer; finite by default (5 attempts); full jitter by default; options
// checked with short messages (the option and the value, as ebb's production build).
//
// The asks, one flag each (bench/floor/asks.mjs names them):
//   ASK_PRINTING  the policy prints: toString, toJSON, Node's inspect, durations in readable units
//   ASK_UNKNOWN   unknown options refused (retry() and exponential())
//   ASK_MESSAGES  full messages: the option, the value, what it must be and the fix (the dev build)
//   ASK_RULE      default isFailure: a bug in the caller's code (TypeError …) is no failure,
//                 except a failed fetch (told by its message in each runtime)
//   ASK_HINTS     server hints: `retryAfterMs` on an error, `maxRetryAfterMs`, `throttled`
//   ASK_BUDGET    a retry budget hook (`tryAcquireRetry`, `recordSuccess`, `recordFailure`)
//   ASK_HOOKS     onFailedAttempt, onRetry, onGiveUp, onSuccess (awaited)
//   ASK_CLOCK     `clock` (checked readings and sleep), `random` (checked draws), `unref`
//   ASK_ELAPSED   a time budget (`maxElapsedMs` on the policy), `elapsedMs` in contexts and errors
//   ASK_QUEUE     the run as one object that waits on a timer holding it (no async frame and
//                 no closure per waiting retry), and abort rejects at once during an attempt
//   ASK_LAZY      no clock reading on the success path unless something reads elapsed time
//   ASK_FAST      the success path: attempt 1 as the operation's promise and one reaction
//   ASK_GUARD     every property of a thrown value read inside a try (a throwing getter or a
//                 revoked proxy reads as absent, not as the call's error)
/* global ASK_PRINTING, ASK_UNKNOWN, ASK_MESSAGES, ASK_RULE, ASK_HINTS, ASK_BUDGET, ASK_HOOKS, ASK_CLOCK, ASK_ELAPSED, ASK_QUEUE, ASK_LAZY, ASK_FAST, ASK_GUARD */

/** The brand ebb's errors carry (the same key as core/boundary.ts), so other copies recognise them. */
const BRAND = Symbol.for('ebb.error.code');
/** setTimeout's longest delay; longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;

// ---- messages -------------------------------------------------------------------------------

/** `value instanceof C`, false where asking throws (a revoked proxy): `ASK_GUARD`. */
const guardedIsA = (value, C) => {
  try {
    return value instanceof C;
  } catch {
    return false;
  }
};

/** A property of a thrown value, read so that nothing it does escapes (`ASK_GUARD`). */
const guarded = (value, key) => {
  try {
    return value?.[key];
  } catch {
    return undefined;
  }
};

/** A user's value in a message, never calling into it. */
const show = (v) =>
  typeof v === 'string'
    ? JSON.stringify(v)
    : typeof v === 'function'
      ? 'a function'
      : v && typeof v === 'object'
        ? 'an object'
        : String(v);

/** The error for a bad value: a RangeError for a number (unless `Type` says), else a TypeError. */
const bad = (where, name, value, expected, fix, Type = typeof value === 'number' ? RangeError : TypeError) =>
  new Type(
    ASK_MESSAGES
      ? `${where}: expected \`${name}\` to be ${expected}, got ${show(value)}.${fix ? ` ${fix}` : ''}`
      : `${where}: \`${name}\` ${show(value)}`,
  );

/** Refuses keys of `options` not in `known`, with a hint for the names other libraries use. */
const checkKeys = (where, options, known) => {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw bad(
        where,
        key,
        options[key],
        ASK_MESSAGES && `one of ${known.join(', ')}`,
        ASK_MESSAGES &&
          {
            maxAttempts: 'Pass backoff: exponential({ maxAttempts }).',
            retries: 'Pass backoff: exponential({ maxAttempts: retries + 1 }).',
            retryIf: 'Use isFailure.',
          }[key],
        TypeError,
      );
    }
  }
};

// ---- the policy -----------------------------------------------------------------------------

/** Full jitter: a draw uniform in [0, cap) (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
export const fullJitter = { name: 'full', draw: (cap, random) => random() * cap };
/** No jitter: the cap itself. */
export const noJitter = { name: 'none', draw: (cap) => cap };

/** exponential()'s numeric options: [name, default, least value]. */
const CURVE = [
  ['initialDelayMs', 100, 0],
  ['factor', 2, 1],
  ['maxDelayMs', 20_000, 0],
  ['maxAttempts', 5, 1],
];
if (ASK_ELAPSED) CURVE.push(['maxElapsedMs', Infinity, 0]);

const UNITS = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
  [1, 'ms'],
];
/** A duration as a person reads it: three significant digits in the largest unit >= 1. */
export const formatMs = (ms) => {
  const [size, unit] = UNITS.find(([size]) => Math.abs(ms) >= size) ?? [1, 'ms'];
  return `${+(ms / size).toPrecision(3)} ${unit}`;
};

const policy = {
  /** A run: `next()` gives the wait after the next failed attempt, or -1 to stop. */
  start(random = Math.random) {
    let failed = 0;
    return {
      next: () =>
        ++failed >= this.maxAttempts
          ? -1
          : this.jitter.draw(Math.min(this.maxDelayMs, this.initialDelayMs * this.factor ** (failed - 1)), random),
    };
  },
};
if (ASK_PRINTING) {
  policy.toString = function () {
    return `exponential ${formatMs(this.initialDelayMs)} ×${this.factor}, ${formatMs(this.maxDelayMs)} cap, ${this.jitter.name} jitter, ${this.maxAttempts} attempts${ASK_ELAPSED && this.maxElapsedMs < Infinity ? `, ${formatMs(this.maxElapsedMs)} in all` : ''}`;
  };
  policy.toJSON = function () {
    const json = { type: 'exponential' };
    for (const [name] of CURVE) json[name] = this[name];
    json.jitter = this.jitter.name;
    return json;
  };
  policy[Symbol.for('nodejs.util.inspect.custom')] = function () {
    return this.toString();
  };
}

/** An exponential policy: `initialDelayMs × factor^(n-1)`, capped at `maxDelayMs`, full jitter, 5 attempts by default. */
export function exponential(options = {}) {
  const p = Object.create(policy);
  if (ASK_UNKNOWN) checkKeys('exponential()', options, [...CURVE.map(([name]) => name), 'jitter']);
  for (const [name, fallback, least] of CURVE) {
    const value = options[name] ?? fallback;
    if (typeof value !== 'number' || !(value >= least))
      throw bad('exponential()', name, value, ASK_MESSAGES && `a number >= ${least}`);
    p[name] = value;
  }
  p.jitter = options.jitter ?? fullJitter;
  if (typeof p.jitter?.draw !== 'function')
    throw bad(
      'exponential()',
      'jitter',
      p.jitter,
      ASK_MESSAGES && 'a jitter value',
      ASK_MESSAGES && 'Import fullJitter.',
    );
  return Object.freeze(p);
}

// ---- errors ---------------------------------------------------------------------------------

/** The executor gave up: `reason`, `attempts` made, `cause` the last error. */
export class RetryError extends Error {
  constructor(reason, attempts, elapsedMs, cause) {
    super(
      ASK_MESSAGES
        ? `Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${reason}). Last error: ${(ASK_GUARD ? guardedIsA(cause, Error) : cause instanceof Error) ? (ASK_GUARD ? guarded(cause, 'message') : cause.message) : show(cause)}`
        : `gave up (${reason}) after attempt ${attempts}`,
      { cause },
    );
    this.name = 'RetryError';
    this.code = 'EBB_RETRY_GAVE_UP';
    this.reason = reason;
    this.attempts = attempts;
    if (ASK_ELAPSED) this.elapsedMs = elapsedMs;
    this[BRAND] = this.code;
  }
}

/** Ends the run at once, whatever isFailure says: the caller receives `cause`. */
export class FinalError extends Error {
  constructor(error) {
    super('final', { cause: error });
    this.name = 'FinalError';
    this.code = 'EBB_FINAL';
    // An own property, not a getter with a computed key: esbuild keeps a class with one even unused.
    this[BRAND] = this.code;
  }
}
/** `throw stop(error)`: the same as `throw new FinalError(error)`. */
export const stop = (error) => new FinalError(error);

/** A thrown fetch's messages, by runtime (Node.js, Chrome, Firefox, Safari, React Native). */
const FETCH_FAILED = [
  'fetch failed',
  'terminated',
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'The Internet connection appears to be offline.',
  'Load failed',
  'Network request failed',
];

/** Whether a TypeError's message is one a failed fetch gives. */
const isFetchFailed = (message) =>
  FETCH_FAILED.includes(message) || (typeof message === 'string' && message.startsWith('error sending request'));

/** What counts as a failure by default: every error but an abort; never a value. */
export function defaultIsFailure(outcome) {
  if (outcome.ok) return false;
  const error = outcome.error;
  if ((ASK_GUARD ? guarded(error, 'name') : error?.name) === 'AbortError') return false;
  if (
    ASK_RULE &&
    (ASK_GUARD
      ? guardedIsA(error, TypeError)
        ? !isFetchFailed(guarded(error, 'message'))
        : guardedIsA(error, ReferenceError) || guardedIsA(error, SyntaxError) || guardedIsA(error, RangeError)
      : error instanceof TypeError
        ? !isFetchFailed(error.message)
        : error instanceof ReferenceError || error instanceof SyntaxError || error instanceof RangeError)
  )
    return false;
  return ASK_HINTS && (ASK_GUARD ? guarded(error, 'throttled') : error?.throttled) === true ? 'throttled' : true;
}

// ---- the executor ---------------------------------------------------------------------------

/** retry()'s options and what each must be: a method name (an object with it), 'f' a function, 'ms', 'b' a boolean. */
const SPEC = { backoff: 'start', isFailure: 'f', signal: 'addEventListener' };
if (ASK_HINTS) SPEC.maxRetryAfterMs = 'ms';
if (ASK_BUDGET) SPEC.budget = 'tryAcquireRetry';
if (ASK_HOOKS) SPEC.onFailedAttempt = SPEC.onRetry = SPEC.onGiveUp = SPEC.onSuccess = 'f';
if (ASK_CLOCK) {
  SPEC.clock = 'sleep';
  SPEC.random = 'f';
  SPEC.unref = 'b';
}

const defaultBackoff = /* @__PURE__ */ exponential();

/** A clock reading, checked: a finite number that never goes back. */
const now = (s) => {
  const t = ASK_CLOCK && s.o.clock ? s.o.clock.now() : performance.now();
  if (ASK_CLOCK && (typeof t !== 'number' || !(t >= (s.t ?? -Infinity) && t < Infinity)))
    throw bad('clock', 'now()', t, ASK_MESSAGES && 'a finite number of milliseconds that never decreases');
  if (ASK_CLOCK) s.t = t;
  return t;
};

/** The policy's run for one call, started at its first failure (a success starts none). */
const startRun = (s) => {
  const o = s.o;
  const run = s.backoff.start(
    ASK_CLOCK && o.random
      ? () => {
          const r = o.random();
          if (typeof r !== 'number' || !(r >= 0 && r < 1))
            throw bad('retry()', 'random()', r, ASK_MESSAGES && 'a number in [0, 1)');
          return r;
        }
      : undefined,
  );
  if (typeof run?.next !== 'function') throw bad('backoff', 'start()', run, ASK_MESSAGES && 'a run { next() }');
  return run;
};

/** Checks the options and makes the state of one call. */
function prepare(op, options) {
  if (typeof op !== 'function') throw bad('retry()', 'operation', op, ASK_MESSAGES && 'a function');
  const o = options ?? {};
  // A call without options has nothing to check (with ASK_FAST: the success path's speed).
  if (ASK_UNKNOWN && (!ASK_FAST || options)) checkKeys('retry()', o, Object.keys(SPEC));
  if (!ASK_FAST || options)
    for (const name in SPEC) {
      const value = o[name];
      const kind = SPEC[name];
      if (
        value !== undefined &&
        (kind === 'f'
          ? typeof value !== 'function'
          : kind === 'ms'
            ? typeof value !== 'number' || !(value >= 0)
            : kind === 'b'
              ? typeof value !== 'boolean'
              : typeof value?.[kind] !== 'function')
      )
        throw bad(
          'retry()',
          name,
          value,
          ASK_MESSAGES &&
            (kind === 'f'
              ? 'a function'
              : kind === 'ms'
                ? 'milliseconds >= 0'
                : kind === 'b'
                  ? 'a boolean'
                  : `an object with ${kind}()`),
          ASK_MESSAGES && name === 'backoff' && 'Build one with exponential().',
        );
    }
  const backoff = o.backoff ?? defaultBackoff;
  const s = { op, o, backoff, attempt: 0, signal: o.signal, isFailure: o.isFailure ?? defaultIsFailure };
  if (ASK_ELAPSED) {
    const max = backoff.maxElapsedMs ?? Infinity;
    if (typeof max !== 'number' || !(max >= 0))
      throw bad('backoff', 'maxElapsedMs', max, ASK_MESSAGES && 'milliseconds >= 0');
    s.max = max;
    s.start =
      ASK_LAZY &&
      max === Infinity &&
      !(ASK_CLOCK && o.clock) &&
      !(ASK_HOOKS && (o.onFailedAttempt || o.onRetry || o.onGiveUp || o.onSuccess))
        ? Number.NaN
        : now(s);
  }
  return s;
}

/** One attempt's context: its number, the caller's signal, and the time since the start. */
const contextOf = (s) =>
  ASK_ELAPSED
    ? { attempt: s.attempt, signal: s.signal, elapsedMs: ASK_LAZY && Number.isNaN(s.start) ? 0 : now(s) - s.start }
    : { attempt: s.attempt, signal: s.signal };

/** Calls a hook of the options, if set, and awaits it (a hook not set costs no await). */
const hook = (s, name, context) => {
  const f = s.o[name];
  return f?.(context);
};

/**
 * After an attempt: the wait before the next one (a finite number >= 0), or `{ value }` to
 * resolve with; throws what to reject with.
 */
async function afterAttempt(s, outcome, context) {
  const error = outcome.error;
  if (!outcome.ok && (ASK_GUARD ? guarded(error, BRAND) : error?.[BRAND]) === 'EBB_FINAL') {
    const cause = ASK_GUARD ? guarded(error, 'cause') : error.cause;
    if (ASK_HOOKS && s.o.onGiveUp) await hook(s, 'onGiveUp', { ...context, error: cause, reason: 'final' });
    throw cause;
  }
  const verdict = await s.isFailure(outcome, context);
  if (verdict !== true && verdict !== false && verdict !== 'throttled')
    throw bad('retry()', 'isFailure() answer', verdict, ASK_MESSAGES && "true, false or 'throttled'");
  if (!verdict) {
    if (ASK_BUDGET) s.o.budget?.recordSuccess();
    if (!outcome.ok) throw error;
    if (ASK_HOOKS && s.o.onSuccess) await hook(s, 'onSuccess', { ...context, value: outcome.value });
    return outcome;
  }
  if (ASK_BUDGET) s.o.budget?.recordFailure?.(error);
  if (ASK_LAZY && Number.isNaN(s.start)) s.start = now(s);
  const elapsedMs = ASK_ELAPSED ? now(s) - s.start : 0;
  s.run ??= startRun(s);
  let delay = s.run.next(elapsedMs, error);
  let reason;
  if (delay === -1) reason = 'attempts';
  else {
    if (typeof delay !== 'number' || !(delay >= 0 && delay < Infinity))
      throw bad('backoff', 'next()', delay, ASK_MESSAGES && 'a finite number of milliseconds >= 0, or -1 to stop');
    if (ASK_HINTS) {
      const hint = ASK_GUARD ? guarded(error, 'retryAfterMs') : error?.retryAfterMs;
      if (typeof hint === 'number' && hint >= 0) {
        if (!(hint <= (s.o.maxRetryAfterMs ?? 60_000) && hint < Infinity)) reason = 'retry-after';
        else if (hint > delay) delay = hint;
      }
    }
    if (ASK_ELAPSED && !reason && elapsedMs + delay > s.max) reason = 'elapsed';
    if (ASK_BUDGET && !reason && s.o.budget) {
      const yes = s.o.budget.tryAcquireRetry(error);
      if (typeof yes !== 'boolean') throw bad('budget', 'tryAcquireRetry()', yes, ASK_MESSAGES && 'a boolean');
      if (!yes) reason = 'budget';
    }
  }
  if (ASK_HOOKS) {
    const about = {
      ...context,
      elapsedMs,
      ...outcome,
      delayMs: reason ? 0 : delay,
      reason,
      next: reason ? 'give-up' : 'retry',
    };
    if (s.o.onFailedAttempt) await hook(s, 'onFailedAttempt', about);
    const then = reason ? 'onGiveUp' : 'onRetry';
    if (s.o[then]) await hook(s, then, about);
  }
  if (!reason) return delay;
  if (outcome.ok) return outcome;
  throw new RetryError(reason, s.attempt, elapsedMs, error);
}

/** Sleeps `ms` (re-arming past setTimeout's limit), rejecting with the signal's reason on abort. */
const sleep = (s, ms) => {
  const signal = s.signal;
  if (ASK_CLOCK && s.o.clock) {
    const slept = s.o.clock.sleep(ms, signal);
    if (typeof slept?.then !== 'function') throw bad('clock', 'sleep()', slept, ASK_MESSAGES && 'a promise');
    return slept;
  }
  return new Promise((resolve, reject) => {
    let timer;
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const arm = () => {
      const step = ms < MAX_TIMER_MS ? ms : MAX_TIMER_MS;
      ms -= step;
      timer = setTimeout(() => {
        if (ms > 0) arm();
        else {
          signal?.removeEventListener('abort', abort);
          resolve();
        }
      }, step);
      if (ASK_CLOCK && s.o.unref) timer.unref?.();
    };
    arm();
    signal?.addEventListener('abort', abort);
  });
};

/**
 * The run as an async loop: p-retry's shape, one suspended frame per waiting retry. `outcome`:
 * attempt 1's, when the success path made it.
 */
async function loop(s, outcome, context) {
  const signal = s.signal;
  for (;;) {
    if (!ASK_FAST || !outcome) {
      if (signal?.aborted) throw signal.reason;
      s.attempt++;
      context = contextOf(s);
      try {
        outcome = { ok: true, value: await s.op(context) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      if (signal?.aborted) throw signal.reason;
    }
    const next = await afterAttempt(s, outcome, context);
    if (typeof next !== 'number') return next.value;
    outcome = undefined;
    // An abort while isFailure or a hook ran: no wait starts.
    if (signal?.aborted) throw signal.reason;
    await sleep(s, next);
  }
}

/** Wakes a waiting execution (one function for all: no closure per wait). */
const wake = (x) => (x.left > 0 ? x.wait(x.left) : x.go());

/** The run as one object: waiting, it is held by its timer alone; abort ends it at once. */
class Execution {
  constructor(s, resolve, reject, outcome, context) {
    this.s = s;
    this.y = resolve;
    this.n = reject;
    s.signal?.addEventListener('abort', this);
    if (outcome) this.judge(outcome, context);
    else this.go();
  }
  handleEvent() {
    this.end(this.s.signal.reason, true);
  }
  end(result, failed) {
    const s = this.s;
    if (!s) return;
    this.s = undefined;
    clearTimeout(this.t);
    s.signal?.removeEventListener('abort', this);
    (failed ? this.n : this.y)(result);
  }
  go() {
    const s = this.s;
    if (!s) return;
    s.attempt++;
    const context = contextOf(s);
    new Promise((resolve) => resolve(s.op(context))).then(
      (value) => this.judge({ ok: true, value }, context),
      (error) => this.judge({ ok: false, error }, context),
    );
  }
  async judge(outcome, context) {
    if (!this.s) return;
    try {
      const next = await afterAttempt(this.s, outcome, context);
      if (typeof next !== 'number') this.end(next.value);
      else if (this.s) {
        if (ASK_CLOCK && this.s.o.clock)
          sleep(this.s, next).then(
            () => this.go(),
            (e) => this.end(e, true),
          );
        else this.wait(next);
      }
    } catch (error) {
      this.end(error, true);
    }
  }
  wait(ms) {
    const step = ms < MAX_TIMER_MS ? ms : MAX_TIMER_MS;
    this.left = ms - step;
    this.t = setTimeout(wake, step, this);
    if (ASK_CLOCK && this.s.o.unref) this.t.unref?.();
  }
}

/** Runs the call from attempt 1, or from attempt 1's `outcome`, as a loop or as one object (`ASK_QUEUE`). */
const run = (s, outcome, context) =>
  ASK_QUEUE
    ? new Promise((resolve, reject) => new Execution(s, resolve, reject, outcome, context))
    : loop(s, outcome, context);

/**
 * Calls `op` until it succeeds or the policy stops: resolves with its value (or with the last
 * value judged a failure), rejects with a `RetryError`, an error that is no failure, a
 * `FinalError`'s cause, or the signal's reason.
 */
export function retry(op, options) {
  if (!ASK_FAST && !ASK_QUEUE) return (async () => loop(prepare(op, options)))();
  try {
    const s = prepare(op, options);
    if (s.signal?.aborted) throw s.signal.reason;
    // The success path (`ASK_FAST`): when nothing judges a value or must see a success, attempt 1
    // is the operation's own promise and one reaction that takes over on a failure.
    if (ASK_FAST && !(s.signal || s.o.isFailure || (ASK_HOOKS && s.o.onSuccess) || (ASK_BUDGET && s.o.budget))) {
      s.attempt = 1;
      const context = contextOf(s);
      let result;
      try {
        result = op(context);
      } catch (error) {
        return run(s, { ok: false, error }, context);
      }
      return (result instanceof Promise ? result : Promise.resolve(result)).then(undefined, (error) =>
        run(s, { ok: false, error }, context),
      );
    }
    return run(s);
  } catch (error) {
    return Promise.reject(error);
  }
}
