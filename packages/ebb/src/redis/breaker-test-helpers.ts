// Shared by the shared circuit breaker's tests in virtual time. Not part of the package.
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';

/** Lets the promise chains a report or a claim starts run to their end (five turns of the event loop). */
export const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** The open periods the tests assert on: 1 s, then 2, 4 and 8 s, exactly (no jitter), forever. */
export const OPEN = exponential({
  initialDelayMs: 1000,
  multiplier: 2,
  maxDelayMs: 8000,
  jitter: noJitter,
  maxAttempts: Infinity,
});
