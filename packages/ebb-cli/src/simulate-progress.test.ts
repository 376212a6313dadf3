import { describe, expect, it } from 'vitest';
import { progressBar } from './simulate-progress.js';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { stream: { isTTY, columns: 80, write: (t: string) => writes.push(t) }, writes };
}

describe('progressBar', () => {
  it('stays silent for the first second, then draws at most ten times a second, and erases itself', () => {
    let now = 0;
    const { stream, writes } = fakeStream(true);
    const bar = progressBar(stream, 'wifi', () => now);
    bar.update(10, 100);
    now = 999;
    bar.update(20, 100);
    expect(writes).toEqual([]);
    now = 1_000;
    bar.update(50, 100);
    now = 1_050;
    bar.update(60, 100);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^\rwifi \[#+\.+\] 50%$/);
    now = 1_200;
    bar.update(100, 100);
    expect(writes[1]).toMatch(/\] 100%$/);
    bar.finish();
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });

  it('draws nothing when stderr is not a terminal, however long the run', () => {
    let now = 0;
    const { stream, writes } = fakeStream(false);
    const bar = progressBar(stream, 'x', () => now);
    now = 60_000;
    bar.update(1, 2);
    bar.finish();
    expect(writes).toEqual([]);
  });
});
