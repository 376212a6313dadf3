// ebb's googleExponentialBackoff against Google's own ExponentialBackOff: the class in the jar of
// Debian's libgoogle-http-client-java (1.42.0), driven by test/fidelity/java/…/EbbGoogleDriver.java,
// which this test compiles into a temporary directory. Same options, same random values, same
// attempt durations: the same waits, digit for digit, and STOP at the same call; and the
// builder refuses the same options.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Clock,
  googleExponentialBackoff,
  noJitter,
  RetryError,
  retry,
  seeded,
  virtualClock,
  withOptions,
} from 'ebb';
import { afterAll, describe, expect, it } from 'vitest';
import { recordSkip } from '../support/skips.mjs';

const JAR = '/usr/share/java/google-http-client.jar';
// Its Preconditions delegate to Guava's (libguava-java, a dependency of the Debian package).
const GUAVA = '/usr/share/java/guava.jar';
const SOURCE = fileURLToPath(new URL('./java/com/google/api/client/util/EbbGoogleDriver.java', import.meta.url));

function javaTools(): string | undefined {
  for (const jar of [JAR, GUAVA]) {
    if (!existsSync(jar)) return `${jar} is missing (Debian package libgoogle-http-client-java)`;
  }
  for (const tool of ['javac', 'java']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0) {
      return `${tool} is missing (Debian package default-jdk-headless)`;
    }
  }
  return undefined;
}

const missing = javaTools();
// CI installs both packages (.ci/run); there a missing tool is a failure, not a skip.
if (missing && process.env.CI) {
  throw new Error(`test/fidelity/google.test.ts needs Java and Google's jar in CI: ${missing}`);
}
if (missing) {
  console.warn(`skipping the Google differential: ${missing}`);
  recordSkip('google-http-client');
}

let classes: string | undefined;
afterAll(() => {
  if (classes) rmSync(classes, { recursive: true, force: true });
});

