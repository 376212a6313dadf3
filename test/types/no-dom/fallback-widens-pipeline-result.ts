// A pipeline's execute resolves with what the operation returns or what a fallback in it gives:
// its type says so. Compile-time checks only (test/types/no-dom.test.ts runs tsc on this folder).
import { fallback, pipeline, retrying, timeout } from 'ebb';
import { circuitBreaker } from 'ebb/resilience';

interface User {
  readonly id: number;
}
declare function getUser(): Promise<User>;

// A fallback of null: the call may resolve with null.
const withNull = pipeline([fallback(null), retrying(), circuitBreaker()]);
export const userOrNull: Promise<User | null> = withNull.execute(getUser);
// @ts-expect-error: null is among what execute resolves with, so a Promise<User> would lie.
export const onlyUser: Promise<User> = withNull.execute(getUser);

// A fallback computed from the outcome: its function's return type.
const cached = pipeline([fallback(() => 'cached' as const), timeout(1_000)]);
export const userOrCached: Promise<User | 'cached'> = cached.execute(getUser);

// No fallback: the operation's own type, unwidened.
const plain = pipeline([retrying(), timeout(1_000)]);
export const user: Promise<User> = plain.execute(getUser);

// A fallback of the operation's own type changes nothing.
const same = pipeline([fallback<User>({ id: 0 }), retrying()]);
export const stillUser: Promise<User> = same.execute(getUser);
