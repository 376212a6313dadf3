import { describe } from '../core/boundary.js';
import type { Random } from '../core/random.js';
import { optionsObject } from '../core/validate.js';
import {
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  adaptiveThrottle,
  LocalThrottleError,
} from '../rate/adaptive-throttle.js';
import type { AttemptContext } from '../retry/contexts.js';
import { guard } from '../retry/guard.js';
import type { Mechanism } from '../retry/mechanism.js';
import type { Outcome } from '../retry/options.js';
import { listenerOption } from './protocol.js';
import { WINDOW_SCRIPT } from './scripts.js';
import {
  SendGroup,
  SHARED_KEYS,
  type SharedControls,
  type SharedEvent,
  type SharedInspection,
  type SharedMode,
  type SharedOptions,
  SharedState,
  type SharedStats,
} from './shared-state.js';
import { checkRedisKeys, pick, validateAs } from './validate-as.js';

/** Options of {@link sharedAdaptiveThrottle}: those of `adaptiveThrottle` plus the shared ones (its `clock` serves both). */
export interface SharedAdaptiveThrottleOptions extends AdaptiveThrottleOptions, SharedOptions {}

/** What {@link SharedAdaptiveThrottle.inspect} returns: the two windows as Redis holds them (values are counts). */
export interface SharedThrottleInspection {
  readonly requests: SharedInspection;
  readonly accepts: SharedInspection;
}

/** The throttle {@link sharedAdaptiveThrottle} returns; `key` is the requests' window (the accepts' is `…-accepts`). */
export interface SharedAdaptiveThrottle extends AdaptiveThrottle, Omit<SharedControls, 'inspect'> {
  /** Reads both windows without changing them; rejects if Redis fails or times out. */
  inspect(): Promise<SharedThrottleInspection>;
}

/** Buckets of the window, as `adaptiveThrottle` counts them. */
const BUCKETS = 60;

/**
 * `adaptiveThrottle` (the SRE book's client-side throttling, "Handling Overload") with its two
 * counts in Redis: every process that uses the same `name` draws against the requests and accepts
 * of the whole fleet over the last `windowMs`, so a process that just started (a serverless
 * invocation, a CLI run) rejects locally from its first request when the backend has been
 * refusing the fleet, instead of learning it again from its own requests.
 *
 * The counts are two sliding windows of 60 slices of `windowMs / 60` on the Redis server's clock
 * ({@link WINDOW_SCRIPT}, one hash each). `acquire` decides at once from the last fleet counts plus
 * this process's own since — never waiting for Redis; both are sent, summed, and read back every
 * `syncIntervalMs` while the process has traffic (two `EVALSHA`s, one per window); `flush()` reads
 * both back at once. The rejection rule is the local twin's:
 * `max(0, (requests − K·accepts) / (requests + 1))`.
 *
 * **Failure behaviour** (the shared budgets'): each call is bounded by `commandTimeoutMs`; while Redis
 * fails, the counts go on from the last fleet counts with this process's changes only, and the
 * next try waits for ebb's reconnect backoff; the first answer resyncs. `mode` is `'local'` while
 * either window is, `'syncing'` until both answered. The two windows are always sent together, and
 * a decision uses two counts of one moment: while their last answers are not of one send (one
 * window timed out, or resynced before its twin), the last pair that was, plus this process's own
 * requests and accepts since — two counts of different moments can read a fleet whose every
 * request succeeded as rejecting a quarter.
 *
 * **Gotchas:** while Redis fails, the local counts do not expire: the rejection probability is
 * then over the requests since the last answer, not over the last `windowMs`. Another process's
 * requests are seen at its next send plus one round trip (at most `syncIntervalMs` + `commandTimeoutMs`).
 *
 * @example
 * const throttle = sharedAdaptiveThrottle({ client: redis, name: 'payments-api' });
 * await throttle.ready();
 * await pipeline([retrying(), throttle]).execute(() => callPayments());
 * await throttle.close();
 */
