import { afterEach, expect } from 'vitest';

/**
 * A suite-wide trap: any promise rejection nobody handles during a test fails that test (and
 * so the run), even where Vitest would only print it. ebb must never leave a rejection
 * unhandled — not after an abort, a timeout or an abandoned attempt.
 */
export const unhandled: unknown[] = [];

process.on('unhandledRejection', (reason) => {
  unhandled.push(reason);
});

afterEach(async () => {
  // Rejections are reported after the microtask queue drains; give them one macrotask turn.
  await new Promise((resolve) => setImmediate(resolve));
  const seen = unhandled.splice(0);
  expect(seen, 'unhandled promise rejections during this test').toEqual([]);
});
