import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { type Backoff, type Clock, exponential, presets, seeded } from 'ebb';
import { type SheddingListener, shed, withRetry } from 'ebb/http';
import { formatDuration, parseDuration, parseNumber, parseSeed } from './duration.js';
import { UsageError } from './usage-error.js';

/*
 * `ebb demo`: a crowd of clients that all failed at the same moment (a restart, a blip) retries
 * against a server that handles a few requests at once, queues a few more and answers the rest
 * "503, not now" at once (AWS Architecture Blog, "Timeouts, retries, and backoff with jitter",
 * Marc Brooker: queue up to a limit, then reject and let clients back off). Twice: with ebb's
 * default policy without its jitter, then with it. Same server, same clients, same curve and
 * limits; only the jitter differs.
 *
 * An experiment, not a show: its figures depend on the seed and nothing else. A first version
 * ran on the real clock, so the machine's speed shaped the crowd (one process sending 300
 * requests takes a few hundred ms of CPU, which blurs a wave), and a busy machine could reverse
 * the result. Here the parts that talk are real — a node:http server on 127.0.0.1 behind ebb's
 * `shed()`, Node's `fetch`, ebb's `withRetry` with its classifier and Retry-After handling, each
 * request a real socket round trip — but time is virtual:
 *
 * - every wait (a client's backoff, the server's 20 ms of work on a request) sleeps on one
 *   virtual clock, and the clock moves to the next wake-up only when the whole system is at
 *   rest: every client is sleeping, finished, or has its request sitting at the server, and no
 *   response is on its way. So a slow machine makes the demo take longer, not come out different;
 * - requests that reach the server at the same virtual instant are handed to `shed()` together,
 *   in client order, so which of them find a free slot does not depend on socket timing;
 * - each client draws its jitter from its own seeded generator, and whether a handled request
 *   fails anyway (a flaky 500) is drawn from the seed, the client and the attempt number.
 *
 * The verdict printed at the end is computed from the figures printed above it, and says so
 * when they do not show what the demo is about.
 */

/** Flags of `ebb demo`. */
export interface DemoFlags {
  readonly clients?: string;
  readonly base?: string;
  readonly seed?: string;
  readonly json?: boolean;
}

/** The demo's knobs (the CLI sets `clients`, `baseDelayMs` and `seed`; tests may set the rest). */
export interface DemoSettings {
  /** Clients that fail together and retry. */
  readonly clients: number;
  /** The first wait of both policies, in ms (ebb's default: 100). */
  readonly baseDelayMs: number;
  /** The server's capacity: requests handled at once. */
  readonly maxConcurrent: number;
  /** Requests that may wait for a slot; the rest are shed at once. */
  readonly maxQueue: number;
  /** Virtual time the server spends on one request, in ms. */
  readonly workMs: number;
  /** Share of handled requests that fail anyway (a 500, as a flaky backend's do). */
  readonly flakyRate: number;
  /** Seeds the server's flakiness and the clients' jitter. */
  readonly seed: number;
}

/** The settings `ebb demo` runs with unless told otherwise: ebb's real default policy. */
export const DEFAULT_SETTINGS: DemoSettings = {
  clients: 100,
  baseDelayMs: 100,
  maxConcurrent: 4,
  maxQueue: 8,
  workMs: 20,
  flakyRate: 0.05,
  seed: 2026,
};

/** Retries are counted in windows this long to find the peak load. */
export const PEAK_WINDOW_MS = 10;

/** What one run measured. Times are virtual ms from the moment the clients fail together. */
export interface RunSummary {
  /** 'no-jitter' or 'ebb-default'. */
  readonly name: string;
  readonly policy: string;
  readonly clients: number;
  /** Clients that got a 200. */
  readonly served: number;
  /** Clients whose attempts ran out first. */
  readonly gaveUp: number;
  /** Requests the server received, first attempts and retries. */
  readonly requests: number;
  /** requests / served; null when no client was served. */
  readonly requestsPerSuccess: number | null;
  /** Requests answered 503 at once because slots and queue were full. */
  readonly shed: number;
  /** Handled requests that failed anyway (the flaky 500s). */
  readonly flaky: number;
  /** The most retries that reached the server within any {@link PEAK_WINDOW_MS}. */
  readonly peakRetries: number;
  /** When the last client got its 200, if every client did; null otherwise. */
  readonly allServedMs: number | null;
  /** When the last client finished, served or not. */
  readonly lastDoneMs: number;
}

