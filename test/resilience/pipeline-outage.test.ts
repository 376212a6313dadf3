// The README's composition — fallback, a total timeout, a retry, a circuit breaker, a concurrency
// limit, an attempt timeout — around fetch, against a real node:http server on 127.0.0.1 that goes
// dark (accepts requests and never answers) for 2 s, then recovers. Six workers call it in a loop
// for 5 s. Measured from the server's own arrivals and the breaker's state changes.
import { constant, fallback, noJitter, pipeline, RetryError, retrying, timeout } from 'ebb';
import { circuitBreaker, concurrencyLimit, type StateChange } from 'ebb/resilience';
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
    const changes: { at: number; to: string; openMs?: number }[] = [];
    const breaker = circuitBreaker({
      consecutiveFailures: 3,
      openBackoff: constant({ delayMs: OPEN_MS, jitter: noJitter }),
    });
    breaker.subscribe((c: StateChange) => changes.push({ at: performance.now() - began, to: c.to, openMs: c.openMs }));
    const api = pipeline([
      fallback((outcome) => `fallback ${kindOf(outcome.error)}`, { isFailure: (o) => !o.ok }),
      timeout(3_000),
      retrying({ backoff: constant({ delayMs: 50, maxAttempts: 3, jitter: noJitter }) }),
      breaker,
      concurrencyLimit({ algorithm: { limit: WORKERS, update: () => {} } }),
      timeout(ATTEMPT_MS),
    ]);
    const outcomes: { at: number; kind: string }[] = [];
    const worker = async () => {
      while (performance.now() - began < RUN_MS) {
        const value = await api.execute(({ signal }) => fetch(`${origin}/item`, { signal }).then((r) => r.text()));
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
    // No attempt reached the service while the circuit was open: arrivals fall outside every open
    // period (a request sent just before the opening may arrive in its first 50 ms).
    for (const o of opens) {
      const inside = arrivals.filter((t) => t > o.at + 50 && t < o.at + (o.openMs ?? OPEN_MS) - 5);
      expect(inside, `arrivals inside the open period at ${Math.round(o.at)} ms`).toEqual([]);
    }
    // The dead service saw the attempts before the first opening (at most one in flight a worker
    // per attempt timeout) and one probe per later period — not every worker's every attempt.
    const dark = arrivals.filter((t) => t < DARK_MS).length;
    const everyAttempt = WORKERS * Math.ceil(DARK_MS / (ATTEMPT_MS + 50));
    expect(dark).toBeLessThan(everyAttempt);
    // Refusals are told apart by their code: some calls gave up on the open circuit.
    const kinds = new Set(outcomes.filter((o) => o.at < DARK_MS + 1_000).map((o) => o.kind));
    expect(kinds).toContain('fallback EBB_CIRCUIT_OPEN');
    // Recovery: the first success comes within two open periods (and a retry's backoff) of the
    // service's return, and from then on every call succeeds.
    const firstOk = outcomes.find((o) => o.kind === 'up');
    expect(firstOk).toBeDefined();
    expect((firstOk as { at: number }).at).toBeLessThan(DARK_MS + 2 * OPEN_MS + 1_000);
    const late = outcomes.filter((o) => o.at > DARK_MS + 2 * OPEN_MS + 1_500);
    expect(late.length).toBeGreaterThan(WORKERS);
    expect(late.every((o) => o.kind === 'up')).toBe(true);
    expect(breaker.state).toBe('closed');
  }, 30_000);
});
