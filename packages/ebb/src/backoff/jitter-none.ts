import type { Jitter } from './jitter.js';

/**
 * No jitter: every wait is the curve's delay `d`. For schedules a source fixes exactly (SIP's
 * timers, a polling interval) and for tests; clients that retry against a shared service come
 * back in lockstep without jitter.
 */
export const noJitter: Jitter = /* @__PURE__ */ Object.freeze({
  name: 'none',
  toString: () => 'no jitter',
  draw: (d: number) => d,
  span: (d: number) => [d, d] as const,
});
