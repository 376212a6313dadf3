// The libraries measured, each wrapped the same way. Issue #7 adds the peers here; every subject
// provides:
//   successPath(fn)            → () => Promise: one call that succeeds at once
//   pendingAfterOneFailure(ms) → () => Promise: an operation that fails once, then sleeps ms
import { constant, retry } from 'ebb';

export async function subjects() {
  return [
    {
      name: 'ebb',
      successPath: (fn) => () => retry(fn),
      pendingAfterOneFailure: (ms) => {
        const backoff = constant({ delayMs: ms, maxAttempts: 2 });
        const shared = new Error('once');
        const fail = () => Promise.reject(shared);
        return () => retry(fail, { backoff });
      },
    },
  ];
}
