// Shared by the executor's tests on the system clock. Not part of the package.
import { vi } from 'vitest';

/**
 * Counts the host timers armed through the global `setTimeout` after this call that have
 * neither fired nor been cleared — the timers the code under test holds.
 *
 * Why not `process.getActiveResourcesInfo()`: it counts every `Timeout` in the worker, the test
 * runner's own included. Vitest sends task updates through a 100 ms throttle timer
 * (`@vitest/runner`, `throttle(sendTasksUpdate, 100)`) armed when a test starts; when it fires
 * between two readings, the count drops by one whatever the code did. That made the host-timer
 * test of retry-boundaries.test.ts fail once under the mutation config, where tests run slower.
 *
 * Call `restore()` in a `finally`.
 */
export function trackHostTimers(): { readonly live: number; restore(): void } {
  const live = new Set<unknown>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
    callback: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    const handle = realSet(() => {
      live.delete(handle);
      callback(...args);
    }, ms);
    live.add(handle);
    return handle;
  }) as typeof setTimeout);
  const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    // A handle converted to its number (as the browser build keeps it) clears the same timer.
    for (const h of live) if (h === handle || (typeof handle === 'number' && Number(h) === handle)) live.delete(h);
    realClear(handle);
  });
  return {
    get live() {
      return live.size;
    },
    restore() {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}
