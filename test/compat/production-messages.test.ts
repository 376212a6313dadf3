// The production browser build (package.json `exports`, condition `production` under `browser`)
// refuses the same bad options as the default build, with the same error classes, but words each
// refusal in its short form — where, the option and the value — so that the prose of the default
// build's messages is not shipped (core/dev.ts). Both builds are read from the workspace's dist/
// (`npm test` builds it first), side by side.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

type Http = typeof import('../../packages/ebb/src/http/index.js');
type Root = typeof import('../../packages/ebb/src/index.js');

const load = async <T>(build: 'browser' | 'browser-prod', file: string): Promise<T> =>
  (await import(pathToFileURL(join(ROOT, 'packages/ebb/dist', build, file)).href)) as T;

const builds = {} as Record<'development' | 'production', { http: Http; root: Root }>;

beforeAll(async () => {
  builds.development = { http: await load('browser', 'http.js'), root: await load('browser', 'index.js') };
  builds.production = { http: await load('browser-prod', 'http.js'), root: await load('browser-prod', 'index.js') };
});

/** The error `f` throws. */
const thrown = (f: () => unknown): Error => {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
};

const fetchStub = async () => new Response(null);

describe('withRetry() options: the production build words each refusal as where, option and value', () => {
  const cases: [string, (h: Http) => unknown, ErrorConstructor, string, string][] = [
    [
      'fetchImpl not a function',
      (h) => h.withRetry(42 as never),
      TypeError,
      'withRetry(): expected `fetchImpl` to be a function with the signature of fetch, got 42. Pass fetch, or leave it out.',
      'withRetry(): `fetchImpl` 42',
    ],
    [
      'an option of 0.1 that moved',
      (h) => h.withRetry(fetchStub, { retryOn: () => true } as never),
      TypeError,
      'withRetry(): `retryOn` moved; use `isFailure`.',
      'withRetry(): `retryOn` a function',
    ],
    [
      'a number option of 0.1 that moved (refused as unknown in production, still a TypeError)',
      (h) => h.withRetry(fetchStub, { attemptTimeoutMs: 5_000 } as never),
      TypeError,
      'withRetry(): `attemptTimeoutMs` moved; use `use: [timeout(ms)]`.',
      'withRetry(): `attemptTimeoutMs` 5000',
    ],
    [
      'a signal given to withRetry rather than to each request',
      (h) => h.withRetry(fetchStub, { signal: AbortSignal.abort() } as never),
      TypeError,
      'withRetry(): `signal` is per request: pass it as init.signal of each call.',
      'withRetry(): `signal` an object',
    ],
    [
      'isFailure not a function',
      (h) => h.withRetry(fetchStub, { isFailure: 'standard' } as never),
      TypeError,
      'withRetry(): expected `isFailure` to be a function (outcome, context), got "standard". Such as standard, aws or googleDrive.',
      'withRetry(): `isFailure` "standard"',
    ],
    [
      'methods not tokens',
      (h) => h.withRetry(fetchStub, { methods: ['GET POST'] }),
      TypeError,
      "withRetry(): expected `methods` to be an array of method names such as ['GET', 'PUT'], got an array.",
      'withRetry(): `methods` an array',
    ],
    [
      'a use entry that is no mechanism',
      (h) => h.withRetry(fetchStub, { use: [{}] as never }),
      TypeError,
      'withRetry(): expected `use[0]` to be a mechanism { execute(next, context) }, got an object.',
      'withRetry(): `use[0]` an object',
    ],
    [
      'a bare guard in use',
      (h) => h.withRetry(fetchStub, { use: [{ acquire() {}, record() {} }] as never }),
      TypeError,
      "withRetry(): expected `use[0]` to be a mechanism { execute(next, context) }, got an object. It is a guard { acquire(), record() }: wrap it, `guard(x)` (import { guard } from 'ebb').",
      'withRetry(): `use[0]` an object',
    ],
  ];
  for (const [what, make, kind, long, short] of cases) {
    it(`${what}: the same ${kind.name}; the full message by default, the short one in production`, () => {
      const dev = thrown(() => make(builds.development.http));
      const prod = thrown(() => make(builds.production.http));
      expect([dev.constructor.name, dev.message]).toEqual([kind.name, long]);
      expect([prod.constructor.name, prod.message]).toEqual([kind.name, short]);
    });
  }

  it('a fetchImpl that returns no promise: the call rejects with a TypeError in both builds, short in production', async () => {
    const notAPromise = (() => 7) as unknown as typeof fetch;
    const rejection = (h: Http) =>
      h
        .withRetry(notAPromise, { budget: false })('http://127.0.0.1/')
        .then(
          () => undefined,
          (error: unknown) => error as Error,
        );
    const [dev, prod] = [await rejection(builds.development.http), await rejection(builds.production.http)];
    expect([dev?.constructor.name, dev?.message]).toEqual([
      'TypeError',
      'withRetry(): `fetchImpl` returned 7; expected a promise of a Response.',
    ]);
    expect([prod?.constructor.name, prod?.message]).toEqual(['TypeError', 'withRetry(): `fetchImpl()` 7']);
  });
});

describe('pipeline() and guard(): a bare guard is refused with its fix by default, short in production', () => {
  const bare = { acquire() {}, record() {} };
  const cases: [string, (r: Root) => unknown, string, string][] = [
    [
      'a bare guard in a pipeline',
      (r) => r.pipeline([r.retrying(), bare as never]),
      "pipeline(): expected `mechanisms[1]` to be a mechanism { execute(next, context) }, got an object. It is a guard { acquire(), record() }: wrap it, `guard(x)` (import { guard } from 'ebb').",
      'pipeline(): `mechanisms[1]` an object',
    ],
    [
      'guard() of what is no guard',
      (r) => r.guard({ acquire() {} } as never),
      'guard(): expected `guard` to be an object { acquire(signal, attempt), record(outcome, ticket, detail) }, got an object.',
      'guard(): `guard` an object',
    ],
  ];
  for (const [what, make, long, short] of cases) {
    it(`${what}: a TypeError in both builds`, () => {
      const dev = thrown(() => make(builds.development.root));
      const prod = thrown(() => make(builds.production.root));
      expect([dev.constructor.name, dev.message]).toEqual(['TypeError', long]);
      expect([prod.constructor.name, prod.message]).toEqual(['TypeError', short]);
    });
  }
  it('a wrapped guard is accepted in both builds', () => {
    for (const build of ['development', 'production'] as const) {
      const r = builds[build].root;
      expect(() => r.pipeline([r.retrying(), r.guard(bare)])).not.toThrow();
    }
  });
});

describe('the default policy is the same value in both builds', () => {
  it('prints and serializes as exponential() does', () => {
    for (const build of ['development', 'production'] as const) {
      const { defaultBackoff, exponential } = builds[build].root;
      expect(String(defaultBackoff)).toBe('exponential 100 ms ×2, 20 s cap, full jitter, 5 attempts');
      expect(defaultBackoff.toJSON()).toEqual(exponential().toJSON());
    }
  });
});
