import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { RetryError, retry, seeded, systemClock } from 'ebb';
import { formatDuration, parseNumber, parseSeed, timerMs } from './duration.js';
import { type PolicyFlags, policyFromFlags } from './policy.js';
import { UsageError } from './usage-error.js';

/** Flags of `ebb run`. */
export interface RunFlags extends Omit<PolicyFlags, 'preset'> {
  readonly preset?: string;
  readonly attemptTimeout?: string;
  readonly retryOnExit?: string;
  readonly killAfter?: string;
  readonly shell?: boolean;
  readonly quiet?: boolean;
  readonly seed?: string;
}

/**
 * The signals on which `ebb run` stops the command's process group and exits 128 + the signal's
 * number: Ctrl-C, `kill`, the terminal closing (SIGHUP) and Ctrl-\ (SIGQUIT). The command runs in
 * its own session (detached), so the terminal's hang-up or quit never reaches it unless ebb passes
 * it on.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Where `ebb run` writes its reports, and the signals it listens to (injectable for tests). */
export interface RunIO {
  readonly report: (line: string) => void;
  readonly onSignal: (handler: (signal: StopSignal) => void) => () => void;
}

/** Exit status for an attempt that ran out of time (as GNU timeout). */
export const EXIT_TIMEOUT = 124;

/** An attempt that ended badly: its exit status, and why. */
class AttemptFailed extends Error {
  override readonly name = 'AttemptFailed';
  constructor(
    readonly status: number,
    message: string,
    /**
     * Retrying will not help: spawning failed (command not found, not executable), or the
     * command's output goes nowhere (SIGPIPE).
     */
    readonly permanent = false,
  ) {
    super(message);
  }
}

/** Parses `--retry-on-exit 1,75` into a set of exit statuses. */
function parseExitCodes(text: string): Set<number> {
  const codes = text.split(',').map((part) => parseNumber('--retry-on-exit', part));
  for (const c of codes) {
    if (!Number.isInteger(c) || c < 1 || c > 255) {
      throw new UsageError(`--retry-on-exit expects exit statuses from 1 to 255 separated by commas, got "${text}"`);
    }
  }
  return new Set(codes);
}

/** A running child in its own process group: how to stop it, and when it has gone. */
class Child {
  readonly exited: Promise<void>;

  constructor(readonly process: ChildProcess) {
    this.exited = new Promise((resolve) => {
      process.once('close', () => resolve());
      process.once('error', () => resolve());
    });
  }

  /** Signals the whole process group; false when it no longer exists. */
  signalGroup(signal: NodeJS.Signals | 0): boolean {
    const pid = this.process.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch {
      return false; // ESRCH: the group is empty
    }
  }

  /**
   * Stops the group: `signal` first; then, once the command itself has exited or `graceMs` has
   * passed, SIGKILL for whatever is left of its group, so that no process of the attempt outlives
   * it. Resolves when the command has exited.
   */
  async stop(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    if (!this.signalGroup(signal)) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.signalGroup('SIGKILL');
    await this.exited;
  }
}

/**
 * `ebb run`: runs a command (without a shell unless `--shell`) until it exits 0, backing off
 * between attempts by the chosen policy. Passes stdout and stderr through; reports failed
 * attempts and waits on stderr; stops the command's process group on `--attempt-timeout` and on
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT. Returns the exit status to use: the last attempt's, 124 for a
 * timeout, 127 for a command that cannot be found, 128 + the signal's number when interrupted
 * (130, 143, 129, 131) or when the command was killed by a signal (141 for SIGPIPE, which is not
 * retried).
 */
