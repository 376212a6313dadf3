import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isReplayableBody } from './body.js';

describe('isReplayableBody', () => {
  it('accepts every body fetch re-extracts from the same value', () => {
    for (const body of [
      undefined,
      null,
      '',
      'text',
      new ArrayBuffer(8),
      new Uint8Array([1, 2]),
      new DataView(new ArrayBuffer(2)),
      new Blob(['b']),
      new File(['f'], 'f.txt'),
      new URLSearchParams('a=1'),
      new FormData(),
    ]) {
      expect(isReplayableBody(body), String(body)).toBe(true);
    }
  });

  it('refuses one-pass bodies: web streams, Node streams, async iterables', () => {
    async function* chunks() {
      yield new Uint8Array([1]);
    }
    expect(isReplayableBody(new ReadableStream())).toBe(false);
    expect(isReplayableBody(new Response('x').body)).toBe(false);
    expect(isReplayableBody(Readable.from(['a']))).toBe(false);
    expect(isReplayableBody(chunks())).toBe(false);
    // A runtime whose ReadableStream has getReader() but no async iterator (Safari), or a stream-like.
    expect(isReplayableBody({ getReader: () => ({}) })).toBe(false);
    expect(isReplayableBody({ getReader: 'no' })).toBe(true);
  });
});
