// withRetry(f) has f's own type: what f accepts, it accepts; what f refuses, it refuses; what f
// returns, it returns. Compile-time checks only (test/types/no-dom.test.ts runs tsc on this folder).
import { type ResponseLike, withRetry } from 'ebb/http';
import { Agent, type Response as UndiciResponse, fetch as undiciFetch } from 'undici';

// undici's own fetch, with its `dispatcher`, which the global fetch's RequestInit lacks.
const dispatcher = new Agent({ connections: 4 });
const viaUndici = withRetry(undiciFetch);
export const sameType: typeof undiciFetch = viaUndici;
export const withDispatcher: Promise<UndiciResponse> = viaUndici('http://127.0.0.1:8080/', { dispatcher });
// @ts-expect-error: a dispatcher must be a Dispatcher, as undici's own fetch says.
viaUndici('http://127.0.0.1:8080/', { dispatcher: 42 });
// @ts-expect-error: the wrapped fetch's input type is kept; a number is no URL.
viaUndici(8080);

// The global fetch of Node's types: the same function type back.
export const viaGlobal: typeof fetch = withRetry(fetch, { isFailure: ({ ok }) => !ok });

// Any function of the fetch shape: its own parameters and response type come back, and the
// options' callbacks see that response type.
interface MyResponse extends ResponseLike {
  readonly route: string;
}
declare function myFetch(url: `/${string}`, init?: { readonly timeoutMs?: number }): Promise<MyResponse>;
const viaMine = withRetry(myFetch, {
  isFailure: (outcome) => outcome.ok && outcome.value.route === 'fallback',
  onRetry: ({ response }) => void response?.route.toUpperCase(),
});
export const mine: Promise<MyResponse> = viaMine('/users', { timeoutMs: 500 });
// @ts-expect-error: myFetch takes paths starting with '/'.
viaMine('users');
// @ts-expect-error: a function that returns no response is not a fetch.
withRetry(async (_url: string) => 'text');