export async function runCommand(flags: RunFlags, command: readonly string[], io: RunIO): Promise<number> {
  if (command.length === 0) throw new UsageError('run needs a command: ebb run [options] -- command args…');
  // The same builder as `ebb schedule`: the schedule of these flags is what this run does.
  const { backoff } = policyFromFlags(flags);
  const seed = flags.seed === undefined ? undefined : parseSeed(flags.seed);
  const timeoutMs = flags.attemptTimeout === undefined ? Infinity : timerMs('--attempt-timeout', flags.attemptTimeout);
  if (timeoutMs === 0) {
    throw new UsageError(`--attempt-timeout must be longer than 0, got "${flags.attemptTimeout}": such as 30s`);
  }
  const graceMs = flags.killAfter === undefined ? 1_000 : timerMs('--kill-after', flags.killAfter);
  const retryOn = flags.retryOnExit === undefined ? undefined : parseExitCodes(flags.retryOnExit);
  const say = flags.quiet ? () => {} : io.report;
  const [file, ...args] = command as [string, ...string[]];

  const controller = new AbortController();
  let interrupted: StopSignal | undefined;
  let current: Child | undefined;
  const unlisten = io.onSignal((signal) => {
    interrupted ??= signal;
    controller.abort(new Error(signal));
  });

  const attemptOnce = async ({ attempt, signal }: { attempt: number; signal: AbortSignal }): Promise<void> => {
    const child = new Child(
      spawn(file, args, { stdio: 'inherit', detached: true, shell: flags.shell === true, windowsHide: true }),
    );
    current = child;
    const timer = new AbortController();
    let timedOut = false;
    if (timeoutMs !== Infinity) {
      systemClock.sleep(timeoutMs, timer.signal).then(
        () => {
          timedOut = true;
          void child.stop('SIGTERM', graceMs);
        },
        () => {},
      );
    }
    const onAbort = () => void child.stop(interrupted ?? 'SIGTERM', graceMs);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | Error>((resolve) => {
        child.process.once('error', resolve);
        child.process.once('close', (code, sig) => resolve({ code, signal: sig }));
      });
      // Let the whole group go before the next attempt starts.
      if (timedOut) await child.exited;
      if (outcome instanceof Error) {
        const code = (outcome as NodeJS.ErrnoException).code;
        const status = code === 'ENOENT' ? 127 : 126;
        throw new AttemptFailed(status, `cannot run ${JSON.stringify(file)}: ${outcome.message}`, true);
      }
      if (timedOut)
        throw new AttemptFailed(EXIT_TIMEOUT, `attempt ${attempt} timed out after ${formatDuration(timeoutMs)}`);
      if (outcome.code === 0) return;
      if (outcome.code !== null)
        throw new AttemptFailed(outcome.code, `attempt ${attempt} exited with ${outcome.code}`);
      const number = constants.signals[outcome.signal as NodeJS.Signals] ?? 0;
      // The reader of its output has gone (`ebb run -- yes | head -1`): another attempt would
      // write into the same closed pipe, so the run ends as the command did.
      if (outcome.signal === 'SIGPIPE') {
        throw new AttemptFailed(
          128 + number,
          `attempt ${attempt} was killed by SIGPIPE: the reader of its output has gone; not retried`,
          true,
        );
      }
      throw new AttemptFailed(128 + number, `attempt ${attempt} was killed by ${outcome.signal}`);
    } finally {
      timer.abort();
      signal.removeEventListener('abort', onAbort);
    }
  };

  try {
    await retry(attemptOnce, {
      backoff,
      ...(seed === undefined ? {} : { random: seeded(seed) }),
      signal: controller.signal,
      isFailure: ({ error }) =>
        error instanceof AttemptFailed &&
        !error.permanent &&
        (retryOn === undefined || error.status === EXIT_TIMEOUT || retryOn.has(error.status)),
      onRetry: ({ error, delayMs, attempt }) => {
        const limit = backoff.maxAttempts === Infinity ? '' : ` of ${backoff.maxAttempts}`;
        say(
          `ebb run: ${(error as Error).message}; retrying in ${formatDuration(delayMs)} (attempt ${attempt + 1}${limit})`,
        );
      },
    });
    return 0;
  } catch (error) {
    if (interrupted) {
      await current?.stop(interrupted, graceMs);
      say(`ebb run: interrupted by ${interrupted}; stopped the command`);
      return 128 + constants.signals[interrupted];
    }
    if (error instanceof RetryError) {
      const last = error.cause as AttemptFailed;
      const why =
        error.reason === 'attempts'
          ? `after ${error.attempts} attempts (maxAttempts)`
          : error.reason === 'elapsed'
            ? `the next wait would pass the time budget of ${formatDuration(backoff.maxElapsedMs)} (maxElapsedMs)`
            : error.reason;
      say(`ebb run: ${last.message}; giving up ${why}`);
      return last.status;
    }
    if (error instanceof AttemptFailed) {
      say(`ebb run: ${error.message}${error.permanent ? '' : '; not retried (--retry-on-exit)'}`);
      return error.status;
    }
    throw error;
  } finally {
    unlisten();
  }
}
