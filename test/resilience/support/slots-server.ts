import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline, timeout } from 'ebb';
import { type ConcurrencyLimit, isLimitExceededError } from 'ebb/resilience';

/**
 * A real node:http server on 127.0.0.1 of `slots` slots (the brownout server of
 * bench/figures/brownout.mjs and limit-defaults.mjs): each request takes `serviceMs` while nobody
 * waits; beyond `slots`, requests wait in a FIFO queue, and one that starts while more than
 * `slots` others wait takes 10 × longer — an overloaded server thrashes. Its capacity is set by
 * timers, not CPU.
 */
export async function startSlotsServer(slots: number, serviceMs: number) {
  let busy = 0;
  let most = 0;
  const waiting: ServerResponse[] = [];
  const serve = (res: ServerResponse): void => {
    busy++;
    const overloaded = waiting.length > slots;
    setTimeout(
      () => {
        busy--;
        res.end('ok');
        const next = waiting.shift();
        if (next) serve(next);
      },
      overloaded ? 10 * serviceMs : serviceMs,
    );
  };
  const server = createServer((_req, res) => {
    if (busy < slots) serve(res);
    else {
      waiting.push(res);
      res.on('close', () => {
        const i = waiting.indexOf(res);
        if (i >= 0) waiting.splice(i, 1);
      });
    }
    most = Math.max(most, busy + waiting.length);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    capacityRps: (slots * 1000) / serviceMs,
    /** The most requests the server held at once since the last call. */
    takeMost(): number {
      const m = most;
      most = 0;
      return m;
    },
    /** Resolves once the server holds nothing (a phase's backlog must not load the next). */
    async drained(): Promise<void> {
      while (busy + waiting.length > 0) await new Promise((r) => setTimeout(r, 50));
    },
    close(): Promise<void> {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PhaseResult {
  /** Successes a second ÷ the server's capacity. */
  readonly goodput: number;
  readonly p99Ms: number;
  readonly refused: number;
  readonly failed: number;
  readonly sent: number;
  readonly mostInServer: number;
}

/**
 * Open-loop load at `rate` requests a second for `seconds`, each one attempt with a 20 × `serviceMs`
 * timeout, through `limiter` if given (`pipeline([limiter, timeout(ms)])`: a refusal is not retried).
 */
export async function phase(
  s: Awaited<ReturnType<typeof startSlotsServer>>,
  serviceMs: number,
  rate: number,
  seconds: number,
  limiter?: ConcurrencyLimit,
): Promise<PhaseResult> {
  await s.drained();
  s.takeMost();
  const get = async ({ signal }: { signal: AbortSignal }) => {
    const res = await fetch(s.url, { signal });
    await res.arrayBuffer();
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
  };
  const limit = timeout(20 * serviceMs);
  const call = pipeline(limiter ? [limiter, limit] : [limit]);
  const latencies: number[] = [];
  let refused = 0;
  let failed = 0;
  const pending: Promise<unknown>[] = [];
  const t0 = performance.now();
  let sent = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const wait = t0 + (sent * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sent++;
    const start = performance.now();
    pending.push(
      call.execute(get).then(
        () => latencies.push(performance.now() - start),
        (e: unknown) => (isLimitExceededError(e) ? refused++ : failed++),
      ),
    );
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(0.99 * latencies.length))] ?? Number.NaN;
  return {
    goodput: latencies.length / elapsed / s.capacityRps,
    p99Ms: p99,
    refused,
    failed,
    sent,
    mostInServer: s.takeMost(),
  };
}
