// ebb's AWS standard mode against the published SDK's own code, side by side: the retry
// middleware of @smithy/core (`retryMiddleware`, what every SDK v3 client runs) driving its
// `StandardRetryStrategy` — 3.41.0, the 2026 behaviour, which is the SDK default today — and
// 3.39.0 (installed as `smithy-core-pre-2026`), the behaviour before it. ebb's parts, composed
// as a caller composes them: the `aws` predicate, `awsServerHintMs`, `presets.awsStandard` /
// `awsStandardPre2026` and `awsRetryQuota()`. Same responses, same random values: the same
// errors retried, the same waits, the same quota balance before every attempt and at the end.
import { createRequire } from 'node:module';
import { type Backoff, presets, seeded } from 'ebb';
import { aws, awsServerHintMs, awsThrottlingCodes } from 'ebb/http';
import { awsRetryQuota } from 'ebb/rate';
import { afterEach, describe, expect, it, vi } from 'vitest';

const require = createRequire(import.meta.url);

interface SdkRetry {
  StandardRetryStrategy: new (options: { maxAttempts: number }) => { getCapacity(): number };
  Retry: { v2026: boolean };
  retryMiddleware: (options: {
    retryStrategy: () => Promise<unknown>;
    maxAttempts: () => Promise<number>;
  }) => (next: () => Promise<unknown>, context: object) => (args: object) => Promise<unknown>;
}
interface SdkProtocols {
  HttpResponse: new (options: { statusCode: number; headers: Record<string, string> }) => object;
}

const SDKS = {
  '2026': {
    retry: require('@smithy/core/retry') as SdkRetry,
    protocols: require('@smithy/core/protocols') as SdkProtocols,
    version: (require('@smithy/core/package.json') as { version: string }).version,
  },
  'pre-2026': {
    retry: require('smithy-core-pre-2026/retry') as SdkRetry,
    protocols: require('smithy-core-pre-2026/protocols') as SdkProtocols,
    version: (require('smithy-core-pre-2026/package.json') as { version: string }).version,
  },
} as const;

/** One response of a scripted attempt: success, or an error status with an AWS code and hint headers. */
type Step =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: number; readonly code: string; readonly headers: Record<string, string> };

interface Operation {
  readonly steps: readonly Step[];
  /** The random value of each wait, in order. */
  readonly randoms: readonly number[];
}

interface Trace {
  /** Calls made. */
  attempts: number;
  /** The waits between them, in ms. */
  delays: number[];
  /** The quota before each call, and after the operation. */
  capacities: number[];
  ok: boolean;
}

const NOW = 1_800_000_000_000;

const OTHER_CODES = ['ValidationException', 'InternalFailure', 'ServiceUnavailable', 'InternalError', 'UnknownError'];
const TRANSIENT_CODES = ['TimeoutError', 'RequestTimeout', 'RequestTimeoutException'];
const STATUSES = [400, 403, 404, 408, 429, 500, 501, 502, 503, 504, 505, 507, 599];
const RANDOMS = [0, 1 - 2 ** -53, 0.5, 2 ** -53, 0.999];
const HINTS = ['0', '1', '1500', '1500.7', '4999', '5000', '25000', '-20', '-2.5', 'abc', '', '1e3', '0x10', ' 12 '];

function operations(seed: number, clients: number, perClient: number): Operation[][] {
  const r = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const out: Operation[][] = [];
  for (let c = 0; c < clients; c++) {
    const failure = r(); // how often this client's calls fail: drains the quota for some clients
    const ops: Operation[] = [];
    for (let k = 0; k < perClient; k++) {
      const steps: Step[] = [];
      for (let a = 0; a < 4; a++) {
        if (r() >= failure) {
          steps.push({ ok: true });
          continue;
        }
        const u = r();
        const code = u < 0.25 ? pick(awsThrottlingCodes) : u < 0.4 ? pick(TRANSIENT_CODES) : pick(OTHER_CODES);
        const headers: Record<string, string> = { 'x-amzn-errortype': code };
        const h = r();
        if (h < 0.25) headers['x-amz-retry-after'] = pick(HINTS);
        else if (h < 0.4) headers['retry-after'] = String(Math.floor(r() * 8));
        steps.push({ ok: false, status: pick(STATUSES), code, headers });
      }
      ops.push({ steps, randoms: [0, 1, 2].map(() => (r() < 0.3 ? pick(RANDOMS) : r())) });
    }
    out.push(ops);
  }
  return out;
}

