// The README's composition — fallback, a total timeout, a retry, a circuit breaker, a concurrency
// limit, an attempt timeout — around fetch, against a real node:http server on 127.0.0.1 that goes
// dark (accepts requests and never answers) for 2 s, then recovers. Six workers call it in a loop
// for 5 s. Measured from the server's own arrivals, the attempts the client started (the instant
// the breaker admitted them) and the breaker's state changes.
import { constant, fallback, noJitter, pipeline, RetryError, retrying, timeout } from 'ebb';
import { bulkhead, circuitBreaker, concurrencyLimit, type StateChange } from 'ebb/resilience';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/support/server.js';

const DARK_MS = 2_000;
const RUN_MS = 5_000;
const WORKERS = 6;
const ATTEMPT_MS = 200;
const OPEN_MS = 400;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * The breaker's state changes, each at the breaker's own clock reading less `began` (its default
 * clock is performance.now()), not when the listener ran: on a busy machine the process can be
 * paused between the two, and an open period is the breaker's [at, at + openMs).
 */
function changesOf(breaker: ReturnType<typeof circuitBreaker>, began: number) {
  const changes: { at: number; to: string; openMs?: number }[] = [];
  breaker.subscribe((c: StateChange) => changes.push({ at: c.at - began, to: c.to, openMs: c.openMs }));
  return changes;
}

/** What a call ended with, told apart by the codes and names of ebb's errors. */
function kindOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const error = value instanceof RetryError ? value.cause : value;
  const e = error as { code?: unknown; name?: unknown } | null;
  return typeof e?.code === 'string' ? e.code : String(e?.name);
}

