import type { Command } from 'commander';
import { seeded } from 'ebb';
import { withRetry } from 'ebb/http';
import { Experiment } from './demo-experiment.js';
import { measureOutage, outageLine } from './demo-outage.js';
import { type DemoPolicy, demoPolicies } from './demo-policy.js';
import { seconds, summary, verdict } from './demo-report.js';
import {
  DEFAULT_SETTINGS,
  type DemoFlags,
  type DemoSettings,
  demoSettings,
  PEAK_WINDOW_MS,
  type ProgressStream,
  type RunSummary,
} from './demo-settings.js';

/*
 * `ebb demo`: a crowd of clients that all failed at the same moment (a restart, a blip) retries
 * against a server that handles a few requests at once, queues a few more and answers the rest
 * "503, not now" at once (AWS Architecture Blog, "Timeouts, retries, and backoff with jitter",
 * Marc Brooker: queue up to a limit, then reject and let clients back off). Twice: with ebb's
 * default policy without its jitter, then with it. Same server, same clients, same curve and
 * limits; only the jitter differs.
 *
 * An experiment, not a show: its figures depend on the seed and nothing else. On the real clock
 * the machine's speed would shape the crowd (one process sending 300 requests takes a few hundred
 * ms of CPU, which blurs a wave), and a busy machine could reverse the result. Here the parts that talk are real — a node:http server on 127.0.0.1 behind ebb's
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
// The parts live beside this file: demo-settings.ts (flags, knobs), demo-policy.ts (the two
// policies and their words, read from ebb's default), demo-experiment.ts (the server, the crowd
// and the virtual clock), demo-report.ts (the table and the verdict). The tests import them from
// here.
export { type DemoPolicy, demoPolicies, type PolicyShape, policySentence, shapeOf } from './demo-policy.js';
export { type ServerSize, type Verdict, verdict } from './demo-report.js';
export {
  DEFAULT_SETTINGS,
  type DemoFlags,
  type DemoSettings,
  demoSettings,
  PEAK_WINDOW_MS,
  type ProgressStream,
  type RunSummary,
} from './demo-settings.js';

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

/** One crowd of clients against a fresh server with one policy. */
async function runOnce(
  settings: DemoSettings,
  policy: DemoPolicy,
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
    const summary: RunSummary = {
      name: policy.name,
      policy: policy.description,
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
  for (const policy of demoPolicies(settings.baseDelayMs, settings.policy))
    runs.push(await runOnce(settings, policy, stream, transport));
  const [plain, jittered] = runs as [RunSummary, RunSummary];
  const v = verdict(plain, jittered, settings);
  const outage = await measureOutage(settings.seed);
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
      outage,
    };
    return { stdout: `${JSON.stringify(doc, null, 2)}\n`, runs };
  }
  return { stdout: `${summary(settings, runs, v)}${outageLine(outage)}\n`, runs };
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
