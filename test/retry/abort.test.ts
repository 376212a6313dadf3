import { spawn } from 'node:child_process';
import { constant, noJitter, retry } from 'ebb';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

describe('abort on the real clock', () => {
  it('an abort during a 10-minute wait settles within one timer tick, and the operation is not called again', async () => {
    const controller = new AbortController();
    let calls = 0;
    const p = retry(
      () => {
        calls++;
        throw new Error('down');
      },
      { signal: controller.signal, backoff: constant({ delayMs: 600_000, maxAttempts: 100, jitter: noJitter }) },
    );
    const settled = p.then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 20)); // the first attempt has failed; the 10-minute wait runs
    expect(calls).toBe(1);
    const reason = new Error('stop');
    controller.abort(reason);
    // Settled before the next macrotask: no timer tick passes between abort and rejection.
    const first = await Promise.race([settled, new Promise((r) => setImmediate(() => r('a tick passed')))]);
    expect(first).toBe(reason);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1);
  });

  it('a process whose retry was aborted mid-wait exits soon after settling: no timer or listener is left', async () => {
    const script = `
      import { retry, constant, noJitter } from 'ebb';
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('cancelled')), 50);
      try {
        await retry(() => { throw new Error('down'); }, { signal: controller.signal, backoff: constant({ delayMs: 600_000, maxAttempts: 100, jitter: noJitter }) });
      } catch (e) {
        process.stdout.write('settled ' + e.message + '\\n');
      }
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let settledAt = 0;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('settled')) settledAt ||= performance.now();
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(killer);
    const exitedAt = performance.now();
    expect(output).toBe('settled cancelled\n');
    expect(code).toBe(0);
    // A timer left armed would hold the process for its 600 s wait (killed at 20 s, code null); exit
    // takes tens of ms on a quiet machine and measured 103 ms on a busy one, so 5 s is the margin.
    expect(exitedAt - settledAt).toBeLessThan(5_000);
  });
});
