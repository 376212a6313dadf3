import { afterAll, expect } from 'vitest';

/**
 * A suite-wide check that nothing is left running: after each test file, no more host timers
 * and no more TCP sockets or servers are active than when the file began. A retry that settled
 * but left its timer armed, a test server not stopped, a client socket not closed — each fails
 * the file that left it.
 */
const KINDS = ['Timeout', 'TCPSocketWrap', 'TCPServerWrap'];

function counts(): Map<string, number> {
  const m = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) if (KINDS.includes(kind)) m.set(kind, (m.get(kind) ?? 0) + 1);
  return m;
}

const baseline = counts();

/** What is active beyond the file's baseline, as `Kind ×n` lines (empty when nothing). */
export function leftOver(base: Map<string, number> = baseline): string[] {
  const now = counts();
  return KINDS.filter((k) => (now.get(k) ?? 0) > (base.get(k) ?? 0)).map(
    (k) => `${k} ×${(now.get(k) ?? 0) - (base.get(k) ?? 0)}`,
  );
}

afterAll(async () => {
  // A socket closes a few turns of the event loop after its peer or server ends: allow up to 2 s.
  const until = Date.now() + 2_000;
  let left: string[];
  do {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = leftOver();
  } while (left.length > 0 && Date.now() < until);
  expect(left, 'timers or sockets still active at the end of this test file').toEqual([]);
});
