// ebb's gRPC pieces against gRPC's own code:
// - `tokenBudget` (gRFC A6 retry throttling) against @grpc/grpc-js 1.14.7's `RetryThrottler` and
//   `validateRetryThrottling` (build/src/retrying-call.js, service-config.js);
// - `presets.grpcConnect` against grpc-java's `ExponentialBackoffPolicy` (io.grpc.internal, the
//   grpc-core 1.41.3 jar of Debian's libgrpc-java), driven by test/fidelity/java/io/grpc/internal/
//   EbbGrpcBackoffDriver.java, compiled here into a temporary directory.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { presets, seeded } from 'ebb';
import { tokenBudget } from 'ebb/rate';
import { afterAll, describe, expect, it } from 'vitest';
import { recordSkip } from '../support/skips.mjs';

const require = createRequire(import.meta.url);
const { RetryThrottler } = require('@grpc/grpc-js/build/src/retrying-call.js') as {
  RetryThrottler: new (
    maxTokens: number,
    tokenRatio: number,
  ) => { tokens: number; addCallSucceeded(): void; addCallFailed(): void; canRetryCall(): boolean };
};
const { validateRetryThrottling } = require('@grpc/grpc-js/build/src/service-config.js') as {
  validateRetryThrottling(o: object): { maxTokens: number; tokenRatio: number };
};

describe('tokenBudget against grpc-js RetryThrottler', () => {
  it('holds the same tokens and allows the same retries over 2,000 random event sequences', () => {
    const r = seeded(6);
    // Ratios exact in binary, so that grpc-js's float sums carry no rounding (see below).
    const ratios = [0.5, 0.25, 0.125, 1, 2, 0.375, 0.875];
    let allowed = 0;
    let refused = 0;
    let differences = 0;
    for (let k = 0; k < 2_000; k++) {
      const maxTokens = [1, 2, 3, 10, 100, 1000][Math.floor(r() * 6)] as number;
      const ratio = ratios[Math.floor(r() * ratios.length)] as number;
      const theirs = new RetryThrottler(maxTokens, ratio);
      const ours = tokenBudget({ maxTokens, tokenRatio: ratio });
      const failing = r();
      for (let e = 0; e < 200; e++) {
        if (r() < failing) {
          theirs.addCallFailed();
          ours.recordFailure();
          const can = theirs.canRetryCall();
          if (ours.tryAcquireRetry() !== can) differences++;
          if (can) allowed++;
          else refused++;
        } else {
          theirs.addCallSucceeded();
          ours.recordSuccess();
        }
        if (ours.tokens !== theirs.tokens) differences++;
      }
    }
    expect(differences).toBe(0);
    expect(allowed).toBeGreaterThan(10_000);
    expect(refused).toBeGreaterThan(10_000);
  });

  it("where they differ: grpc-js adds float tokens (0.1 ten times is not 1); ebb counts thousandths as gRPC's core", () => {
    const theirs = new RetryThrottler(10, 0.1);
    const ours = tokenBudget({ maxTokens: 10, tokenRatio: 0.1 });
    for (let i = 0; i < 6; i++) {
      theirs.addCallFailed();
      ours.recordFailure();
    }
    for (let i = 0; i < 10; i++) {
      theirs.addCallSucceeded();
      ours.recordSuccess();
    }
    expect(ours.tokens).toBe(5);
    expect(theirs.tokens).not.toBe(5); // 4.999999999999999 or so
    expect(ours.tryAcquireRetry()).toBe(false); // 5 is not over maxTokens / 2
  });

  it('accepts and refuses retryThrottling as grpc-js does, except where gRFC A6 or ebb is stricter', () => {
    const accepts = (f: () => unknown): boolean => {
      try {
        f();
        return true;
      } catch {
        return false;
      }
    };
    const maxTokensGrid = [-1, 0, 1, 10, 999, 1000, 1001, 1e6];
    for (const maxTokens of maxTokensGrid) {
      const theirs = accepts(() => validateRetryThrottling({ maxTokens, tokenRatio: 0.1 }));
      expect(
        accepts(() => tokenBudget({ maxTokens, tokenRatio: 0.1 })),
        `maxTokens ${maxTokens}`,
      ).toBe(theirs);
    }
    for (const tokenRatio of [-0.1, 0, 0.001, 0.1, 0.5, 1.6, 3]) {
      const theirs = accepts(() => validateRetryThrottling({ maxTokens: 10, tokenRatio }));
      expect(
        accepts(() => tokenBudget({ maxTokens: 10, tokenRatio })),
        `tokenRatio ${tokenRatio}`,
      ).toBe(theirs);
    }
    // Deliberate differences. A fractional maxTokens: grpc-js keeps it (to 3 decimals), ebb wants a
    // whole number. Digits past the third of tokenRatio: A6 supports "up to 3 decimal places" and
    // gRPC's core ignores the rest (0.5466 → 0.546), grpc-js rounds (toFixed(3) → 0.547); so a
    // ratio under 0.001 is 0 for ebb (refused) and 0.001 for grpc-js. Infinity: grpc-js accepts a
    // tokenRatio of Infinity; ebb refuses it (one success would refill the whole bucket). NaN:
    // grpc-js accepts a maxTokens or tokenRatio of NaN (no comparison is true of it); ebb refuses both.
    expect(validateRetryThrottling({ maxTokens: Number.NaN, tokenRatio: 0.1 }).maxTokens).toBeNaN();
    expect(() => tokenBudget({ maxTokens: Number.NaN })).toThrow(RangeError);
    expect(validateRetryThrottling({ maxTokens: 10, tokenRatio: Number.NaN }).tokenRatio).toBeNaN();
    expect(() => tokenBudget({ tokenRatio: Number.NaN })).toThrow(RangeError);
    expect(validateRetryThrottling({ maxTokens: 2.5, tokenRatio: 0.1 }).maxTokens).toBe(2.5);
    expect(() => tokenBudget({ maxTokens: 2.5 })).toThrow(RangeError);
    expect(validateRetryThrottling({ maxTokens: 10, tokenRatio: 0.5466 }).tokenRatio).toBe(0.547);
    const budget = tokenBudget({ maxTokens: 2, tokenRatio: 0.5466 });
    budget.recordFailure();
    budget.recordSuccess();
    expect(budget.tokens).toBe(1.546);
    expect(validateRetryThrottling({ maxTokens: 10, tokenRatio: 0.0009 }).tokenRatio).toBe(0.001);
    expect(() => tokenBudget({ tokenRatio: 0.0009 })).toThrow(RangeError);
    expect(validateRetryThrottling({ maxTokens: 10, tokenRatio: Infinity }).tokenRatio).toBe(Infinity);
    expect(() => tokenBudget({ tokenRatio: Infinity })).toThrow(RangeError);
  });
});

