// The experiment behind `ebb demo` (see demo.ts): one crowd of clients against one fresh
// node:http server behind shed(), on a virtual clock that moves only when the system is at rest.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, seeded } from 'ebb';
import { type SheddingListener, shed } from 'ebb/http';
import type { DemoSettings } from './demo-settings.js';

/** A uniform number in [0, 1) fixed by the seed, the client and the attempt: a flaky 500 or not. */
function draw(seed: number, client: number, attempt: number): number {
  return seeded(BigInt(seed) * 1_000_003n + BigInt(client) * 1_009n + BigInt(attempt))();
}

interface Timer {
  readonly due: number;
  readonly seq: number;
  readonly wake: () => void;
}

/**
 * Virtual time for the whole experiment. Unlike ebb's `virtualClock`, which moves on after one
 * turn of the event loop (enough for code that only awaits promises), this one moves only when
 * the driver has seen the system at rest, because real sockets are in the loop.
 */
class SteppedClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer: Timer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, wake: resolve };
      // Binary insertion: by due time, ties in the order the sleeps were made.
      let lo = 0;
      let hi = this.#timers.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((this.#timers[mid] as Timer).due <= timer.due) lo = mid + 1;
        else hi = mid;
      }
      this.#timers.splice(lo, 0, timer);
    });
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves to the earliest wake-up and wakes every sleep due then. */
  wakeNext(): void {
    const first = this.#timers[0];
    if (!first) return;
    this.#now = Math.max(this.#now, first.due);
    let n = 0;
    while (n < this.#timers.length && (this.#timers[n] as Timer).due <= this.#now) n++;
    for (const t of this.#timers.splice(0, n)) t.wake();
  }
}

type ClientState = 'active' | 'sleeping' | 'done';

interface Held {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly client: number;
}

/** One crowd against one fresh server, in virtual time. */
export class Experiment {
  readonly clock = new SteppedClock();
  readonly server: Server;
  readonly states: ClientState[];
  readonly arrivals: number[] = [];
  readonly retryArrivals: number[] = [];
  flaky = 0;
  /** Responses the server has not finished (their 'close' not yet seen). */
  readonly #open = new Set<ServerResponse>();
  /** Requests that arrived at the current instant, not yet handed to `shed()`. */
  #held: Held[] = [];
  readonly #listener: SheddingListener<IncomingMessage, ServerResponse>;
  #scheduled = false;
  #lastProgress = performance.now();
  #finish: (() => void) | undefined;

  constructor(readonly settings: DemoSettings) {
    this.states = Array.from({ length: settings.clients }, () => 'active' as ClientState);
    const work = (req: IncomingMessage, res: ServerResponse) => {
      const client = Number(req.headers['x-demo-client']);
      const attempt = Number(req.headers['x-demo-attempt']);
      void this.clock.sleep(settings.workMs).then(() => {
        if (draw(settings.seed, client, attempt) < settings.flakyRate) {
          this.flaky++;
          res.writeHead(500);
          res.end('flaky\n');
        } else res.end('ok\n');
      });
    };
    // Retry-After: 0, "come back whenever": the clients' own policies decide when, which is what
    // the demo compares.
    this.#listener = shed(work, {
      maxConcurrent: settings.maxConcurrent,
      maxQueue: settings.maxQueue,
      retryAfterMs: 0,
    });
    const seen = new Set<number>();
    this.server = createServer((req, res) => {
      const client = Number(req.headers['x-demo-client']);
      const t = this.clock.now();
      this.arrivals.push(t);
      if (seen.has(client)) this.retryArrivals.push(t);
      else seen.add(client);
      this.#open.add(res);
      // Registered before shed()'s own 'close' listener, so by the next check both have run.
      res.once('close', () => {
        this.#open.delete(res);
        this.poke();
      });
      this.#held.push({ req, res, client });
      this.poke();
    });
    this.server.keepAliveTimeout = 60_000;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A client's view of the clock: sleeping marks it at rest. */
  clientClock(id: number): Clock {
    return {
      now: () => this.clock.now(),
      sleep: (ms, signal) => {
        this.states[id] = 'sleeping';
        this.poke();
        return this.clock.sleep(ms, signal).then(() => {
          this.states[id] = 'active';
        });
      },
    };
  }

  done(id: number): void {
    this.states[id] = 'done';
    this.poke();
  }

  /** Runs until every client is done; rejects if nothing moves for `stallMs` of real time. */
  run(stallMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const watchdog = setInterval(() => {
        if (performance.now() - this.#lastProgress > stallMs) {
          clearInterval(watchdog);
          reject(new Error(`ebb demo: no progress for ${stallMs / 1000} s (a bug in the demo's driver)`));
        }
      }, 1_000);
      this.#finish = () => {
        clearInterval(watchdog);
        resolve();
      };
      this.poke();
    });
  }

  /** Something changed: look again once pending promise callbacks have run. */
  poke(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#step();
    });
  }

  /** At rest: every active client's request sits at the server, and no response is under way. */
  #atRest(): boolean {
    let active = 0;
    for (const s of this.states) if (s === 'active') active++;
    if (active !== this.#open.size) return false;
    for (const res of this.#open) if (res.writableEnded) return false;
    return true;
  }

  #step(): void {
    if (!this.#finish || !this.#atRest()) return;
    this.#lastProgress = performance.now();
    if (this.#held.length > 0) {
      const batch = this.#held.sort((a, b) => a.client - b.client);
      this.#held = [];
      for (const h of batch) this.#listener(h.req, h.res);
      this.poke();
      return;
    }
    if (this.clock.pending > 0) {
      this.clock.wakeNext();
      this.poke();
      return;
    }
    if (this.states.every((s) => s === 'done')) this.#finish();
  }

  get shedCount(): number {
    return this.#listener.stats().shed;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
