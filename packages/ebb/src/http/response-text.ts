/** How much of a body a predicate reads: error documents are small, and a stall must not cost memory. */
export const TEXT_LIMIT_BYTES = 64 * 1024;

/** Each response's text, read once (a promise), and the error a failed read ended with. */
const texts = new WeakMap<object, Promise<string>>();
const failures = new WeakMap<object, { readonly error: unknown }>();

/**
 * Reads at most `limit` bytes of a clone of `response` as UTF-8 text, then cancels the clone;
 * '' for a value that is no response, or has no body, or whose body was already read. @internal
 */
export async function readTextPrefix(response: Response, limit: number = TEXT_LIMIT_BYTES): Promise<string> {
  const r = response as Partial<Response> | null;
  if (typeof r?.clone !== 'function' || r.body === null || r.body === undefined || r.bodyUsed) return '';
  // The clone of a response with a body has one too.
  const reader = (response.clone().body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let read = 0;
  try {
    while (read < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      // subarray clamps its end to the chunk's length: a chunk within the limit is taken whole.
      const chunk = value.subarray(0, limit - read);
      read += chunk.byteLength;
      text += decoder.decode(chunk, { stream: true });
    }
    return text + decoder.decode();
  } finally {
    // Stops this branch of the tee; the caller's branch keeps the whole body.
    reader.cancel().catch(() => {});
  }
}

/**
 * The first 64 KiB of a response's body as text, for a failure predicate that reads the body
 * (`aws` reads the error code, `googleDrive` a 403's reason). Read once, from a clone, and shared
 * by every predicate that asks about the same response — a retry, a breaker and a fallback judging
 * one response read it once — so the response itself stays unread for the caller. `''` for a
 * response without a body, one whose body was already read, and a value that is no `Response`
 * (a `{ status }`). Rejects if the body fails mid-way (a reset); `withRetry` then counts the
 * attempt as failed with that error.
 *
 * @example
 * const busy = async (o: Result<Response>) => o.ok && (await responseText(o.value)).includes('try again');
 */
export function responseText(response: Response): Promise<string> {
  let text = texts.get(response);
  if (text === undefined) {
    text = readTextPrefix(response).catch((error: unknown) => {
      failures.set(response, { error });
      throw error;
    });
    if (typeof response === 'object' && response !== null) texts.set(response, text);
  }
  return text;
}

/** Whether `error` is what reading `response`'s text failed with: a failed attempt, not a predicate's bug. @internal */
export function isReadFailure(response: object, error: unknown): boolean {
  const failure = failures.get(response);
  return failure !== undefined && failure.error === error;
}
