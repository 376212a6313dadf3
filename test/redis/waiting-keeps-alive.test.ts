// A request waiting in a sharedRate keeps Node.js alive, as one waiting in a local adaptiveRate
// does: a script that awaits two acquire()s, its Redis unreachable (the local fallback paces
// them, 500 ms apart), ends with exit code 0 having printed its line — not 13, Node's code for a
// top-level await left unsettled when the event loop emptied. The rate's own timers (renewals,
// reconnections) stay unref'd: the child ends once its requests went, though its client is never closed.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/redis-server.js';

const CHILD = fileURLToPath(new URL('./support/waiting-process.mjs', import.meta.url));

describe('a request waiting in sharedRate (Redis unreachable)', () => {
  it('keeps the process alive until it goes: two awaited acquire()s, exit code 0', async () => {
    // A free port, nothing listening: the client never connects.
    const url = `redis://127.0.0.1:${await freePort()}`;
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [CHILD, url], { timeout: 30_000 }, (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    expect(result, result.stderr).toMatchObject({ code: 0, stdout: 'two acquired, mode local\n' });
  });
});
