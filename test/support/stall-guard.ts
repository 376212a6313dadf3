// A vitest reporter that ends `npm test` when one test file runs far longer than any should. A
// test's own timeout is a timer in its worker: a worker stuck in synchronous code (an endless
// loop) or blocked in a synchronous call never runs it, and vitest, which runs the files one at a
// time on a 2-core machine, would then wait for ever with nothing printed. Instead, once a file
// has run for the limit, this names it, stops the run's worker processes and exits with 1.
//
// The limit is 10 minutes per file (the slowest file here takes about a minute); the environment
// variable EBB_TEST_FILE_LIMIT_S sets another, in seconds.
import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { secondsFromEnv } from './env-limits.js';

/** The default limit: a file that runs longer is taken to be stuck. */
export const FILE_LIMIT_MS = 10 * 60_000;

/** The files that have run for at least `limitMs` at `nowMs`, with how long, longest first. */
export function stalledFiles(
  started: ReadonlyMap<string, number>,
  nowMs: number,
  limitMs: number,
): Array<{ file: string; ms: number }> {
  const out: Array<{ file: string; ms: number }> = [];
  for (const [file, since] of started) if (nowMs - since >= limitMs) out.push({ file, ms: nowMs - since });
  return out.sort((a, b) => b.ms - a.ms);
}

/**
 * How long the run has been idle at `nowMs`: no file running and none begun since the last one
 * ended at `lastEndMs` (a worker that never starts); 0 while a file runs or before any ended.
 */
export function idleMs(started: ReadonlyMap<string, number>, lastEndMs: number | undefined, nowMs: number): number {
  return started.size > 0 || lastEndMs === undefined ? 0 : nowMs - lastEndMs;
}

/** The limit in ms from EBB_TEST_FILE_LIMIT_S: a positive number of seconds, else the default. */
export function limitFromEnv(value: string | undefined): number {
  return secondsFromEnv('EBB_TEST_FILE_LIMIT_S', value, FILE_LIMIT_MS);
}

/**
 * A process's state letter (`R`, `S`, `Z`…) and its parent's pid from Linux's /proc/PID/stat (the
 * fields after the command's closing parenthesis); undefined when there is no such process or no
 * /proc.
 */
export function procStat(pid: number | string): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state as string, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** The processes whose parent is `pid` (Linux: read from /proc; elsewhere none). */
function childrenOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  // A process that ended while we read has no stat.
  return entries.filter((name) => /^\d+$/.test(name) && procStat(name)?.ppid === pid).map(Number);
}

export class StallGuard implements Reporter {
  readonly #limitMs: number;
  readonly #started = new Map<string, number>();
  #lastEnd: { file: string; ms: number } | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(limitMs: number = limitFromEnv(process.env.EBB_TEST_FILE_LIMIT_S)) {
    this.#limitMs = limitMs;
  }

  onTestRunStart(): void {
    const every = Math.min(10_000, Math.max(250, this.#limitMs / 4));
    this.#timer = setInterval(() => this.#check(), every);
    this.#timer.unref();
  }

  // Called when a worker begins the file (before its imports), so a file stuck while loading counts too.
  onTestModuleQueued(module: TestModule): void {
    this.#started.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    this.#started.delete(module.moduleId);
    this.#lastEnd = { file: module.moduleId, ms: Date.now() };
  }

  onTestRunEnd(): void {
    clearInterval(this.#timer);
  }

  #check(): void {
    const now = Date.now();
    const stalled = stalledFiles(this.#started, now, this.#limitMs);
    if (stalled.length > 0) {
      const files = stalled.map((s) => relative(process.cwd(), s.file));
      const names = stalled.map((s, i) => `${files[i]} (${Math.round(s.ms / 1000)} s)`).join(', ');
      this.#stop(
        `${names} ran for longer than the ${this.#limitMs / 1000} s a test file may take (EBB_TEST_FILE_LIMIT_S): ` +
          'a test stuck in synchronous code or a blocking call, where its own timeout cannot fire. ' +
          `Run it alone to see where: npx vitest run ${files[0]}`,
      );
      return;
    }
    const last = this.#lastEnd;
    if (last && idleMs(this.#started, last.ms, now) >= this.#limitMs) {
      this.#stop(
        `no test file began in the ${this.#limitMs / 1000} s since ${relative(process.cwd(), last.file)} ended ` +
          '(EBB_TEST_FILE_LIMIT_S): a worker process that did not start.',
      );
    }
  }

  #stop(why: string): void {
    process.stderr.write(`\nnpm test stopped: ${why}\n`);
    for (const pid of childrenOf(process.pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    process.exit(1);
  }
}