const GRPC_JARS = ['/usr/share/java/grpc-core.jar', '/usr/share/java/grpc-api.jar', '/usr/share/java/guava.jar'];
const SOURCE = fileURLToPath(new URL('./java/io/grpc/internal/EbbGrpcBackoffDriver.java', import.meta.url));

function missingJava(): string | undefined {
  for (const jar of GRPC_JARS) {
    if (!existsSync(jar))
      return `${jar} is missing (Debian package libgrpc-java, pulled in by libgoogle-http-client-java)`;
  }
  for (const tool of ['javac', 'java']) {
    if (spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0) {
      return `${tool} is missing (Debian package default-jdk-headless)`;
    }
  }
  return undefined;
}
const missing = missingJava();
if (missing && process.env.CI) throw new Error(`test/fidelity/grpc.test.ts needs grpc-java in CI: ${missing}`);
if (missing) {
  console.warn(`skipping the grpc-java differential: ${missing}`);
  recordSkip('grpc-java');
}

let classes: string | undefined;
afterAll(() => {
  if (classes) rmSync(classes, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)("presets.grpcConnect against grpc-java's ExponentialBackoffPolicy", () => {
  it('gives the same waits from the second on (within 20 ns of its integer nanoseconds) over 1,000 runs of 16 waits', () => {
    const r = seeded(7);
    const runs = Array.from({ length: 1_000 }, (_, k) =>
      Array.from({ length: 16 }, () => (k % 10 === 0 ? 0 : k % 10 === 1 ? 1 - 2 ** -53 : r())),
    );
    classes = mkdtempSync(join(tmpdir(), 'ebb-grpc-'));
    execFileSync('javac', ['-nowarn', '-cp', GRPC_JARS.join(':'), '-d', classes, SOURCE], { stdio: 'pipe' });
    const out = execFileSync(
      'java',
      ['-cp', [classes, ...GRPC_JARS].join(':'), 'io.grpc.internal.EbbGrpcBackoffDriver'],
      {
        input: `${runs.map((values) => values.join(' ')).join('\n')}\n`,
        maxBuffer: 64 * 1024 * 1024,
      },
    )
      .toString('utf8')
      .trimEnd()
      .split('\n');
    expect(out).toHaveLength(runs.length);
    let worst = 0;
    runs.forEach((values, k) => {
      const javaNs = (out[k] as string).split(' ').map(Number);
      // ebb draws no random value for its first wait (exactly 1 s: the spec's first deadline has
      // no jitter, as in grpc-go); grpc-java jitters it too (1 s ± 20 %): a deliberate difference.
      let i = 1;
      const run = presets.grpcConnect.start(() => values[i++] as number);
      expect(run.next()).toBe(1_000);
      expect(javaNs[0]).toBe(1e9 + Math.trunc((values[0] as number) * 0.4e9 - 0.2e9));
      for (let row = 1; row < values.length; row++) {
        const diff = Math.abs(run.next() * 1e6 - (javaNs[row] as number));
        if (diff > worst) worst = diff;
      }
    });
    expect(worst).toBeLessThan(20);
  });
});