describe('a composed pipeline against a real server that goes dark and recovers', () => {
  it('attempts reach the dead service only until the breaker opens and as one probe a period, refusals carry their code, traffic is back within two periods', async () => {
    const began = performance.now();
    const held: (() => void)[] = [];
    server = await startServer((_req, res) => {
      // Dark: the request is taken and never answered (the client's attempt timeout ends it).
      if (performance.now() - began < DARK_MS) held.push(() => res.destroy());
      else res.end('up');
    });
    const origin = server.origin;
    const breaker = circuitBreaker({
      consecutiveFailures: 3,
      openBackoff: constant({ delayMs: OPEN_MS, jitter: noJitter }),
    });
    const changes = changesOf(breaker, began);
    const api = pipeline([
      fallback((outcome) => `fallback ${kindOf(outcome.error)}`, { isFailure: (o) => !o.ok }),
      timeout(3_000),
      retrying({ backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }) }),
      breaker,
      concurrencyLimit({ algorithm: { limit: WORKERS, update: () => {} } }),
      timeout(ATTEMPT_MS),
    ]);
    const outcomes: { at: number; kind: string }[] = [];
    /** When each attempt started: the instant the breaker (and the limit) admitted it. */
    const starts: number[] = [];
    const worker = async () => {
      while (performance.now() - began < RUN_MS) {
        const value = await api.execute(({ signal }) => {
          starts.push(performance.now() - began);
          return fetch(`${origin}/item`, { signal }).then((r) => r.text());
        });
        outcomes.push({ at: performance.now() - began, kind: kindOf(value) });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    for (const release of held) release();

    const arrivals = server.seen.map((s) => s.at - began);
    const opens = changes.filter((c) => c.to === 'open');
    const firstUp = outcomes.find((o) => o.kind === 'up');
    console.log(
      `dark ${DARK_MS} ms: ${arrivals.filter((t) => t < DARK_MS).length} requests reached the dead service, ` +
        `${opens.length} open periods; first success at ${Math.round(firstUp?.at ?? Number.NaN)} ms; ` +
        `${outcomes.length} calls: ${[...new Set(outcomes.map((o) => o.kind))].join(', ')}`,
    );
    // The breaker opened during the dark phase.
    expect(opens.length).toBeGreaterThanOrEqual(1);
    expect((opens[0] as { at: number }).at).toBeLessThan(DARK_MS + 500);
    // No attempt started while the circuit was open (measured at the client: on a loaded machine a
    // request admitted just before an opening may reach the server well after it).
    for (const o of opens) {
      const inside = starts.filter((t) => t > o.at + 1 && t < o.at + (o.openMs ?? OPEN_MS) - 1);
      expect(inside, `attempts started inside the open period at ${Math.round(o.at)} ms`).toEqual([]);
    }
    // The dead service saw the attempts before the first opening (at most one in flight a worker
    // per attempt timeout) and one probe per later period — not every worker's every attempt.
    const dark = arrivals.filter((t) => t < DARK_MS).length;
    const everyAttempt = WORKERS * Math.ceil(DARK_MS / (ATTEMPT_MS + 50));
    expect(dark).toBeLessThan(everyAttempt);
    // Precisely: after the first opening, every attempt sent to the dead service was a probe — the
    // breaker goes half-open when a call arrives after the open period, and admits it as the probe
    // at that instant; at most one a period (maxHalfOpenProbes 1).
    const halfOpens = changes.filter((c) => c.to === 'half-open');
    const firstOpen = (opens[0] as { at: number }).at;
    const darkAfterOpen = starts.filter((t) => t > firstOpen && t < DARK_MS);
    for (const t of darkAfterOpen) {
      const period = halfOpens.filter((h) => h.at - 1 <= t && t <= h.at + 5);
      expect(period.length, `the attempt at ${Math.round(t)} ms was a half-open probe`).toBe(1);
    }
    expect(darkAfterOpen.length).toBeLessThanOrEqual(halfOpens.filter((h) => h.at < DARK_MS).length);
    // Refusals are told apart by their code: some calls gave up on the open circuit.
    const kinds = new Set(outcomes.filter((o) => o.at < DARK_MS + 1_000).map((o) => o.kind));
    expect(kinds).toContain('fallback EBB_CIRCUIT_OPEN');
    // Recovery: the first success comes within two open periods (and a retry's backoff) of the
    // service's return, and from then on every call succeeds.
    const firstOk = outcomes.find((o) => o.kind === 'up');
    expect(firstOk).toBeDefined();
    const recoverMs = (firstOk as { at: number }).at - DARK_MS;
    console.log(`recovered ${Math.round(recoverMs)} ms after the service came back (open period ${OPEN_MS} ms)`);
    expect(recoverMs).toBeLessThan(2 * OPEN_MS + 1_000);
    const late = outcomes.filter((o) => o.at > DARK_MS + 2 * OPEN_MS + 1_500);
    expect(late.length).toBeGreaterThan(WORKERS);
    expect(late.every((o) => o.kind === 'up')).toBe(true);
    expect(breaker.state).toBe('closed');
  }, 30_000);
  it('a service that answers 503 for 1.5 s: isFailure judges the responses in the retry and the breaker alike, a bulkhead bounds the calls in flight, every failed attempt is told apart by its code', async () => {
    const DOWN_MS = 1_500;
    const began = performance.now();
    let inflight = 0;
    let maxInflight = 0;
    server = await startServer((_req, res) => {
      inflight++;
      maxInflight = Math.max(maxInflight, inflight);
      const down = performance.now() - began < DOWN_MS;
      // 30 ms of work a request, so that six workers need more than the bulkhead's two slots.
      setTimeout(() => {
        inflight--;
        res.statusCode = down ? 503 : 200;
        res.end(down ? 'down' : 'up');
      }, 30);
    });
    const origin = server.origin;
    // One predicate for every mechanism: a 5xx response is a failure, as a thrown error is.
    const isFailure = (o: { ok: boolean; value?: Response }) => !o.ok || (o.value as Response).status >= 500;
    const breaker = circuitBreaker({
      consecutiveFailures: 3,
      openBackoff: constant({ delayMs: OPEN_MS, jitter: noJitter }),
      isFailure,
    });
    const changes = changesOf(breaker, began);
    const failedAttempts = new Map<string, number>();
    const api = pipeline([
      timeout(3_000),
      retrying({
        backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }),
        isFailure,
        onFailedAttempt: ({ error, value }) => {
          const kind = value === undefined ? kindOf(error) : `status ${(value as Response).status}`;
          failedAttempts.set(kind, (failedAttempts.get(kind) ?? 0) + 1);
        },
      }),
      breaker,
      bulkhead({ maxConcurrent: 2 }),
      timeout(ATTEMPT_MS),
    ]);
    const starts: number[] = [];
    const outcomes: { at: number; kind: string }[] = [];
    const worker = async () => {
      while (performance.now() - began < 4_500) {
        let kind: string;
        try {
          const r = await api.execute(({ signal }) => {
            starts.push(performance.now() - began);
            return fetch(`${origin}/item`, { signal });
          });
          kind = `status ${r.status}`;
          await r.text();
        } catch (error) {
          kind = kindOf(error);
        }
        outcomes.push({ at: performance.now() - began, kind });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));

    const arrivals = server.seen.map((s) => s.at - began);
    const opens = changes.filter((c) => c.to === 'open');
    const firstUp = outcomes.find((o) => o.kind === 'status 200' && o.at > DOWN_MS);
    console.log(
      `503 for ${DOWN_MS} ms: ${arrivals.filter((t) => t < DOWN_MS).length} requests reached the failing service, ` +
        `${opens.length} open periods, at most ${maxInflight} in flight; failed attempts ${JSON.stringify(Object.fromEntries(failedAttempts))}; ` +
        `first success ${Math.round((firstUp?.at ?? Number.NaN) - DOWN_MS)} ms after recovery`,
    );
    // 503 responses (values, not errors) opened the breaker: isFailure judged the results.
    expect(opens.length).toBeGreaterThanOrEqual(1);
    expect((opens[0] as { at: number }).at).toBeLessThan(DOWN_MS);
    // No attempt started while the circuit was open.
    for (const o of opens) {
      const inside = starts.filter((t) => t > o.at + 1 && t < o.at + (o.openMs ?? OPEN_MS) - 1);
      expect(inside, `attempts started inside the open period at ${Math.round(o.at)} ms`).toEqual([]);
    }
    // The bulkhead held the calls in flight to its two slots.
    expect(maxInflight).toBeLessThanOrEqual(2);
    // Each kind of failure is told apart: the service's 503 (a value), the open breaker's refusal and
    // the full bulkhead's, by their codes.
    expect([...failedAttempts.keys()].sort()).toEqual(
      expect.arrayContaining(['EBB_CIRCUIT_OPEN', 'EBB_LIMIT_EXCEEDED', 'status 503']),
    );
    // Every call ended with a response or with an error told apart by its code (a call whose
    // retries end on a 503 resolves with that response: no error invented for it).
    const kinds = new Set(outcomes.map((o) => o.kind));
    expect(
      [...kinds].filter((k) => !['status 200', 'status 503', 'EBB_CIRCUIT_OPEN', 'EBB_LIMIT_EXCEEDED'].includes(k)),
    ).toEqual([]);
    // Recovery within two open periods (and a backoff) of the service's return; then every call succeeds
    // or is refused by the bulkhead alone.
    expect(firstUp).toBeDefined();
    expect((firstUp as { at: number }).at - DOWN_MS).toBeLessThan(2 * OPEN_MS + 1_000);
    const late = outcomes.filter((o) => o.at > DOWN_MS + 2 * OPEN_MS + 1_000);
    expect(late.length).toBeGreaterThanOrEqual(WORKERS);
    expect(late.filter((o) => o.kind !== 'status 200' && o.kind !== 'EBB_LIMIT_EXCEEDED')).toEqual([]);
    expect(breaker.state).toBe('closed');
  }, 30_000);
});
