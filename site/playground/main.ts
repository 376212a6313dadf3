// The playground: a policy's exact schedule (describePolicy), a sampled distribution (sample),
// and three of ebb/sim's simulations, all running in the page on ebb's browser build.
import {
  type Backoff,
  describePolicy,
  exponential,
  findPreset,
  formatMs,
  jitterNamed,
  noJitter,
  presetCatalog,
  sample,
  seeded,
  withOptions,
} from 'ebb';
import { circuitBreaker } from 'ebb/resilience';
import { simulateBreakerOutage, simulateContention, simulateOverload } from 'ebb/sim';
import { barChart, lineChart } from './charts.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const num = (id: string) => Number($<HTMLInputElement>(id).value);
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#bf8700', '#8250df'];

const presetSelect = $<HTMLSelectElement>('preset');
presetSelect.append(new Option('custom (the fields)', 'custom'));
for (const p of presetCatalog) presetSelect.append(new Option(`${p.id} — ${p.title}`, p.id));
presetSelect.value = 'default';

/** The policy the page shows: the preset chosen, or the one the fields describe. */
function currentPolicy(): Backoff {
  const id = presetSelect.value;
  if (id !== 'custom') {
    const p = findPreset(id);
    if (!p) throw new Error(`no preset ${id}`);
    return p.backoff;
  }
  const elapsed = $<HTMLInputElement>('maxElapsedMs').value.trim();
  return exponential({
    initialDelayMs: num('initialDelayMs'),
    multiplier: num('multiplier'),
    maxDelayMs: num('maxDelayMs'),
    jitter: jitterNamed($<HTMLSelectElement>('jitter').value),
    maxAttempts: num('maxAttempts'),
    ...(elapsed === '' ? {} : { maxElapsedMs: Number(elapsed) }),
  });
}

function cell(row: HTMLTableRowElement, value: number, key: string): void {
  const td = row.insertCell();
  td.className = 'num';
  td.textContent = formatMs(value);
  td.dataset[key] = String(value);
}

function showSchedule(): void {
  const error = $('error');
  error.textContent = '';
  let policy: Backoff;
  try {
    policy = currentPolicy();
  } catch (e) {
    error.textContent = String((e as Error).message);
    return;
  }
  const rows = Math.max(1, Math.min(100, Math.floor(num('rows')) || 10));
  const s = describePolicy(policy, rows);
  $('summary').textContent = String(policy);
  const body = $<HTMLTableElement>('schedule').tBodies[0] as HTMLTableSectionElement;
  body.replaceChildren();
  for (const r of s.rows) {
    const tr = body.insertRow();
    const a = tr.insertCell();
    a.className = 'num';
    a.textContent = String(r.attempt);
    a.dataset.attempt = String(r.attempt);
    cell(tr, r.delayMs, 'delayMs');
    cell(tr, r.minDelayMs, 'minDelayMs');
    cell(tr, r.maxDelayMs, 'maxDelayMs');
    cell(tr, r.meanDelayMs, 'meanDelayMs');
  }
  $('stops').textContent =
    s.stopsAfterAttempt === null
      ? `No stop within ${rows} rows.`
      : `The policy gives up after attempt ${s.stopsAfterAttempt}.`;
  $<HTMLTableElement>('schedule').dataset.policy = presetSelect.value;
  showHistogram(policy);
}

function showHistogram(policy: Backoff): void {
  const random = seeded(7);
  const totals: number[] = [];
  for (let i = 0; i < 2_000; i++) totals.push(sample(policy, { random, count: 1_000 }).reduce((a, b) => a + b, 0));
  const max = Math.max(...totals);
  const bins = 40;
  const width = max > 0 ? max / bins : 1;
  const counts = new Array<number>(bins).fill(0);
  for (const t of totals) {
    const i = Math.min(bins - 1, Math.floor(t / width));
    counts[i] = (counts[i] ?? 0) + 1;
  }
  const points = counts.flatMap((c, i) => [[i * width, c] as const, [(i + 1) * width, c] as const]);
  lineChart(
    $('histogram') as unknown as SVGSVGElement,
    [
      {
        name: `total wait (ms), mean ${formatMs(totals.reduce((a, b) => a + b, 0) / totals.length)}`,
        color: COLORS[0] as string,
        points,
      },
    ],
    'total wait of a run, ms',
    'runs',
  );
}

