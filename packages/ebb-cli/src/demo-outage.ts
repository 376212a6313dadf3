// The demo's last line: what withRetry's default retry budget saves a service that is down,
// measured by running withRetry itself (its defaults, its budget) in virtual time.
import { seeded, virtualClock } from 'ebb';
import { withRetry } from 'ebb/http';

/** A run of calls against a service that answers every request 503. */
export interface OutageFigure {
  /** Logical calls made through withRetry. */
  readonly calls: number;
  /** Their arrival rate, calls per second of virtual time. */
  readonly perSecond: number;
  /** Requests the service received with withRetry's defaults (its retry budget per origin). */
  readonly requests: number;
  /** Requests it received with the same policy and `budget: false`. */
  readonly requestsWithoutBudget: number;
}

/**
 * Runs `calls` calls, `perSecond` a second, through `withRetry(fetch, { clock, random })` — the
 * default policy and retry budget — against a fetch that answers 503 at once, and again with
 * `budget: false`; counts the requests each sent. Virtual time: the same seed gives the same
 * figures on any machine.
 */
export async function measureOutage(seed: number, calls = 400, perSecond = 20): Promise<OutageFigure> {
  const run = async (budget: boolean): Promise<number> => {
    const clock = virtualClock();
    let requests = 0;
    const down = async (_input: string): Promise<Response> => {
      requests++;
      return new Response(null, { status: 503 });
    };
    const f = withRetry(down, { clock, random: seeded(seed), ...(budget ? {} : { budget: false }) });
    const ended: Promise<unknown>[] = [];
    for (let i = 0; i < calls; i++) {
      ended.push(f('http://service.example/work'));
      await clock.advance(1_000 / perSecond);
    }
    await clock.runAll();
    await Promise.all(ended);
    return requests;
  };
  return { calls, perSecond, requests: await run(true), requestsWithoutBudget: await run(false) };
}

/** One line quoting the figure. */
export function outageLine(o: OutageFigure): string {
  return (
    `A service that is down (every answer 503): ${o.calls} calls at ${o.perSecond}/s through withRetry's defaults ` +
    `sent it ${o.requests} requests (${(o.requests / o.calls).toFixed(2)} a call; its retry budget), ` +
    `${o.requestsWithoutBudget} with budget: false (${(o.requestsWithoutBudget / o.calls).toFixed(2)} a call).`
  );
}
