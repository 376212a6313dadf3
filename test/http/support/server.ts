import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { expect } from 'vitest';

/** One request as the server saw it. */
export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  /** performance.now() at arrival. */
  readonly at: number;
}

/** A real node:http server on 127.0.0.1 that counts what reaches it. */
export interface TestServer {
  readonly server: Server;
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  /** Every request that reached the handler, in order. */
  readonly seen: Seen[];
  /** Responses started and not yet over ('close' not emitted): each one holds a connection. */
  openResponses(): number;
  /** Connections that carried at least one request and are still open. */
  openRequestConnections(): number;
  /** Destroys the open connections that never carried a request; returns how many there were. */
  destroySpares(): number;
  /** server.getConnections(), as a promise. */
  connections(): Promise<number>;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

/** Reads a request body whole. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Starts a server on an ephemeral port of 127.0.0.1. `keepAliveTimeout` is short so that idle
 * keep-alive connections go away on their own; the backlog is large enough for thousands of
 * simultaneous connects (Node's default of 511 would make the kernel drop SYNs under load).
 */
export async function startServer(
  handler: Handler,
  options: { wrap?: (h: Handler) => Handler } = {},
): Promise<TestServer> {
  const seen: Seen[] = [];
  let open = 0;
  const carried = new Set<Socket>();
  const sockets = new Set<Socket>();
  const inner = options.wrap ? options.wrap(handler) : handler;
  const server = createServer((req, res) => {
    const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: performance.now() };
    seen.push(s);
    open++;
    res.once('close', () => open--);
    const socket = req.socket;
    if (!carried.has(socket)) {
      carried.add(socket);
      socket.once('close', () => carried.delete(socket));
    }
    inner(req, res, s);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    seen,
    openResponses: () => open,
    openRequestConnections: () => carried.size,
    destroySpares: () => {
      let n = 0;
      for (const socket of sockets) {
        if (!carried.has(socket)) {
          socket.destroy();
          n++;
        }
      }
      return n;
    },
    connections: () => new Promise((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` every 10 ms until it is true or `timeoutMs` passes; returns its last value. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The leak check, after the client is done: every response the server started is over (an
 * unread body big enough to fill the socket buffers keeps its response open forever), every
 * connection that carried a request has closed or gone idle, and once the idle ones are closed
 * `server.getConnections()` is 0.
 *
 * Node's fetch (undici 6) opens a spare connection right after it destroys one (after an abort
 * or a cancelled body) and sends nothing on it until its next request; it closes it after its
 * 4 s keep-alive. Such a connection carries no request and holds no response, so it is no leak
 * of the code under test; the check closes it rather than wait 4 s. Every connection that
 * carried a request must be closed or idle.
 */
export async function expectNoLeaks(t: TestServer): Promise<void> {
  const responsesOver = await eventually(() => t.openResponses() === 0);
  expect(responsesOver, `${t.openResponses()} responses still open: a body was neither read nor cancelled`).toBe(true);
  // Again on every poll: undici may open its spare connection after the first call.
  const closed = await eventually(async () => {
    t.server.closeIdleConnections();
    t.destroySpares();
    return (await t.connections()) === 0 && t.openRequestConnections() === 0;
  });
  expect(closed, `${await t.connections()} connections still open`).toBe(true);
}

/** 16 MiB: more than the loopback socket buffers hold, so an unread body keeps its response open. */
export const BIG = Buffer.alloc(16 * 1024 * 1024, 0x61);
