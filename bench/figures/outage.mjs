// Behaviour under an outage: CLIENTS clients, each making one call through a library, against one
// simulated server that is down (every request fails with a 503) for the first DOWN_MS, and then
// serves the first CAPACITY requests of each second and answers the rest with a 503 at once.
// Every response takes LATENCY_MS. Clients start at seeded random times in the first second.
//
// Each library runs its real code under @sinonjs/fake-timers (setTimeout, Date and performance
// are virtual, installed before any library is imported); Math.random is a seeded generator, so
// every library's jitter is reproducible. The event loop is driven one virtual millisecond at a
// time: fire the next timer, fire every timer due within the next millisecond, then let all
// promise callbacks run — so times are exact to 1 ms.
//
// `node figures/outage.mjs SUBJECT CONFIG SEED [--quick]` (CONFIG: default | recommended | patient) prints
//   { subject, config, call, seed, clients, requests, amplification, peakDuringOutage,
//     peakAfterRecovery, served, gaveUp, lastServedS, settledS, truncated }
// Peaks are the most requests arriving in any 1-s window (sliding), during the outage and after
// recovery; lastServedS and settledS are seconds after recovery (null when nothing happened then).
import FakeTimers from '@sinonjs/fake-timers';
import { CAPACITY, CLIENTS, DOWN_MS, LATENCY_MS } from '../lib/outage-scenario.mjs';
import { splitmix32 } from '../lib/random.mjs';

const quick = process.argv.includes('--quick');
/**
 * Safety stops: virtual time and requests. A run that hits one reports `truncated: true`. With
 * --quick the request limit is low, so that a library retrying in a hot loop (3 million requests
 * in 30 s, about a minute of real time) is cut short and reported as such.
 */
const LIMIT_MS = 3 * 3_600_000;
const MAX_REQUESTS = quick ? 250_000 : 20_000_000;

const [id, config = 'default', seedText = '1'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const seed = Number(seedText);
const realSetImmediate = setImmediate;
const flush = () => new Promise((resolve) => realSetImmediate(resolve));

const clock = FakeTimers.install({
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
});
// Imported only now, so that every library (and ebb's bound performance.now) sees the fake clock.
const { loadSubject } = await import('../subjects.mjs');
const subject = await loadSubject(id);
const call = subject.outage[config];
if (!call) throw new Error(`${id} has no outage configuration ${config}`);

Math.random = splitmix32(seed * 2 + 1);
const startOf = splitmix32(seed * 2 + 2);

const t0 = clock.now;
const arrivals = [];
const servedIn = new Map();
let requests = 0;
let pending = CLIENTS;
let served = 0;
let gaveUp = 0;
let lastServed = Number.NaN;
let lastSettled = Number.NaN;

// No stack traces: nothing reads them here, and a library that retries in a hot loop would
// otherwise spend most of the run capturing them.
Error.stackTraceLimit = 0;
// A 503 as an HTTP client surfaces it: status for the generic libraries, $metadata for the AWS SDK.
const unavailable = () =>
  Object.assign(new Error('503 Service Unavailable'), { status: 503, $metadata: { httpStatusCode: 503 } });

function request() {
  const t = clock.now - t0;
  requests++;
  arrivals.push(t);
  let ok = false;
  if (t >= DOWN_MS) {
    const second = Math.floor(t / 1000);
    const used = servedIn.get(second) ?? 0;
    if (used < CAPACITY) {
      servedIn.set(second, used + 1);
      ok = true;
    }
  }
  return new Promise((resolve, reject) => setTimeout(ok ? resolve : () => reject(unavailable()), LATENCY_MS));
}

const settle = (ok) => () => {
  const t = clock.now - t0;
  if (ok) {
    served++;
    lastServed = t;
  } else gaveUp++;
  lastSettled = t;
  pending--;
};
for (let i = 0; i < CLIENTS; i++) {
  setTimeout(() => call(request).then(settle(true), settle(false)), startOf() * 1000);
}

let truncated = false;
for (;;) {
  await flush();
  if (pending === 0) break;
  if (clock.countTimers() === 0) throw new Error(`${id} ${config}: ${pending} clients wait, but no timer is set`);
  if (clock.now - t0 > LIMIT_MS || requests > MAX_REQUESTS) {
    truncated = true;
    break;
  }
  clock.next();
  clock.tick(1);
}

/** The most arrivals in any window [t, t + 1000) of the sorted times from index `from` to `to`. */
function peak(times, from, to) {
  let best = 0;
  for (let lo = from, hi = from; hi < to; hi++) {
    while (times[hi] - times[lo] >= 1000) lo++;
    if (hi - lo + 1 > best) best = hi - lo + 1;
  }
  return best;
}
let recovery = 0;
while (recovery < arrivals.length && arrivals[recovery] < DOWN_MS) recovery++;
const afterRecovery = (t) => (Number.isNaN(t) || t < DOWN_MS ? null : Math.round(t - DOWN_MS) / 1000);

clock.uninstall();
process.stdout.write(
  `${JSON.stringify({
    subject: id,
    config,
    call: subject.calls[config],
    seed,
    clients: CLIENTS,
    requests,
    amplification: requests / CLIENTS,
    peakDuringOutage: peak(arrivals, 0, recovery),
    peakAfterRecovery: peak(arrivals, recovery, arrivals.length),
    served,
    gaveUp,
    lastServedS: afterRecovery(lastServed),
    settledS: afterRecovery(lastSettled),
    truncated,
  })}\n`,
);
process.exit(0);
