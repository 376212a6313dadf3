import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The root of the repository. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The built `ebb` bin, as npm links it. */
export const BIN = fileURLToPath(new URL('../../packages/ebb-cli/bin/ebb.js', import.meta.url));

export interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ebb …args` as a child process of this Node.js and collects its output. */
export function ebb(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, timeout: options.timeoutMs ?? 30_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs `ebb …args` until its stderr matches `until` (then stops it by its PID, SIGTERM and, if
 * need be, SIGKILL) or it exits, whichever comes first; rejects after `timeoutMs` (the process
 * stopped too). For commands that would run for minutes when all a test needs is their first words.
 */
export function ebbUntil(
  args: readonly string[],
  until: RegExp,
  timeoutMs = 30_000,
): Promise<Result & { readonly stopped: boolean; readonly afterMs: number }> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let stopped = false;
    let matchedAt = 0;
    const stop = () => {
      stopped = true;
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), 2_000).unref();
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`ebb ${args.join(' ')}: nothing matching ${until} on stderr in ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      if (!stopped && until.test(stderr)) {
        matchedAt = performance.now() - start;
        stop();
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, stopped, afterMs: matchedAt || performance.now() - start });
    });
  });
}

/**
 * Runs `ebb …args` with its stdout and stderr on a pseudo-terminal (util-linux `script`), as a
 * user at a terminal sees it: the progress bar is drawn. Returns what the terminal received.
 */
export function ebbOnTerminal(args: readonly string[], timeoutMs = 120_000): Promise<Result> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-q', '-e', '-c', command, '/dev/null'],
      { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, COLUMNS: '100' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
