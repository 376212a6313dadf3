// A fleet of HTTP clients against a real limiter, in real time: `withRetry(fetch)` from ebb/http
// with a shared rate controller. Used by the real-limiter tests (test/rate/*.test.ts), by the
// child processes of the independent-clients test (client.mjs), and by `npm run bench -- limits`.
//
// Two shapes of load:
// - closed loops (`clients`): each client sends its next logical request as soon as the last one
//   ends — the nginx experiment (40 loops, 25 s);
// - open loop (`offeredPerSecond`): logical requests arrive evenly at a fixed rate, whatever
//   happens to the earlier ones, each with a deadline (`deadlineMs`) — for priorities, where the
//   offered load of each class must not depend on how the controller treats it.
//
// Everything is counted per attempt (what the limiter saw) and per logical request (what the
// caller got: a 200, a final 429 response, or a named error).
import { guard } from 'ebb';
import { withRetry } from 'ebb/http';

/** Per-second counters, grown on demand. */
const bump = (series, second, n = 1) => {
  while (series.length <= second) series.push(0);
  series[second] += n;
};

/**
 * Runs the fleet for `seconds`. `path(tSeconds)` chooses the limiter's path for each attempt (to
 * change the limit mid-run); `rate` is the shared controller (or undefined for plain retry); `classOf(i)`
 * gives a request's priority class name, used with `rate.priority(name)` when present.
 */
export async function runFleet({
  url,
  path = () => '/full',
  rate,
  clients = 0,
  offeredPerSecond = 0,
  classOf,
  deadlineMs = 5000,
  seconds,
  sampleMs = 100,
  pauseOnErrorMs = 100,
  fetchImpl = fetch,
}) {
  const start = performance.now();
  const end = start + seconds * 1000;
  const t = () => (performance.now() - start) / 1000;
  const ok = [];
  const throttled = [];
  const otherStatus = [];
  const outcome = { ok: 0, final429: 0, otherResponse: 0, errors: {} };
  const classes = {};
  const trace = [];
  const cuts = [];
  const wrapped = rate && wrapRecord(rate, cuts, t);
  // Each attempt goes to the location of the limit in force when it is sent — a retry of a
  // request begun before the limit changed included — as a server whose limit changes applies it
  // to every request from then on. (Chosen once per logical request, the retries of requests
  // begun before a doubling still met the halved limit after it, and read as failed probes.)
  const counted = async (_input, init) => {
    const response = await fetchImpl(url(path(t())), init);
    const s = Math.floor(t());
    if (response.status === 200) bump(ok, s);
    else if (response.status === 429) bump(throttled, s);
    else bump(otherStatus, s);
    return response;
  };
  const fetchers = new Map();
  const fetcherFor = (cls) => {
    let f = fetchers.get(cls);
    if (!f) {
      const controller =
        wrapped && cls !== undefined && typeof rate.priority === 'function'
          ? wrapRecord(rate.priority(cls), cuts, t)
          : wrapped;
      // The fleet measures rate control alone: withRetry's default retry budget, which would also
      // cut the retries of 429s, is off, so a controller's figures are its own.
      f = withRetry(counted, controller ? { use: [guard(controller)], budget: false } : { budget: false });
      fetchers.set(cls, f);
    }
    return f;
  };
  const one = async (i) => {
    const cls = classOf?.(i);
    const key = cls ?? 'all';
    classes[key] ??= { requests: 0, ok: 0, failed: 0 };
    const stats = classes[key];
    stats.requests++;
    try {
      const init = offeredPerSecond ? { signal: AbortSignal.timeout(deadlineMs) } : undefined;
      const response = await fetcherFor(cls)(url(path(t())), init);
      await response.arrayBuffer();
      if (response.status === 200) {
        outcome.ok++;
        stats.ok++;
      } else {
        stats.failed++;
        if (response.status === 429) outcome.final429++;
        else outcome.otherResponse++;
      }
    } catch (error) {
      stats.failed++;
      const name = error?.name ?? typeof error;
      outcome.errors[name] = (outcome.errors[name] ?? 0) + 1;
      return false;
    }
    return true;
  };
  const sampler = setInterval(() => {
    if (rate) trace.push({ t: Number(t().toFixed(2)), rate: rate.ratePerSecond });
  }, sampleMs);
  const running = [];
  if (clients > 0) {
    for (let c = 0; c < clients; c++) {
      running.push(
        (async () => {
          let i = c;
          while (performance.now() < end) {
            // A client whose request failed with an error (a local rejection by adaptiveThrottle,
            // say, which takes no time) waits before its next one, as an application would,
            // instead of spinning.
            if (!(await one(i))) await new Promise((r) => setTimeout(r, pauseOnErrorMs));
            i += clients;
          }
        })(),
      );
    }
  }
  if (offeredPerSecond > 0) {
    const gap = 1000 / offeredPerSecond;
    let i = 0;
    while (performance.now() < end) {
      const due = start + i * gap;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      running.push(one(i++));
    }
  }
  await Promise.all(running);
  clearInterval(sampler);
  const logical =
    outcome.ok + outcome.final429 + outcome.otherResponse + Object.values(outcome.errors).reduce((a, b) => a + b, 0);
  const sent = Object.values(classes).reduce((a, c) => a + c.requests, 0);
  return { seconds, ok, throttled, otherStatus, outcome, logical, sent, classes, trace, cuts };
}

/** Wraps a controller's `record` to log each decrease of its rate: `{ t, from, to }`. */
function wrapRecord(controller, cuts, t) {
  return {
    acquire: (signal) => controller.acquire(signal),
    record: (outcome, ticket, detail) => {
      const from = controller.ratePerSecond;
      controller.record(outcome, ticket, detail);
      const to = controller.ratePerSecond;
      if (to < from && from !== Number.POSITIVE_INFINITY) cuts.push({ t: Number(t().toFixed(3)), from, to });
    },
    get ratePerSecond() {
      return controller.ratePerSecond;
    },
  };
}

/** Sum of per-second counts over [from, to). */
export const sum = (series, from = 0, to = series.length) => {
  let s = 0;
  for (let i = from; i < to; i++) s += series[i] ?? 0;
  return s;
};

/** Coefficient of variation of per-second counts over [from, to). */
export const cv = (series, from, to) => {
  const xs = [];
  for (let i = from; i < to; i++) xs.push(series[i] ?? 0);
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return mean === 0 ? 0 : Math.sqrt(variance) / mean;
};

/** Jain's fairness index, (Σx)² / (n · Σx²): 1 when all equal, 1/n when one takes everything. */
export const jain = (xs) => {
  const s = xs.reduce((a, b) => a + b, 0);
  const q = xs.reduce((a, b) => a + b * b, 0);
  return q === 0 ? 1 : (s * s) / (xs.length * q);
};