/** Where the demo reports progress: stderr, or a stand-in in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * The two policies: ebb's default (`presets.default`: 100 ms ×2, full jitter, 20 s cap,
 * 5 attempts) and the same without its jitter. Another `baseDelayMs` changes only the first wait.
 */
export function demoPolicies(baseDelayMs: number): { name: string; label: string; backoff: Backoff }[] {
  const jittered =
    baseDelayMs === 100
      ? presets.default
      : exponential({ initialDelayMs: baseDelayMs, multiplier: 2, maxDelayMs: 20_000, maxAttempts: 5, jitter: 'full' });
  return [
    { name: 'no-jitter', label: 'no jitter', backoff: jittered.withJitter('none') },
    { name: 'ebb-default', label: 'ebb default', backoff: jittered },
  ];
}

/** A uniform number in [0, 1) fixed by the seed, the client and the attempt: a flaky 500 or not. */
function draw(seed: number, client: number, attempt: number): number {
  return seeded(BigInt(seed) * 1_000_003n + BigInt(client) * 1_009n + BigInt(attempt))();
}

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly wake: () => void;
}

/**
 * Virtual time for the whole experiment. Unlike ebb's `virtualClock`, which moves on after one
 * turn of the event loop (enough for code that only awaits promises), this one moves only when
 * the driver has seen the system at rest, because real sockets are in the loop.
 */
class SteppedClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer: Timer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, wake: resolve };
      // Binary insertion: by due time, ties in the order the sleeps were made.
      let lo = 0;
      let hi = this.#timers.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((this.#timers[mid] as Timer).due <= timer.due) lo = mid + 1;
        else hi = mid;
      }
      this.#timers.splice(lo, 0, timer);
    });
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves to the earliest wake-up and wakes every sleep due then. */
  wakeNext(): void {
    const first = this.#timers[0];
    if (!first) return;
    this.#now = Math.max(this.#now, first.due);
    let n = 0;
    while (n < this.#timers.length && (this.#timers[n] as Timer).due <= this.#now) n++;
    for (const t of this.#timers.splice(0, n)) t.wake();
  }
}

type ClientState = 'active' | 'sleeping' | 'done';

interface Held {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly client: number;
}

/** One crowd against one fresh server, in virtual time. */
class Experiment {
  readonly clock = new SteppedClock();
  readonly server: Server;
  readonly states: ClientState[];
  readonly arrivals: number[] = [];
  readonly retryArrivals: number[] = [];
  flaky = 0;
  /** Responses the server has not finished (their 'close' not yet seen). */
  readonly #open = new Set<ServerResponse>();
  /** Requests that arrived at the current instant, not yet handed to `shed()`. */
  #held: Held[] = [];
  readonly #listener: SheddingListener<IncomingMessage, ServerResponse>;
  #scheduled = false;
  #lastProgress = performance.now();
  #finish: (() => void) | undefined;

  constructor(readonly settings: DemoSettings) {
    this.states = Array.from({ length: settings.clients }, () => 'active' as ClientState);
    const work = (req: IncomingMessage, res: ServerResponse) => {
      const client = Number(req.headers['x-demo-client']);
      const attempt = Number(req.headers['x-demo-attempt']);
      void this.clock.sleep(settings.workMs).then(() => {
        if (draw(settings.seed, client, attempt) < settings.flakyRate) {
          this.flaky++;
          res.writeHead(500);
          res.end('flaky\n');
        } else res.end('ok\n');
      });
    };
    // Retry-After: 0, "come back whenever": the clients' own policies decide when, which is what
    // the demo compares.
    this.#listener = shed(work, {
      maxConcurrent: settings.maxConcurrent,
      maxQueue: settings.maxQueue,
      retryAfterMs: 0,
    });
    const seen = new Set<number>();
    this.server = createServer((req, res) => {
      const client = Number(req.headers['x-demo-client']);
      const t = this.clock.now();
      this.arrivals.push(t);
      if (seen.has(client)) this.retryArrivals.push(t);
      else seen.add(client);
      this.#open.add(res);
      // Registered before shed()'s own 'close' listener, so by the next check both have run.
      res.once('close', () => {
        this.#open.delete(res);
        this.poke();
      });
      this.#held.push({ req, res, client });
      this.poke();
    });
    this.server.keepAliveTimeout = 60_000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A client's view of the clock: sleeping marks it at rest. */
  clientClock(id: number): Clock {
    return {
      now: () => this.clock.now(),
      sleep: (ms, signal) => {
        this.states[id] = 'sleeping';
        this.poke();
        return this.clock.sleep(ms, signal).then(() => {
          this.states[id] = 'active';
        });
      },
    };
  }

  done(id: number): void {
    this.states[id] = 'done';
    this.poke();
  }

  /** Runs until every client is done; rejects if nothing moves for `stallMs` of real time. */
  run(stallMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const watchdog = setInterval(() => {
        if (performance.now() - this.#lastProgress > stallMs) {
          clearInterval(watchdog);
          reject(new Error(`ebb demo: no progress for ${stallMs / 1000} s (a bug in the demo's driver)`));
        }
      }, 1_000);
      this.#finish = () => {
        clearInterval(watchdog);
        resolve();
      };
      this.poke();
    });
  }

  /** Something changed: look again once pending promise callbacks have run. */
  poke(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#step();
    });
  }

  /** At rest: every active client's request sits at the server, and no response is under way. */
  #atRest(): boolean {
    let active = 0;
    for (const s of this.states) if (s === 'active') active++;
    if (active !== this.#open.size) return false;
    for (const res of this.#open) if (res.writableEnded) return false;
    return true;
  }

  #step(): void {
    if (!this.#finish || !this.#atRest()) return;
    this.#lastProgress = performance.now();
    if (this.#held.length > 0) {
      const batch = this.#held.sort((a, b) => a.client - b.client);
      this.#held = [];
      for (const h of batch) this.#listener(h.req, h.res);
      this.poke();
      return;
    }
    if (this.clock.pending > 0) {
      this.clock.wakeNext();
      this.poke();
      return;
    }
    if (this.states.every((s) => s === 'done')) this.#finish();
  }

  get shedCount(): number {
    return this.#listener.stats().shed;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** The most of `times` (ms, any order) that fall within any window of `widthMs`. */
export function peakWithin(times: readonly number[], widthMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] as number) - (sorted[lo] as number) >= widthMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

type Policy = ReturnType<typeof demoPolicies>[number];

/** One crowd of clients against a fresh server with one policy. */
async function runOnce(
  settings: DemoSettings,
  policy: Policy,
  progress: ProgressStream,
  transport: typeof fetch,
): Promise<RunSummary> {
  const x = new Experiment(settings);
  const origin = await x.listen();
  const realStart = performance.now();
  try {
    let served = 0;
    let lastServed = 0;
    let lastDone = 0;
    const clients = Array.from({ length: settings.clients }, async (_, id) => {
      let attempt = 0;
      const counted = (input: string | URL | Request, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        headers.set('x-demo-attempt', String(++attempt));
        return transport(input, { ...init, headers });
      };
      const f = withRetry(counted, {
        backoff: policy.backoff,
        clock: x.clientClock(id),
        random: seeded(settings.seed + 1 + id),
      });
      let ok = false;
      try {
        const res = await f(`${origin}/work`, { headers: { 'x-demo-client': String(id) } });
        const t = x.clock.now();
        await res.arrayBuffer();
        ok = res.status === 200;
        if (ok) lastServed = Math.max(lastServed, t);
      } catch {
        // Gave up after errors rather than statuses: counted with the others who gave up.
      }
      if (ok) served++;
      lastDone = Math.max(lastDone, x.clock.now());
      x.done(id);
    });
    await x.run();
    await Promise.all(clients);
    const requests = x.arrivals.length;
    const jitter = policy.name === 'no-jitter' ? 'no jitter' : 'full jitter';
    const summary: RunSummary = {
      name: policy.name,
      policy: `${formatDuration(settings.baseDelayMs)} ×2, ${jitter}, 20 s cap, 5 attempts`,
      clients: settings.clients,
      served,
      gaveUp: settings.clients - served,
      requests,
      requestsPerSuccess: served > 0 ? requests / served : null,
      shed: x.shedCount,
      flaky: x.flaky,
      peakRetries: peakWithin(x.retryArrivals, PEAK_WINDOW_MS),
      allServedMs: served === settings.clients ? lastServed : null,
      lastDoneMs: lastDone,
    };
    progress.write(
      `${policy.label.padEnd(11)}  served ${served}/${settings.clients} over ${seconds(lastDone)} of virtual time ` +
        `(${seconds(performance.now() - realStart)} real)\n`,
    );
    return summary;
  } finally {
    await x.close();
  }
}

/** The whole demo: both runs, then the summary (text or JSON) for stdout. */
export async function demo(
  settings: DemoSettings,
  json: boolean,
  stream: ProgressStream,
  /** The clients' fetch; tests pass one that delays requests by random real time. */
  transport: typeof fetch = fetch,
): Promise<{ readonly stdout: string; readonly runs: readonly RunSummary[] }> {
  stream.write(
    `${settings.clients} clients fail at the same moment, then retry against a server that handles ` +
      `${settings.maxConcurrent} requests at once (${settings.workMs} ms each), queues ${settings.maxQueue} ` +
      `and answers the rest 503 at once.\n`,
  );
  const runs: RunSummary[] = [];
  for (const policy of demoPolicies(settings.baseDelayMs))
    runs.push(await runOnce(settings, policy, stream, transport));
  const [plain, jittered] = runs as [RunSummary, RunSummary];
  const v = verdict(plain, jittered);
  if (json) {
    const { clients, baseDelayMs, maxConcurrent, maxQueue, workMs, flakyRate, seed } = settings;
    const doc = {
      clients,
      baseDelayMs,
      server: { maxConcurrent, maxQueue, workMs, flakyRate },
      seed,
      peakWindowMs: PEAK_WINDOW_MS,
      runs,
      verdict: v,
    };
    return { stdout: `${JSON.stringify(doc, null, 2)}\n`, runs };
  }
  return { stdout: summary(settings, runs, v), runs };
}

const fixed2 = (x: number | null) => (x === null ? '—' : x.toFixed(2));
const seconds = (ms: number) => formatDuration(Math.round(ms / 10) * 10);

/** What the figures show: whether jitter won, and the sentences that say it, built from them. */
export interface Verdict {
  /**
   * True when the jittered crowd served more clients, with fewer requests per success, and the
   * lockstep crowd left some clients without an answer: the demo's claim, on these figures.
   */
  readonly jitterFits: boolean;
  readonly lines: readonly string[];
}

/**
 * The closing words, derived from the two runs' figures (a first version printed the same words
 * whatever its figures said). When the figures do not support the claim, it says so.
 */
export function verdict(plain: RunSummary, jittered: RunSummary): Verdict {
  const perSuccess = (r: RunSummary) => r.requestsPerSuccess ?? Infinity;
  const moreServed = jittered.served > plain.served;
  const cheaper = perSuccess(jittered) < perSuccess(plain);
  const lockstepFailed = plain.gaveUp > 0;
  const calmer = jittered.peakRetries < plain.peakRetries;
  if (moreServed && cheaper && lockstepFailed) {
    return {
      jitterFits: true,
      lines: [
        `In lockstep, the crowd kept failing: retries came back together (up to ${plain.peakRetries} in ${PEAK_WINDOW_MS} ms${calmer ? `, against ${jittered.peakRetries} with jitter` : ''}),`,
        `met a full server, and ${plain.gaveUp} of ${plain.clients} clients gave up after ${plain.requests} requests.`,
        `With jitter, the same retries fit: ${jittered.served} of ${jittered.clients} served (${jittered.served - plain.served} more), ` +
          `at ${fixed2(jittered.requestsPerSuccess)} requests per success instead of ${fixed2(plain.requestsPerSuccess)}.`,
      ],
    };
  }
  const why: string[] = [];
  if (!moreServed) why.push(`jitter served ${jittered.served} clients, lockstep ${plain.served}`);
  if (!cheaper)
    why.push(
      `jitter took ${fixed2(jittered.requestsPerSuccess)} requests per success, lockstep ${fixed2(plain.requestsPerSuccess)}`,
    );
  if (!lockstepFailed) why.push('every lockstep client was served: this server had room for the crowd');
  return {
    jitterFits: false,
    lines: [
      `These figures do not show jitter helping: ${why.join('; ')}.`,
      'Try more clients (--clients) or a different --seed.',
    ],
  };
}

/** The side-by-side table, and the verdict under it. */
function summary(settings: DemoSettings, runs: readonly RunSummary[], v: Verdict): string {
  const [a, b] = runs as [RunSummary, RunSummary];
  const rows: [string, (r: RunSummary) => string][] = [
    ['clients served', (r) => `${r.served} of ${r.clients}`],
    ['clients who gave up', (r) => String(r.gaveUp)],
    ['requests sent', (r) => String(r.requests)],
    ['requests per success', (r) => fixed2(r.requestsPerSuccess)],
    ['answered 503 at once (shed)', (r) => String(r.shed)],
    [`peak load: retries in ${PEAK_WINDOW_MS} ms`, (r) => String(r.peakRetries)],
    ['every client served after', (r) => (r.allServedMs === null ? 'never' : seconds(r.allServedMs))],
    ['last client done after', (r) => seconds(r.lastDoneMs)],
  ];
  const cells = rows.map(([label, cell]) => [label, cell(a), cell(b)] as const);
  const labelWidth = cells.reduce((w, [l]) => Math.max(w, l.length), 0);
  const width = cells.reduce((w, [, x, y]) => Math.max(w, x.length, y.length), 11);
  const line = (label: string, x: string, y: string) =>
    `${label.padEnd(labelWidth)}  ${x.padStart(width)}  ${y.padStart(width)}`.trimEnd();
  const policy =
    settings.baseDelayMs === 100
      ? "Both crowds run ebb's default policy (100 ms ×2, 20 s cap, 5 attempts); one without its full jitter."
      : `Both crowds run ebb's default policy (×2, 20 s cap, 5 attempts, full jitter) from a first wait of ${formatDuration(settings.baseDelayMs)}; one without the jitter.`;
  return [
    '',
    line('', 'no jitter', 'ebb default'),
    ...cells.map(([l, x, y]) => line(l, x, y)),
    '',
    policy,
    ...v.lines,
    `(Virtual time, real sockets: the same --seed gives the same figures on any machine. Seed ${settings.seed}.)`,
    '',
  ].join('\n');
}

/** Turns the flags into settings, refusing what is not a number in range. */
export function demoSettings(flags: DemoFlags): DemoSettings {
  let { clients, baseDelayMs, seed } = DEFAULT_SETTINGS;
  if (flags.clients !== undefined) {
    clients = parseNumber('--clients', flags.clients);
    if (!Number.isSafeInteger(clients) || clients < 1 || clients > 2000) {
      throw new UsageError(`--clients expects a whole number from 1 to 2000, got "${flags.clients}"`);
    }
  }
  if (flags.base !== undefined) {
    baseDelayMs = parseDuration('--base', flags.base);
    if (baseDelayMs < 1 || baseDelayMs > 5_000) {
      throw new UsageError(`--base expects a duration from 1ms to 5s, got "${flags.base}"`);
    }
  }
  if (flags.seed !== undefined) seed = parseSeed(flags.seed);
  return { ...DEFAULT_SETTINGS, clients, baseDelayMs, seed };
}

/** Adds `ebb demo` to the program. */
export function registerDemo(root: Command, env: { readonly out: (text: string) => void }): void {
  const quiet = { writeOut: env.out, writeErr: () => {}, outputError: () => {} };
  root
    .command('demo')
    .description(
      "a crowd of clients against a load-shedding server, retrying without jitter, then with ebb's default (real sockets, virtual time)",
    )
    .option('--clients <n>', `clients that fail together (default ${DEFAULT_SETTINGS.clients}, at most 2000)`)
    .option(
      '--base <duration>',
      `first wait of both policies (default ${DEFAULT_SETTINGS.baseDelayMs}ms, as ebb's default)`,
    )
    .option('--seed <n>', `seed of the jitter and of the server's flakiness (default ${DEFAULT_SETTINGS.seed})`)
    .option('--json', 'print one JSON document')
    .configureOutput(quiet)
    .exitOverride()
    .action(async (flags: DemoFlags) => {
      const result = await demo(demoSettings(flags), flags.json === true, process.stderr);
      env.out(result.stdout);
    });
}
