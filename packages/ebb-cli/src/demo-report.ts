// What `ebb demo` prints: the side-by-side table and the verdict, derived from the figures.

import { policySentence } from './demo-policy.js';
import { type DemoSettings, PEAK_WINDOW_MS, type RunSummary } from './demo-settings.js';
import { formatDuration } from './duration.js';

const fixed2 = (x: number | null) => (x === null ? '—' : x.toFixed(2));
export const seconds = (ms: number) => formatDuration(Math.round(ms / 10) * 10);

/** What the figures show, and the sentences that say it, built from them. */
export interface Verdict {
  /**
   * True when the jittered crowd served more clients, with fewer requests per success, and the
   * lockstep crowd left some clients without an answer: jitter helped, on these figures.
   */
  readonly jitterHelps: boolean;
  /** True when jitter helped and served every client: the same retries fit. */
  readonly jitterFits: boolean;
  /**
   * The most requests the server could complete while the jittered crowd kept trying
   * (`maxConcurrent` at once, `workMs` each, over its `lastDoneMs`): an upper bound on the
   * clients it could serve, whatever the policy's jitter.
   */
  readonly serverRoom: number;
  readonly lines: readonly string[];
}

/** The server's size, as the verdict quotes it. */
export interface ServerSize {
  readonly maxConcurrent: number;
  readonly workMs: number;
}

/**
 * The closing words, derived from the two runs' figures and the server's size: every claim is a
 * comparison of the numbers it quotes. Jitter that served everyone "fits"; jitter that served
 * more but not everyone says how many still gave up and, when the crowd outnumbers what the server
 * could complete in the time the crowd kept trying, that jitter spreads retries but adds no
 * capacity. When the figures do not show jitter helping, it says so and why.
 */
export function verdict(plain: RunSummary, jittered: RunSummary, server: ServerSize): Verdict {
  const perSuccess = (r: RunSummary) => r.requestsPerSuccess ?? Infinity;
  const moreServed = jittered.served > plain.served;
  const cheaper = perSuccess(jittered) < perSuccess(plain);
  const lockstepFailed = plain.gaveUp > 0;
  const calmer = jittered.peakRetries < plain.peakRetries;
  // Over the time as printed (to 10 ms), so a reader can redo the product; rounding up only loosens the bound.
  const shownMs = Math.round(jittered.lastDoneMs / 10) * 10;
  const serverRoom = Math.floor((server.maxConcurrent * Math.max(shownMs, jittered.lastDoneMs)) / server.workMs);
  const jitterHelps = moreServed && cheaper && lockstepFailed;
  const jitterFits = jitterHelps && jittered.gaveUp === 0;
  if (jitterHelps) {
    const together = calmer
      ? `retries came back together (up to ${plain.peakRetries} in ${PEAK_WINDOW_MS} ms, against ${jittered.peakRetries} with jitter)`
      : `up to ${plain.peakRetries} retries came in ${PEAK_WINDOW_MS} ms`;
    const cost =
      plain.requestsPerSuccess === null
        ? `at ${fixed2(jittered.requestsPerSuccess)} requests per success, where lockstep served no one`
        : `at ${fixed2(jittered.requestsPerSuccess)} requests per success instead of ${fixed2(plain.requestsPerSuccess)}`;
    const more = `(${jittered.served - plain.served} more)`;
    const lines = [
      `In lockstep, the crowd kept failing: ${together},`,
      `${plain.shed > 0 ? 'met a full server, and ' : 'and '}${plain.gaveUp} of ${plain.clients} clients gave up after ${plain.requests} requests.`,
    ];
    if (jitterFits) {
      lines.push(`With jitter, the same retries fit: all ${jittered.clients} served ${more}, ${cost}.`);
    } else {
      const over = `in the ${seconds(jittered.lastDoneMs)} the crowd kept trying (${server.maxConcurrent} at once, ${server.workMs} ms each)`;
      lines.push(
        `With jitter, more got through: ${jittered.served} of ${jittered.clients} served ${more}, ${cost};`,
        ...(serverRoom < jittered.clients
          ? [
              `yet ${jittered.gaveUp} still gave up: the server could complete at most ${serverRoom} requests ${over},`,
              `fewer than the ${jittered.clients} clients. Jitter spreads retries out but adds no capacity: fewer clients need less,`,
              'and a policy that keeps trying for longer gives the server more time.',
            ]
          : [
              `yet ${jittered.gaveUp} still gave up, though the server could complete ${serverRoom} requests ${over}:`,
              'some retries still met a full server.',
            ]),
      );
    }
    return { jitterHelps, jitterFits, serverRoom, lines };
  }
  if (!lockstepFailed) {
    return {
      jitterHelps,
      jitterFits,
      serverRoom,
      lines: [
        `Lockstep served all ${plain.clients} ${plain.clients === 1 ? 'client' : 'clients'} too` +
          (jittered.served === jittered.clients ? ', as jitter did' : `; jitter served ${jittered.served}`) +
          ': this server had room for the crowd, so these figures cannot show jitter helping.',
        'Try more clients (--clients).',
      ],
    };
  }
  const why: string[] = [];
  if (!moreServed) why.push(`jitter served ${jittered.served}, lockstep ${plain.served}`);
  if (!cheaper)
    why.push(
      `jitter took ${fixed2(jittered.requestsPerSuccess)} requests per success, lockstep ${fixed2(plain.requestsPerSuccess)}`,
    );
  return {
    jitterHelps,
    jitterFits,
    serverRoom,
    lines: [`These figures do not show jitter helping: ${why.join('; ')}.`, 'Try a different --seed.'],
  };
}

/** The side-by-side table, and the verdict under it. */
export function summary(settings: DemoSettings, runs: readonly RunSummary[], v: Verdict): string {
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
  const policy = policySentence(settings.baseDelayMs, settings.policy);
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
