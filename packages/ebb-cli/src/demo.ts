import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { type Backoff, exponential, presets, seeded } from 'ebb';
import { shed, withRetry } from 'ebb/http';
import { formatDuration, parseDuration, parseNumber } from './duration.js';
import { UsageError } from './usage-error.js';

/*
 * `ebb demo`: the AWS seed article's bargain, live. A server handles a few requests at once,
 * queues a few more, and answers "503, not now" at once beyond that; a crowd of clients that
 * all failed at the same moment (a restart, a blip) retries with exponential backoff — first
 * without jitter, then with full jitter, ebb's default. Same server, same clients, same curve
 * and limits: only the jitter differs.
 *
 * Everything is real: a node:http server on 127.0.0.1, Node's fetch, ebb's withRetry and shed.
 * So the numbers vary a little from run to run and machine to machine; the contrast does not.
 *
 * Why the first wait is 500 ms rather than the default's 100 ms: one process plays every
 * client, and Node's fetch spends about a millisecond of CPU on each request, so one wave of
 * 300 requests takes a few hundred milliseconds just to leave. With 100 ms waits, that spread
 * blurs the crowd into a trickle and hides what jitter does; at 500 ms a wave is still a wave.
 * The demo measures the spread (`waveMs`) and prints it. `--base 100ms` runs `presets.default`
 * itself.
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
  /** Time the server spends on one request, in ms. */
  readonly workMs: number;
  /** Share of handled requests that fail anyway (a 500, as a flaky backend's do). */
  readonly flakyRate: number;
  /** Seeds the server's flakiness and the clients' jitter. */
  readonly seed: number;
}

/** The settings `ebb demo` runs with unless told otherwise. */
export const DEFAULT_SETTINGS: DemoSettings = {
  clients: 300,
  baseDelayMs: 500,
  maxConcurrent: 6,
  maxQueue: 12,
  workMs: 20,
  flakyRate: 0.05,
  seed: 2026,
};

/** Retries are counted in windows this long to find the peak load. */
export const PEAK_WINDOW_MS = 100;

/** What one run measured. Times in ms from the moment the clients fail together. */
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
  /** How long one wave of `clients` requests took to leave this process (the warm-up's). */
  readonly waveMs: number;
}

/** Where the demo reports progress: stderr, or a stand-in in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * The two policies: ebb's default (`presets.default`: ×2, full jitter, 20 s cap, 5 attempts)
 * with its first wait set to `baseDelayMs`, and the same without jitter. With a base of 100 ms
 * the second is `presets.default` exactly.
 */
export function demoPolicies(baseDelayMs: number): { name: string; label: string; backoff: Backoff }[] {
  const curve = { initialDelayMs: baseDelayMs, multiplier: 2, maxDelayMs: 20_000, maxAttempts: 5 };
  const jittered = baseDelayMs === 100 ? presets.default : exponential({ ...curve, jitter: 'full' });
  return [
    { name: 'no-jitter', label: 'no jitter', backoff: exponential({ ...curve, jitter: 'none' }) },
    { name: 'ebb-default', label: 'ebb default', backoff: jittered },
  ];
}

/** The embedded server: shed in front of a handler that works `workMs` and sometimes fails. */
class DemoServer {
  readonly server: Server;
  readonly arrivals: number[] = [];
  readonly retryArrivals: number[] = [];
  flaky = 0;
  readonly #seen = new Set<string>();
  #start = 0;
  readonly #listener: ReturnType<typeof shed>;

