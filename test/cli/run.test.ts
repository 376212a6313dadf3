import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, ebb, ROOT } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ebb-run-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A shell snippet that counts its runs in a file and prints the count. */
const counting = (file: string, then: string) =>
  `n=$(cat ${file} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${file}; echo "run $n"; ${then}`;

/** Whether `pid` is a live process; a zombie (killed, not yet reaped by PID 1) counts as gone. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    if (process.platform === 'linux') return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is gone within `ms`: a signal is delivered asynchronously, so a process that ebb
 * has SIGKILLed may still be scheduled for a moment after ebb exits, on a busy machine.
 */
async function goneWithin(pid: number, ms = 1000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    if (!alive(pid)) return true;
  }
  return !alive(pid);
}

/** Waits until `file` exists and holds a pid (the test's command writes it when started). */
async function pidFrom(file: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    try {
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (pid > 0) return pid;
    } catch {}
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid in ${file}`);
}

describe('ebb run, against real processes', () => {
  it('a command that fails twice then succeeds exits 0 after 3 runs, its output passed through', async () => {
    const count = join(dir, 'count');
    const r = await ebb([
      'run',
      '--delay',
      '10ms',
      '--jitter',
      'none',
      '--max-attempts',
      '5',
      '--',
      'sh',
      '-c',
      counting(count, '[ $n -ge 3 ]'),
    ]);
    expect(r.code).toBe(0);
    expect(readFileSync(count, 'utf8').trim()).toBe('3');
    expect(r.stdout).toBe('run 1\nrun 2\nrun 3\n');
    expect(r.stderr.trim().split('\n')).toEqual([
      'ebb run: attempt 1 exited with 1; retrying in 10 ms (attempt 2 of 5)',
      'ebb run: attempt 2 exited with 1; retrying in 10 ms (attempt 3 of 5)',
    ]);
  });

  it('a command that always exits 1 exits 1 after --max-attempts runs', async () => {
    const count = join(dir, 'count');
    const r = await ebb(['run', '--delay', '5ms', '--max-attempts', '4', '--', 'sh', '-c', counting(count, 'exit 1')]);
    expect(r.code).toBe(1);
    expect(readFileSync(count, 'utf8').trim()).toBe('4');
    expect(r.stderr).toMatch(/attempt 4 exited with 1; giving up after 4 attempts \(maxAttempts\)/);
  });

  it('exits with the last attempt’s own status', async () => {
    const r = await ebb(['run', '--delay', '1ms', '--max-attempts', '2', '--quiet', '--', 'sh', '-c', 'exit 42']);
    expect(r.code).toBe(42);
    expect(r.stderr).toBe('');
  });

  it('a hanging command is killed at --attempt-timeout with no orphan left', async () => {
    const pids = join(dir, 'pids');
    const script = `sleep 1000 & echo $! >> ${pids}; wait`;
    const r = await ebb([
      'run',
      '--attempt-timeout',
      '300ms',
      '--delay',
      '10ms',
      '--max-attempts',
      '2',
      '--',
      'sh',
      '-c',
      script,
    ]);
    expect(r.code).toBe(124);
    expect(r.stderr).toMatch(/attempt 1 timed out after 300 ms; retrying/);
    expect(r.stderr).toMatch(/attempt 2 timed out after 300 ms; giving up/);
    const started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(started).toHaveLength(2);
    for (const pid of started) expect(await goneWithin(pid)).toBe(true);
  });

  it('a command that ignores SIGTERM is SIGKILLed after --kill-after, group and all', async () => {
    const pids = join(dir, 'pids');
    const script = `trap "" TERM; sleep 1000 & echo $! >> ${pids}; wait; wait`;
    const r = await ebb([
      'run',
      '--attempt-timeout',
      '200ms',
      '--kill-after',
      '200ms',
      '--max-attempts',
      '1',
      '--',
      'sh',
      '-c',
      script,
    ]);
    expect(r.code).toBe(124);
    const [pid] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(await goneWithin(pid as number)).toBe(true);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    // The terminal closing and Ctrl-\: the command is in its own session, out of the terminal's reach.
    ['SIGHUP', 129],
    ['SIGQUIT', 131],
  ] as const)('on %s it stops the command’s process group and exits %i', async (signal, status) => {
    const pidFile = join(dir, 'pid');
    const shFile = join(dir, 'sh-pid');
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, 'run', '--', 'sh', '-c', `echo $$ > ${shFile}; sleep 1000 & echo $! > ${pidFile}; wait`],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d;
    });
    const grandchild = await pidFrom(pidFile);
    const command = await pidFrom(shFile);
    expect(alive(grandchild)).toBe(true);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill(signal);
    expect(await exited).toBe(status);
    expect(await goneWithin(command)).toBe(true);
    expect(await goneWithin(grandchild)).toBe(true);
    expect(stderr).toMatch(new RegExp(`interrupted by ${signal}`));
  });

  it('a command killed by SIGPIPE, the reader of its output gone, is not retried and ebb exits 141', async () => {
    const count = join(dir, 'count');
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--delay', '10ms', '--max-attempts', '3', '--', 'sh', '-c', counting(count, 'exec yes')],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d;
    });
    // Read the first line, then go away as `head -1` does: yes's next write meets a closed pipe.
    child.stdout?.once('data', () => child.stdout?.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(141);
    expect(readFileSync(count, 'utf8').trim()).toBe('1');
    expect(stderr.trim().split('\n')).toEqual([
      'ebb run: attempt 1 was killed by SIGPIPE: the reader of its output has gone; not retried',
    ]);
  });

  it('a command killed by another signal is retried, and its status is 128 + the signal', async () => {
    const count = join(dir, 'count');
    const r = await ebb([
      'run',
      '--delay',
      '1ms',
      '--jitter',
      'none',
      '--max-attempts',
      '2',
      '--',
      'sh',
      '-c',
      counting(count, 'kill -USR1 $$'),
    ]);
    expect(r.code).toBe(138);
    expect(readFileSync(count, 'utf8').trim()).toBe('2');
    expect(r.stderr.trim().split('\n')).toEqual([
      'ebb run: attempt 1 was killed by SIGUSR1; retrying in 1 ms (attempt 2 of 2)',
      'ebb run: attempt 2 was killed by SIGUSR1; giving up after 2 attempts (maxAttempts)',
    ]);
  });

  it('--retry-on-exit retries only the listed statuses', async () => {
    const count = join(dir, 'count');
    const stop = await ebb([
      'run',
      '--retry-on-exit',
      '75',
      '--delay',
      '1ms',
      '--',
      'sh',
      '-c',
      counting(count, 'exit 3'),
    ]);
    expect(stop.code).toBe(3);
    expect(readFileSync(count, 'utf8').trim()).toBe('1');
    rmSync(count);
    const go = await ebb([
      'run',
      '--retry-on-exit',
      '1,75',
      '--delay',
      '1ms',
      '--max-attempts',
      '3',
      '--',
      'sh',
      '-c',
      counting(count, 'exit 75'),
    ]);
    expect(go.code).toBe(75);
    expect(readFileSync(count, 'utf8').trim()).toBe('3');
  });

  it('runs without a shell unless --shell', async () => {
    const plain = await ebb(['run', '--quiet', '--max-attempts', '1', '--', 'echo', '$HOME', '*']);
    expect(plain.stdout).toBe('$HOME *\n');
    const shell = await ebb(['run', '--shell', '--quiet', '--max-attempts', '1', '--', 'echo $((6*7))']);
    expect(shell.stdout).toBe('42\n');
  });

  it('a command that cannot be found exits 127 without retrying', async () => {
    const r = await ebb(['run', '--', join(dir, 'no-such-command')]);
    expect(r.code).toBe(127);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot run/);
  });

  it('uses the named preset, and limit flags alone adjust the default preset', async () => {
    const count = join(dir, 'count');
    writeFileSync(count, '0');
    const r = await ebb(['run', '--preset', 'aws-standard', '--', 'sh', '-c', counting(count, 'exit 1')]);
    expect(r.code).toBe(1);
    expect(readFileSync(count, 'utf8').trim()).toBe('3'); // aws-standard: 3 attempts
    writeFileSync(count, '0');
    await ebb(['run', '--max-attempts', '2', '--', 'sh', '-c', counting(count, 'exit 1')]);
    expect(readFileSync(count, 'utf8').trim()).toBe('2');
  });

  it.each([
    [['run'], /^ebb: missing required argument 'command'/],
    [['run', '--attempt-timeout', 'soon', '--', 'true'], /^ebb: --attempt-timeout expects a duration/],
    [
      ['run', '--attempt-timeout', '0ms', '--', 'true'],
      /^ebb: --attempt-timeout must be longer than 0, got "0ms": such as 30s$/m,
    ],
    [['run', '--retry-on-exit', '0', '--', 'true'], /^ebb: --retry-on-exit expects exit statuses from 1 to 255/],
    [['run', '--preset', 'nope', '--', 'true'], /^ebb: unknown preset "nope"/],
    // Longer than a Node.js timer keeps: it would fire after 1 ms (SIGKILL at once).
    [
      ['run', '--kill-after', '1000h', '--', 'true'],
      /^ebb: --kill-after must be at most 596h \(2147483647 ms, the longest timer Node\.js keeps\), got "1000h"$/m,
    ],
    [['run', '--attempt-timeout', '597h', '--', 'true'], /^ebb: --attempt-timeout must be at most 596h/],
  ])('bad input %j exits 2 with one line', async (args, message) => {
    const r = await ebb(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
