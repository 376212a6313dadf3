// The ready-made HTTP predicates fit withRetry over any fetch: they read only a response's
// headers, so undici's Response (whose body type differs from the DOM's) takes them as the global
// one does. Compile-time checks only (test/types/no-dom.test.ts runs tsc on this folder).
import { aws, googleDrive, googleHttpClient, standard, withRetry } from 'ebb/http';
import { Agent, type Response as UndiciResponse, fetch as undiciFetch } from 'undici';

const dispatcher = new Agent({ connections: 4 });
export const each: (typeof undiciFetch)[] = [standard, aws, googleHttpClient, googleDrive].map((isFailure) =>
  withRetry(undiciFetch, { isFailure }),
);
export const viaUndici: Promise<UndiciResponse> = withRetry(undiciFetch, { isFailure: standard })(
  'http://127.0.0.1:8080/',
  { dispatcher },
);
export const viaGlobal: typeof fetch = withRetry(fetch, { isFailure: aws });