export function sharedAdaptiveThrottle(options: SharedAdaptiveThrottleOptions): SharedAdaptiveThrottle {
  const where = 'sharedAdaptiveThrottle()';
  const o = optionsObject(where, options) as SharedAdaptiveThrottleOptions;
  checkRedisKeys(where, o, ['k', 'windowMs', 'random', ...SHARED_KEYS]);
  validateAs(where, 'adaptiveThrottle()', () =>
    adaptiveThrottle(pick(o as never, ['k', 'windowMs', 'clock', 'random'])),
  );
  const k = o.k ?? 2;
  const windowMs = o.windowMs ?? 60_000;
  // Checked by the local twin above.
  const random: Random = o.random ?? Math.random;
  const spec = (kind: string) => ({
    kind,
    script: WINDOW_SCRIPT,
    args: [String(windowMs / BUCKETS), String(BUCKETS), '0'],
    initial: 0,
    min: 0,
    max: 2 ** 53 * BUCKETS,
    windowMs,
    apply: (level: number, delta: number) => level + delta,
  });
  const listener = listenerOption(where, o.onEvent);
  // One event per change of the throttle's mode, not one per window: 'fallback' when the first
  // window falls back, 'resync' when the last one is shared again. Repairs and lost states are
  // each window's own (they name its key). `stats` counts the throttle's fallbacks and resyncs
  // as these events do.
  let reported: SharedMode = 'syncing';
  let fallbacks = 0;
  let resyncs = 0;
  const onEvent = (event: SharedEvent) => {
    if (event.type === 'repair' || event.type === 'state-lost') {
      listener?.(event);
      return;
    }
    const now = combined();
    const report = event.type === 'fallback' ? reported !== 'local' && now === 'local' : now === 'shared';
    reported = now;
    if (!report) return;
    if (event.type === 'fallback') fallbacks++;
    else resyncs++;
    listener?.(event);
  };
  // Sent together, so that the two counts are of one moment.
  const group = new SendGroup();
  const requests = new SharedState(where, { ...o, onEvent }, spec('throttle-requests'), group);
  const accepts = new SharedState(where, { ...o, onEvent }, spec('throttle-accepts'), group);
  function combined(): SharedMode {
    const modes = [requests.mode, accepts.mode];
    return modes.includes('local') ? 'local' : modes.includes('syncing') ? 'syncing' : 'shared';
  }
  // One window can be answered while its twin falls back or resyncs later: one then holds the
  // fleet's count and the other an older one plus this process's own, and their ratio can read a
  // fleet whose every request succeeded as rejecting a quarter. So the throttle decides from one
  // moment: both levels while their last answers are of calls sent together, else the last such
  // pair plus this process's own requests and accepts since.
  // The counts are `requestsAt + ownRequests` and `acceptsAt + ownAccepts`, read after `settle()`.
  let requestsAt = 0;
  let acceptsAt = 0;
  let ownRequests = 0;
  let ownAccepts = 0;
  const settle = (): void => {
    if (requests.answeredWith(accepts)) {
      requestsAt = requests.level;
      acceptsAt = accepts.level;
      ownRequests = 0;
      ownAccepts = 0;
    }
  };
  const probability = () => {
    settle();
    const r = requestsAt + ownRequests;
    const p = (r - k * (acceptsAt + ownAccepts)) / (r + 1);
    return p > 0 ? p : 0;
  };
  let mechanism: Mechanism | undefined;
  return {
    get requests() {
      settle();
      return requestsAt + ownRequests;
    },
    get accepts() {
      settle();
      return acceptsAt + ownAccepts;
    },
    get rejectionProbability() {
      return probability();
    },
    get ratePerSecond() {
      return Number.POSITIVE_INFINITY;
    },
    acquire(signal?: AbortSignal): unknown {
      if (signal?.aborted) throw signal.reason;
      const p = probability();
      requests.change(1, false);
      ownRequests++;
      // Both windows are read back at each send, so that the two counts are of the same moment.
      accepts.change(0, false);
      if (p > 0) {
        const draw = random();
        if (typeof draw !== 'number' || !(draw >= 0 && draw < 1)) {
          throw new RangeError(`${where}: \`random\` returned ${describe(draw)}; it must return a number in [0, 1).`);
        }
        if (draw < p) throw new LocalThrottleError(p);
      }
      return undefined;
    },
    record(outcome: Outcome): void {
      if (outcome === 'throttled') return;
      accepts.change(1, false);
      ownAccepts++;
      requests.change(0, false);
    },
    // As a pipeline mechanism: `acquire`, the call, `record`, by `guard()` (made at the first call).
    execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> {
      mechanism ??= guard(this);
      return mechanism.execute(next, context);
    },
    get mode(): SharedMode {
      return combined();
    },
    get stats(): SharedStats {
      const a = requests.stats;
      const b = accepts.stats;
      return {
        mode: this.mode,
        commands: a.commands + b.commands,
        errors: a.errors + b.errors,
        fallbacks,
        resyncs,
        repairs: a.repairs + b.repairs,
        stateLosses: a.stateLosses + b.stateLosses,
      };
    },
    get key() {
      return requests.key;
    },
    ready: async () => {
      await Promise.all([requests.ready(), accepts.ready()]);
    },
    // One send reads both windows back together; a twin busy with an earlier call at that moment
    // is sent again with the other (bounded: three tries).
    flush: async () => {
      for (let i = 0; i < 3; i++) {
        await requests.flush(true);
        await accepts.flush();
        if (requests.answeredWith(accepts)) return;
      }
    },
    close: async () => {
      await Promise.all([requests.close(), accepts.close()]);
    },
    inspect: async () => {
      const [r, a] = await Promise.all([requests.inspect((x) => x), accepts.inspect((x) => x)]);
      return { requests: r, accepts: a };
    },
    reset: async () => {
      await Promise.all([requests.reset(), accepts.reset()]);
    },
  };
}