/** Runs the Java driver over `lines` (one case each) and returns its output lines. */
function runJava(lines: string[]): string[] {
  if (!classes) {
    classes = mkdtempSync(join(tmpdir(), 'ebb-google-'));
    execFileSync('javac', ['-nowarn', '-cp', JAR, '-d', classes, SOURCE], { stdio: 'pipe' });
  }
  const out = execFileSync(
    'java',
    ['-Xshare:auto', '-cp', `${classes}:${JAR}:${GUAVA}`, 'com.google.api.client.util.EbbGoogleDriver'],
    {
      input: `${lines.join('\n')}\n`,
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return out.toString('utf8').trimEnd().split('\n');
}

interface Case {
  readonly options: readonly [initial: number, factor: number, multiplier: number, max: number, budget: number];
  readonly randoms: readonly number[];
  /** Attempt durations in whole microseconds. */
  readonly durationsUs: readonly number[];
}

const line = (c: Case): string => `${c.options.join(' ')} ; ${c.randoms.join(' ')} ; ${c.durationsUs.join(' ')}`;

/** ebb's answer to a case, in the driver's format. */
function runEbb(c: Case, viaClock: boolean): string {
  const [initialIntervalMs, randomizationFactor, multiplier, maxIntervalMs, maxElapsedTimeMs] = c.options;
  let policy: ReturnType<typeof googleExponentialBackoff>;
  try {
    policy = googleExponentialBackoff({
      initialIntervalMs,
      randomizationFactor,
      multiplier,
      maxIntervalMs,
      maxElapsedTimeMs,
    });
  } catch (error) {
    if (error instanceof RangeError) return 'REFUSED';
    throw error;
  }
  let us = 0; // the elapsed time in whole microseconds, as the Java clock counts it (in ns)
  let i = 0;
  const clock: Clock = { now: () => us / 1000, sleep: () => Promise.resolve() };
  const run = policy.start(() => c.randoms[i % c.randoms.length] as number, clock);
  const out: string[] = [];
  for (; i < c.durationsUs.length; i++) {
    us += c.durationsUs[i] as number;
    const wait = viaClock ? run.next() : (run as { next(elapsedMs: number): number }).next(us / 1000);
    if (wait === -1) {
      out.push('S');
      break;
    }
    out.push(String(wait));
    us += wait * 1000;
  }
  return out.join(' ');
}

/** Random values every option set is run with (each alone), then a random mix. */
const GRID = [0, 1 - 2 ** -53, 0.5, 0.33, 0.34, 0.66, 0.67, 0.99, 2 ** -53, 0.25, 0.75];

function cases(): { valid: Case[]; refused: Case[] } {
  const r = seeded(20_261_122);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const JAVA_INT_MAX = 2_147_483_647;
  const durations = (): number[] => {
    // Several kinds of attempt: instant, short, whole ms, long (some past the budget at once).
    const kind = int(0, 3);
    return Array.from({ length: 60 }, () =>
      kind === 0 ? 0 : kind === 1 ? int(0, 999) : kind === 2 ? int(0, 50) * 1000 : int(0, 5_000_000),
    );
  };
  const valid: Case[] = [];
  for (let k = 0; k < 1_200; k++) {
    const initial = pick([1, 2, 3, 7, 100, 500, 1000, int(1, 5_000), int(1, 1_000_000), JAVA_INT_MAX - int(0, 10)]);
    const factor = pick([0, 0.5, 0.1, 0.999_999_999_999, r(), r() * 0.01]);
    const multiplier = pick([1, 1.001, 1.2, 1.5, 1.6, 2, 3, Infinity, 1 + r() * 3, 1 + r() * 1e-6]);
    const max = pick([
      initial,
      Math.min(JAVA_INT_MAX, initial + int(0, 10)),
      JAVA_INT_MAX,
      Math.min(JAVA_INT_MAX, initial * int(1, 1000)),
    ]);
    const budget = pick([1, 1000, 900_000, int(1, 60_000), int(1, 10_000_000), JAVA_INT_MAX]);
    const options = [initial, factor, multiplier, max, budget] as const;
    const d = durations();
    for (const g of GRID) valid.push({ options, randoms: [g], durationsUs: d });
    valid.push({ options, randoms: Array.from({ length: 60 }, () => r()), durationsUs: durations() });
  }
  // The builder's Preconditions: initial > 0, 0 <= factor < 1, multiplier >= 1, max >= initial, budget > 0.
  const refused: Case[] = [];
  const bad: Case['options'][] = [
    [0, 0.5, 1.5, 60_000, 900_000],
    [-1, 0.5, 1.5, 60_000, 900_000],
    [500, 1, 1.5, 60_000, 900_000],
    [500, -0.1, 1.5, 60_000, 900_000],
    [500, Number.NaN, 1.5, 60_000, 900_000],
    [500, 0.5, 0.999, 60_000, 900_000],
    [500, 0.5, Number.NaN, 60_000, 900_000],
    [500, 0.5, -Infinity, 60_000, 900_000],
    [500, 0.5, 1.5, 499, 900_000],
    [500, 0.5, 1.5, 60_000, 0],
    [500, 0.5, 1.5, 60_000, -1],
    [-JAVA_INT_MAX - 1, 0.5, 1.5, 60_000, 900_000],
    // Not a Java int: Integer.parseInt throws NumberFormatException, an IllegalArgumentException.
    [500, 0.5, 1.5, JAVA_INT_MAX + 1, 900_000],
    [500, 0.5, 1.5, 60_000, JAVA_INT_MAX + 1],
  ];
  for (let k = 0; k < 200; k++) {
    const initial = int(1, 100_000);
    bad.push(
      pick([
        [-int(0, 1000), r(), 1 + r(), initial, 1000],
        [initial, 1 + r(), 1.5, initial, 1000],
        [initial, r(), r(), initial, 1000],
        [initial, r(), 1.5, initial - int(1, initial), 1000],
        [initial, r(), 1.5, initial, -int(0, 1000)],
      ] as Case['options'][]),
    );
  }
  for (const options of bad) refused.push({ options, randoms: [0.5], durationsUs: [0] });
  return { valid, refused };
}

describe.skipIf(missing !== undefined)("googleExponentialBackoff against Google's ExponentialBackOff (Java)", () => {
  it('gives the same waits and STOP digit for digit over 1,200 option sets × 12 random sequences, and refuses what Java refuses', () => {
    const { valid, refused } = cases();
    const all = [...valid, ...refused];
    const java = runJava(all.map(line));
    expect(java).toHaveLength(all.length);
    const differences: string[] = [];
    let stopped = 0;
    let refusedByJava = 0;
    all.forEach((c, k) => {
      const theirs = java[k] as string;
      const ours = runEbb(c, k % 2 === 1);
      if (theirs.endsWith('S')) stopped++;
      if (theirs === 'REFUSED') refusedByJava++;
      if (ours !== theirs && differences.length < 5) differences.push(`${line(c)}\n  java: ${theirs}\n  ebb:  ${ours}`);
    });
    expect(differences).toEqual([]);
    // The cases exercise what they claim: most runs reach STOP, and every bad option set is refused.
    expect(refusedByJava).toBe(refused.length);
    expect(stopped).toBeGreaterThan(valid.length / 2);
  });
});

describe("googleExponentialBackoff through retry(): Google's stop rule, not ebb's deadline", () => {
  it('budget 1000 ms, 500 ms ×1.5, no jitter: 3 calls, at 0, 500 and 1250 ms (the second wait ends past the budget)', async () => {
    const clock = virtualClock(5_000);
    const policy = googleExponentialBackoff({
      initialIntervalMs: 500,
      multiplier: 1.5,
      randomizationFactor: 0,
      maxElapsedTimeMs: 1_000,
      clock,
    });
    const calls: number[] = [];
    const done = retry(
      () => {
        calls.push(clock.now() - 5_000);
        throw new Error('down');
      },
      { backoff: policy, clock },
    );
    const settled = done.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await clock.runAll();
    const error = await settled;
    expect(calls).toEqual([0, 500, 1_250]);
    expect(error).toBeInstanceOf(RetryError);
    // ebb's own rule on the same curve gives up before the wait that would end past 1000 ms: 2 calls.
    const ebbRule = withOptions(policy, { jitter: noJitter });
    const ebbCalls: number[] = [];
    const ebbDone = retry(
      () => {
        ebbCalls.push(clock.now());
        throw new Error('down');
      },
      { backoff: ebbRule, clock },
    ).catch(() => undefined);
    await clock.runAll();
    await ebbDone;
    expect(ebbCalls).toHaveLength(2);
  });
});