  constructor(settings: DemoSettings) {
    const random = seeded(settings.seed);
    const work = (_req: IncomingMessage, res: ServerResponse) => {
      setTimeout(() => {
        if (random() < settings.flakyRate) {
          this.flaky++;
          res.writeHead(500);
          res.end('flaky\n');
        } else res.end('ok\n');
      }, settings.workMs);
    };
    // Retry-After: 0, "come back whenever": the clients' own policies decide when, which is what
    // the demo compares. (A whole-second Retry-After would hold both crowds for a second each
    // round, and bring them back together.)
    this.#listener = shed(work, {
      maxConcurrent: settings.maxConcurrent,
      maxQueue: settings.maxQueue,
      retryAfterMs: 0,
    });
    this.server = createServer((req, res) => {
      if (req.url === '/ping') {
        res.end(); // the warm-up, not part of the run
        return;
      }
      const t = performance.now() - this.#start;
      this.arrivals.push(t);
      const client = String(req.headers['x-demo-client']);
      if (this.#seen.has(client)) this.retryArrivals.push(t);
      else this.#seen.add(client);
      this.#listener(req, res);
    });
    this.server.keepAliveTimeout = 30_000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  begin(): void {
    this.#start = performance.now();
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
  progress: (line: string, final: boolean) => void,
): Promise<RunSummary> {
  const server = new DemoServer(settings);
  const origin = await server.listen();
  try {
    const f = withRetry(fetch, { backoff: policy.backoff, attemptTimeoutMs: 5_000, random: seeded(settings.seed + 1) });
    // Warm-up: one open connection a client, as long-lived clients have, and Node's fetch
    // compiled, so that both runs start alike. The second wave's duration is how long a wave of
    // requests takes to leave this process.
    const wave = () =>
      Promise.all(Array.from({ length: settings.clients }, () => fetch(`${origin}/ping`).then((r) => r.arrayBuffer())));
    await wave();
    const warm = performance.now();
    await wave();
    const waveMs = performance.now() - warm;
    let served = 0;
    let gaveUp = 0;
    let lastServed = 0;
    let lastDone = 0;
    server.begin();
    const start = performance.now();
    const report = (final: boolean) =>
      progress(
        `${policy.label.padEnd(11)} ${formatDuration(Math.round(performance.now() - start)).padStart(8)}  ` +
          `served ${String(served).padStart(4)}/${settings.clients}  gave up ${String(gaveUp).padStart(4)}  ` +
          `requests ${String(server.arrivals.length).padStart(5)}`,
        final,
      );
    const ticker = setInterval(() => report(false), 100);
    try {
      await Promise.all(
        Array.from({ length: settings.clients }, async (_, id) => {
          let ok = false;
          try {
            const res = await f(`${origin}/work`, { headers: { 'x-demo-client': String(id) } });
            await res.arrayBuffer();
            ok = res.status === 200;
          } catch {
            // Gave up after errors rather than statuses: counted with the others who gave up.
          }
          const t = performance.now() - start;
          lastDone = Math.max(lastDone, t);
          if (ok) {
            served++;
            lastServed = Math.max(lastServed, t);
          } else gaveUp++;
        }),
      );
    } finally {
      clearInterval(ticker);
    }
    report(true);
    const requests = server.arrivals.length;
    const jitter = policy.name === 'no-jitter' ? 'no jitter' : 'full jitter';
    return {
      name: policy.name,
      policy: `${formatDuration(settings.baseDelayMs)} ×2, ${jitter}, 20 s cap, 5 attempts`,
      clients: settings.clients,
      served,
      gaveUp,
      requests,
      requestsPerSuccess: served > 0 ? requests / served : null,
      shed: server.shedCount,
      flaky: server.flaky,
      peakRetries: peakWithin(server.retryArrivals, PEAK_WINDOW_MS),
      allServedMs: served === settings.clients ? lastServed : null,
      lastDoneMs: lastDone,
      waveMs,
    };
  } finally {
    await server.close();
  }
}

/** The whole demo: both runs, then the summary (text or JSON) for stdout. */
export async function demo(
  settings: DemoSettings,
  json: boolean,
  stream: ProgressStream,
): Promise<{ readonly stdout: string; readonly runs: readonly RunSummary[] }> {
  const live = stream.isTTY === true;
  let lastLine = -Infinity;
  const progress = (line: string, final: boolean) => {
    if (live) {
      stream.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
      return;
    }
    // Not a terminal: plain lines, at most one a second, and one at the end of each run.
    const now = performance.now();
    if (final || now - lastLine >= 1000) {
      lastLine = now;
      stream.write(`${line}\n`);
    }
  };
  stream.write(
    `${settings.clients} clients fail at the same moment, then retry against a server that handles ` +
      `${settings.maxConcurrent} requests at once (${settings.workMs} ms each), queues ${settings.maxQueue} ` +
      `and answers the rest 503 at once.\n`,
  );
  const runs: RunSummary[] = [];
  for (const policy of demoPolicies(settings.baseDelayMs)) runs.push(await runOnce(settings, policy, progress));
  if (json) {
    const { clients, baseDelayMs, maxConcurrent, maxQueue, workMs, flakyRate, seed } = settings;
    const doc = {
      clients,
      baseDelayMs,
      server: { maxConcurrent, maxQueue, workMs, flakyRate },
      seed,
      peakWindowMs: PEAK_WINDOW_MS,
      runs,
    };
    return { stdout: `${JSON.stringify(doc, null, 2)}\n`, runs };
  }
  return { stdout: summary(settings, runs), runs };
}

const fixed2 = (x: number | null) => (x === null ? '—' : x.toFixed(2));
const seconds = (ms: number) => formatDuration(Math.round(ms / 10) * 10);

/** The side-by-side table, and what it shows. */
function summary(settings: DemoSettings, runs: readonly RunSummary[]): string {
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
  const labelWidth = Math.max(...cells.map(([l]) => l.length));
  const width = Math.max(11, ...cells.flatMap(([, x, y]) => [x.length, y.length]));
  const line = (label: string, x: string, y: string) =>
    `${label.padEnd(labelWidth)}  ${x.padStart(width)}  ${y.padStart(width)}`.trimEnd();
  const wave = Math.max(a.waveMs, b.waveMs);
  return [
    '',
    line('', 'no jitter', 'ebb default'),
    ...cells.map(([l, x, y]) => line(l, x, y)),
    '',
    settings.baseDelayMs === 100
      ? "Both run ebb's default policy (100 ms ×2, 20 s cap, 5 attempts); one without its full jitter."
      : `Both run ebb's default policy (×2, 20 s cap, 5 attempts, full jitter) from a first wait of ${formatDuration(settings.baseDelayMs)}`,
    ...(settings.baseDelayMs === 100 ? [] : ['instead of 100 ms; one of them without the jitter.']),
    'Without jitter, clients that failed together come back together: each wave meets a full server',
    'and most of it is shed again. Full jitter spreads the same retries over each window, so they fit.',
    `(One wave of ${settings.clients} requests took ${seconds(wave)} to leave this process; --base 100ms runs ebb's default as is.)`,
    '',
  ].join('\n');
}

/** Turns the flags into settings, refusing what is not a number in range. */
export function demoSettings(flags: DemoFlags): DemoSettings {
  let { clients, baseDelayMs, seed } = DEFAULT_SETTINGS;
  if (flags.clients !== undefined) {
    clients = parseNumber('--clients', flags.clients);
    if (!Number.isSafeInteger(clients) || clients < 1 || clients > 5000) {
      throw new UsageError(`--clients expects a whole number from 1 to 5000, got "${flags.clients}"`);
    }
  }
  if (flags.base !== undefined) {
    baseDelayMs = parseDuration('--base', flags.base);
    if (baseDelayMs < 1 || baseDelayMs > 5_000) {
      throw new UsageError(`--base expects a duration from 1ms to 5s, got "${flags.base}"`);
    }
  }
  if (flags.seed !== undefined) {
    seed = parseNumber('--seed', flags.seed);
    if (!Number.isSafeInteger(seed)) throw new UsageError(`--seed expects a whole number, got "${flags.seed}"`);
  }
  return { ...DEFAULT_SETTINGS, clients, baseDelayMs, seed };
}

/** Adds `ebb demo` to the program. */
export function registerDemo(root: Command, env: { readonly out: (text: string) => void }): void {
  const quiet = { writeOut: env.out, writeErr: () => {}, outputError: () => {} };
  root
    .command('demo')
    .description('a crowd of clients against a load-shedding server: retries without jitter, then with ebb (live)')
    .option('--clients <n>', `clients that fail together (default ${DEFAULT_SETTINGS.clients})`)
    .option(
      '--base <duration>',
      `first wait of both policies (default ${DEFAULT_SETTINGS.baseDelayMs}ms; ebb's default: 100ms)`,
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
