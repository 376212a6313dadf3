import { describe, expect, it } from 'vitest';
import { measureOutage, outageLine } from './demo-outage.js';

describe("the demo's outage line: withRetry's defaults against a service that answers every request 503", () => {
  it('measures about 1.2 requests a call with the default budget (at most 1.2 per call + the floor of 10), 5 without', async () => {
    const o = await measureOutage(1, 400, 20);
    expect(o.requests).toBeLessThanOrEqual(1.2 * 400 + 10);
    expect(o.requests).toBeGreaterThanOrEqual(1.15 * 400);
    expect(o.requestsWithoutBudget).toBe(5 * 400);
  });

  it('quotes the figures it measured, as a person reads them', () => {
    expect(outageLine({ calls: 400, perSecond: 20, requests: 481, requestsWithoutBudget: 2_000 })).toBe(
      "A service that is down (every answer 503): 400 calls at 20/s through withRetry's defaults sent it 481 requests " +
        '(1.20 a call; its retry budget), 2000 with budget: false (5.00 a call).',
    );
  });

  it('measured, not assumed: at 2 calls a second the window holds too few calls for 20 % to reach the floor, so the floor rules', async () => {
    // 2 calls a second hold 20 calls in the window: 20 % is 4, below the floor of 10, so the floor rules.
    const o = await measureOutage(1, 100, 2);
    expect(o.requests / o.calls).toBeGreaterThan(1.2);
    expect(o.requestsWithoutBudget).toBe(500);
  });
});
