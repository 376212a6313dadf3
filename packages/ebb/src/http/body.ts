/**
 * Whether a request body can be sent again.
 *
 * `fetch` re-extracts a string, `ArrayBuffer`, typed array or `DataView`, `Blob` (and `File`),
 * `URLSearchParams` or `FormData` body from the same value each time it is given it (Fetch
 * standard, "extract a body"), so a retry sends the same bytes. A `ReadableStream` (or, in
 * Node.js, an async iterable) is read as it is sent: once consumed, nothing is left to resend,
 * and keeping a copy would mean holding an upload of unknown size in memory — possibly endless
 * (a live feed) or larger than memory. So ebb never retries a request with a stream body; buffer
 * it yourself (`await new Response(stream).arrayBuffer()`) if it is small enough to resend.
 *
 * @internal
 */
export function isReplayableBody(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return true;
  // A ReadableStream (WHATWG Streams: every one has getReader()), or a stream-like of a library.
  if (typeof (body as { getReader?: unknown }).getReader === 'function') return false;
  // A Node.js Readable or any async iterable: one pass only. (Blob has no async iterator.)
  if (typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function') return false;
  return true;
}