presetSelect.addEventListener('change', showSchedule);
for (const id of ['initialDelayMs', 'multiplier', 'maxDelayMs', 'jitter', 'maxAttempts', 'maxElapsedMs']) {
  $(id).addEventListener('input', () => {
    presetSelect.value = 'custom';
    showSchedule();
  });
}
$('rows').addEventListener('input', showSchedule);

/** Runs `work` with its button disabled, after letting the page paint. */
function button(id: string, work: () => Promise<void> | void): void {
  const b = $<HTMLButtonElement>(id);
  b.addEventListener('click', async () => {
    b.disabled = true;
    await new Promise((r) => setTimeout(r, 0));
    try {
      await work();
    } finally {
      b.disabled = false;
    }
  });
}

button('run-contention', () => {
  const results = simulateContention({ clients: num('contention-clients'), runs: num('contention-runs') });
  const labels = results.map((r) => r.strategy);
  barChart(
    $('chart-contention') as unknown as SVGSVGElement,
    labels,
    [{ name: 'writes sent (the work)', color: COLORS[0] as string, values: results.map((r) => r.calls) }],
    'writes',
  );
  barChart(
    $('chart-contention-time') as unknown as SVGSVGElement,
    labels,
    [
      {
        name: 'time until the last client is done (ms)',
        color: COLORS[1] as string,
        values: results.map((r) => r.timeMs),
      },
    ],
    'ms',
  );
});

button('run-overload', async () => {
  const policy = currentPolicy();
  const crowd = {
    clients: num('overload-clients'),
    capacityPerSecond: num('overload-capacity'),
    queueLimit: 20,
    outageMs: num('overload-outage'),
    binMs: 100,
  };
  const [mine, lockstep] = [
    await simulateOverload({ ...crowd, backoff: policy }),
    await simulateOverload({ ...crowd, backoff: withOptions(policy, { jitter: noJitter }) }),
  ];
  const line = (name: string, color: string, r: typeof mine) => ({
    name,
    color,
    points: r.series.map((b) => [b.startMs / 1000, b.offeredPerSecond] as const),
  });
  lineChart(
    $('chart-overload') as unknown as SVGSVGElement,
    [line('your policy', COLORS[0] as string, mine), line('without jitter', COLORS[1] as string, lockstep)],
    'time, s',
    'requests offered per second',
  );
  $('overload-summary').textContent =
    `your policy: ${mine.served} of ${mine.clients} served, ${mine.requests} requests, peak after recovery ${mine.peakOfferedPerSecondAfterRecovery}/s; ` +
    `without jitter: ${lockstep.served} served, ${lockstep.requests} requests, peak ${lockstep.peakOfferedPerSecondAfterRecovery}/s`;
});

button('run-outage', async () => {
  const none = await simulateBreakerOutage({});
  const withBreaker = await simulateBreakerOutage({
    breaker: ({ clock, random }) => circuitBreaker({ clock, random }),
  });
  const line = (name: string, color: string, r: typeof none) => ({
    name,
    color,
    points: r.series.map((b) => [b.startMs / 1000, b.requestsPerSecond] as const),
  });
  lineChart(
    $('chart-outage') as unknown as SVGSVGElement,
    [line('no breaker', COLORS[1] as string, none), line('circuitBreaker()', COLORS[0] as string, withBreaker)],
    'time, s',
    'requests reaching the service per second',
  );
  $('outage-summary').textContent =
    `requests to the dead service: ${none.deadRequests} without a breaker, ${withBreaker.deadRequests} with one`;
});

showSchedule();
document.body.dataset.playground = 'ready';
