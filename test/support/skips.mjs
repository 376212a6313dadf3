// The real servers and tools some suites need, what installs them, and the record of the suites
// skipped for want of them: `npm test` ends with one line that names every skipped suite and the
// one command that installs what they need (test/support/skip-summary.ts prints it).
//
// Plain JavaScript, so that the helpers the benchmarks share (test/rate/support/limiters.mjs,
// test/redis/support/redis-server.mjs) can record too; outside `npm test` recording does nothing.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each need, in words, with the Debian packages that install it (the lists .ci/run installs). */
export const NEEDS = {
  'redis-server': { what: 'redis-server', packages: ['redis-server'] },
  nginx: { what: 'nginx', packages: ['nginx-light'] },
  haproxy: { what: 'HAProxy', packages: ['haproxy'] },
  'google-http-client': {
    what: "a JDK and Google's HTTP client",
    packages: ['default-jdk-headless', 'libgoogle-http-client-java'],
  },
  'grpc-java': { what: 'a JDK and grpc-java', packages: ['default-jdk-headless', 'libgrpc-java'] },
  chromium: { what: 'Chromium', packages: ['chromium'] },
};

/** The file the records go to; set for `npm test` by vitest.config.ts. */
export const SKIPS_FILE_ENV = 'EBB_TEST_SKIPS_FILE';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Records that the test file calling this (found on the stack) skips suites because `need` is
 * not installed. Does nothing outside `npm test`.
 */
export function recordSkip(need) {
  if (!(need in NEEDS))
    throw new TypeError(`recordSkip: unknown need ${need}; needs: ${Object.keys(NEEDS).join(', ')}`);
  const file = process.env[SKIPS_FILE_ENV];
  if (!file) return;
  const caller = /(?:file:\/\/)?(\/[^\s():]+\.test\.[cm]?[jt]s)/.exec(new Error().stack ?? '')?.[1];
  const suite = caller === undefined ? '(unknown file)' : relative(ROOT, caller);
  appendFileSync(file, `${JSON.stringify({ suite, need })}\n`);
}

/**
 * The one line for a list of records: every suite, grouped by what it needs, and the apt-get
 * command that installs all of it (with sudo unless `root`). Undefined when nothing was skipped.
 */
export function skipLine(records, root) {
  const byNeed = new Map();
  for (const { suite, need } of records) {
    const suites = byNeed.get(need) ?? new Set();
    suites.add(suite);
    byNeed.set(need, suites);
  }
  if (byNeed.size === 0) return undefined;
  const suites = new Set(records.map((r) => r.suite));
  const needs = [...byNeed.keys()].sort();
  const packages = [...new Set(needs.flatMap((n) => NEEDS[n].packages))].sort();
  const groups = needs.map((n) => `${[...byNeed.get(n)].sort().join(', ')} (${NEEDS[n].what})`);
  return (
    `npm test skipped ${suites.size} ${suites.size === 1 ? 'suite' : 'suites'} for want of what is not installed here: ` +
    `${groups.join('; ')}. Install it with: ${root ? '' : 'sudo '}apt-get install -y --no-install-recommends ${packages.join(' ')}`
  );
}