/** Runs one client's operations through the SDK's retry middleware and strategy. */
async function viaSdk(behaviour: keyof typeof SDKS, ops: readonly Operation[]): Promise<Trace[]> {
  const { retry, protocols } = SDKS[behaviour];
  const strategy = new retry.StandardRetryStrategy({ maxAttempts: 3 });
  const traces: Trace[] = [];
  for (const op of ops) {
    const trace: Trace = { attempts: 0, delays: [], capacities: [], ok: false };
    const randoms = [...op.randoms];
    vi.spyOn(Math, 'random').mockImplementation(() => {
      const value = randoms.shift();
      if (value === undefined) throw new Error('the SDK drew more random values than scripted');
      return value;
    });
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      trace.delays.push(ms);
      queueMicrotask(fn);
      return 0;
    }) as never);
    const next = async () => {
      trace.capacities.push(strategy.getCapacity());
      const step = op.steps[trace.attempts++] as Step;
      if (step.ok) return { response: {}, output: { $metadata: {} } };
      throw Object.assign(new Error('scripted'), {
        name: step.code,
        $metadata: { httpStatusCode: step.status },
        $response: new protocols.HttpResponse({ statusCode: step.status, headers: step.headers }),
      });
    };
    const handler = retry.retryMiddleware({
      retryStrategy: async () => strategy,
      maxAttempts: async () => 3,
    })(next, {});
    try {
      await handler({ request: {} });
      trace.ok = true;
    } catch (error) {
      if ((error as Error).message !== 'scripted') throw error;
    }
    vi.restoreAllMocks();
    vi.spyOn(Date, 'now').mockReturnValue(NOW);
    trace.capacities.push(strategy.getCapacity());
    traces.push(trace);
  }
  return traces;
}

/** The same client with ebb's parts. */
async function viaEbb(behaviour: keyof typeof SDKS, ops: readonly Operation[]): Promise<Trace[]> {
  const policy: Backoff = behaviour === '2026' ? presets.awsStandard : presets.awsStandardPre2026;
  const quota = awsRetryQuota({ behaviour });
  const traces: Trace[] = [];
  for (const op of ops) {
    const trace: Trace = { attempts: 0, delays: [], capacities: [], ok: false };
    let j = 0;
    const run = policy.start(() => op.randoms[j++] as number) as { next(elapsedMs?: number, error?: unknown): number };
    let lastError: unknown;
    for (;;) {
      trace.capacities.push(quota.available);
      const step = op.steps[trace.attempts++] as Step;
      if (step.ok) {
        quota.recordSuccess({ attempt: trace.attempts, lastError });
        trace.ok = true;
        break;
      }
      const response = new Response(null, { status: step.status, headers: step.headers });
      const verdict = await aws({ ok: true, value: response });
      if (verdict === false) break;
      const error = {
        name: step.code,
        status: step.status,
        throttled: verdict === 'throttled',
        retryAfterMs: awsServerHintMs(response, NOW),
      };
      const delay = run.next(undefined, error);
      if (delay < 0 || !quota.tryAcquireRetry(error)) break;
      trace.delays.push(delay);
      lastError = error;
    }
    trace.capacities.push(quota.available);
    traces.push(trace);
  }
  return traces;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(['2026', 'pre-2026'] as const)(
  'the AWS standard mode, %s behaviour, against @smithy/core',
  (behaviour) => {
    it('runs 10,000 scripted operations (100 clients × 100) with 0 differences', async () => {
      expect(SDKS[behaviour].retry.Retry.v2026).toBe(behaviour === '2026');
      const clients = operations(behaviour === '2026' ? 11 : 12, 100, 100);
      vi.spyOn(Date, 'now').mockReturnValue(NOW);
      let differences = 0;
      const first: string[] = [];
      let retried = 0;
      let refusedByQuota = 0;
      let hinted = 0;
      for (const ops of clients) {
        const theirs = await viaSdk(behaviour, ops);
        vi.spyOn(Date, 'now').mockReturnValue(NOW);
        const ours = await viaEbb(behaviour, ops);
        ours.forEach((t, i) => {
          const s = theirs[i] as Trace;
          if (JSON.stringify(t) !== JSON.stringify(s)) {
            differences++;
            if (first.length < 3)
              first.push(`${JSON.stringify(ops[i])}\n  sdk: ${JSON.stringify(s)}\n  ebb: ${JSON.stringify(t)}`);
          }
          retried += s.delays.length;
          if (s.capacities.some((c) => c < 14)) refusedByQuota++;
          const steps = ops[i]?.steps ?? [];
          const hintedStep = (k: number): boolean => {
            const step = steps[k];
            return step !== undefined && !step.ok && 'x-amz-retry-after' in step.headers;
          };
          if (s.delays.some((d, k) => d > 0 && hintedStep(k))) hinted++;
        });
      }
      expect(first).toEqual([]);
      expect(differences).toBe(0);
      // The scripts exercise what they claim: many retries, quotas drained, hints applied.
      expect(retried).toBeGreaterThan(3_000);
      expect(refusedByQuota).toBeGreaterThan(100);
      expect(hinted).toBeGreaterThan(100);
    });
  },
);
