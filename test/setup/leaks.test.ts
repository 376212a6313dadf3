import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { leftOver } from './leaks.js';

describe('the left-over timers and sockets check', () => {
  it('sees a timer and a listening server beyond the baseline, and nothing once they are gone', async () => {
    const base = new Map<string, number>();
    for (const kind of process.getActiveResourcesInfo()) base.set(kind, (base.get(kind) ?? 0) + 1);
    expect(leftOver(base)).toEqual([]);
    const timer = setTimeout(() => {}, 60_000);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    expect(leftOver(base)).toEqual(['Timeout ×1', 'TCPServerWrap ×1']);
    clearTimeout(timer);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 20)); // the handle is released a turn later
    expect(leftOver(base)).toEqual([]);
  });
});
