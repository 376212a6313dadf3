// isTimeoutError and isAbortError are type guards to what they check — an object whose `name` is
// that string — and claim no more (not a DOMException: any error may carry the name). They leave
// the type alone where they answer false. isNetworkError stays a boolean (its doc says why).
// These are compile-time checks (`npm run typecheck` type-checks test/ with `strict`); the test
// also runs them, so a check that type-checks but misbehaves fails too.
import { isAbortError, isTimeoutError } from 'ebb';
import { isNetworkError, isTimeoutError as isTimeoutErrorOfHttp } from 'ebb/http';
import { describe, expect, expectTypeOf, it } from 'vitest';

describe('the error predicates narrow a caught value to what they checked', () => {
  it('isTimeoutError and isAbortError narrow `unknown` to an object with that `name`, and nothing more', () => {
    const caught: unknown[] = [
      new DOMException('The operation timed out.', 'TimeoutError'),
      new DOMException('This operation was aborted', 'AbortError'),
      Object.assign(new Error('attempt 2 timed out after 50 ms'), { name: 'TimeoutError' }),
      new Error('boom'),
    ];
    const seen: string[] = [];
    for (const error of caught) {
      if (isTimeoutError(error)) {
        expectTypeOf(error).toEqualTypeOf<{ readonly name: 'TimeoutError' }>();
        // @ts-expect-error: a TimeoutError is known by its name only, not as a DOMException
        const exception: DOMException = error;
        seen.push(`${error.name}${exception instanceof DOMException ? ' (DOMException)' : ''}`);
      } else if (isAbortError(error)) {
        expectTypeOf(error).toEqualTypeOf<{ readonly name: 'AbortError' }>();
        seen.push(error.name);
      } else {
        expectTypeOf(error).toEqualTypeOf<unknown>();
        seen.push('other');
      }
    }
    expect(seen).toEqual(['TimeoutError (DOMException)', 'AbortError', 'TimeoutError', 'other']);
    expectTypeOf(isTimeoutErrorOfHttp).guards.toEqualTypeOf<{ readonly name: 'TimeoutError' }>();
  });

  it('where they answer false, an Error stays an Error; isNetworkError narrows neither way', () => {
    const failures: (Error | undefined)[] = [new Error('boom'), undefined];
    const kept: (Error | undefined)[] = [];
    for (const failure of failures) {
      if (!isTimeoutError(failure) && !isAbortError(failure) && !isNetworkError(failure)) {
        expectTypeOf(failure).toEqualTypeOf<Error | undefined>();
        kept.push(failure);
      }
      if (isNetworkError(failure)) expectTypeOf(failure).toEqualTypeOf<Error | undefined>();
    }
    expect(kept).toEqual(failures);
  });
});
