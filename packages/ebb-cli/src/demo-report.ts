// What `ebb demo` prints: the side-by-side table and the verdict, derived from the figures.

import { policySentence } from './demo-policy.js';
import { type DemoSettings, PEAK_WINDOW_MS, type RunSummary } from './demo-settings.js';
import { formatDuration } from './duration.js';

const fixed2 = (x: number | null) => (x === null ? '—' : x.toFixed(2));
export const seconds = (ms: number) => formatDuration(Math.round(ms / 10) * 10);

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
