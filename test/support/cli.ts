import { execFile } from 'node:child_process';
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
