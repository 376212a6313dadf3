import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Random } from 'ebb';

/** What the proxy does to one connection. */
export type Fault =
  /** Forwards both ways untouched. */
  | 'pass'
  /** Resets (TCP RST) the client as soon as its request arrives: nothing reaches the server. */
  | 'reset-request'
  /** Forwards the request, then resets the client after a random part of the response. */
  | 'reset-response'
  /** Forwards a random part of the response, then closes cleanly (FIN): a truncated response. */
  | 'truncate'
  /** Swallows the request and never answers, until the client gives up. */
  | 'stall-request'
  /** Forwards a random part of the response, then nothing more, until the client gives up. */
  | 'stall-response'
  /** Forwards everything, each chunk after a random delay of up to 20 ms. */
  | 'slow';

/** Each fault's share of connections. */
export const FAULT_MIX: readonly [Fault, number][] = [
  ['pass', 0.4],
  ['reset-request', 0.1],
  ['reset-response', 0.1],
  ['truncate', 0.1],
  ['stall-request', 0.1],
  ['stall-response', 0.1],
  ['slow', 0.1],
];

export interface FaultProxy {
  readonly origin: string;
  /** How many connections got each fault. */
  readonly counts: Record<Fault, number>;
  /** Client connections still open. */
  open(): number;
  close(): Promise<void>;
}

function pick(random: Random): Fault {
  let r = random();
  for (const [fault, share] of FAULT_MIX) {
    if (r < share) return fault;
    r -= share;
  }
  return 'pass';
}

/**
 * A TCP proxy in front of `target` (host 127.0.0.1) that injects one fault, drawn from
 * `random`, into each connection. Cuts happen at a random byte of the response — in the status
 * line, the headers or the body — so the client meets every kind of damage.
 */
export async function startFaultProxy(targetPort: number, random: Random): Promise<FaultProxy> {
  const counts = Object.fromEntries(FAULT_MIX.map(([f]) => [f, 0])) as Record<Fault, number>;
  const clients = new Set<Socket>();
  const server: Server = createServer((client) => {
    clients.add(client);
    const fault = pick(random);
    counts[fault]++;
    // Where to cut the response, drawn now so that the stream of draws does not depend on timing:
    // a third of the cuts fall in the status line or headers, the rest anywhere in the first 40 kB.
    const inHead = random() < 1 / 3;
    const cutAt = 1 + Math.floor(random() * (inHead ? 200 : 40_000));
    const delays = Array.from({ length: 64 }, () => Math.floor(random() * 20));
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const done = () => {
      upstream.destroy();
      client.destroy();
    };
    client.on('error', done);
    upstream.on('error', done);
    client.on('close', () => {
      clients.delete(client);
      upstream.destroy();
    });
    // Writes to the client go through this chain, so that a delayed chunk never overtakes the end.
    let chain: Promise<void> = Promise.resolve();
    const toClient = (f: () => void) => {
      chain = chain.then(() => {
        if (!client.destroyed) f();
      });
    };
    upstream.on('close', () => {
      if (fault !== 'stall-request' && fault !== 'stall-response') toClient(() => client.end());
    });

    if (fault === 'reset-request') {
      client.once('data', () => client.resetAndDestroy());
      return;
    }
    if (fault === 'stall-request') {
      client.on('data', () => {}); // read and drop
      return;
    }
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    client.on('end', () => upstream.end());

    let sent = 0;
    let chunks = 0;
    let stalled = false;
    upstream.on('data', (chunk: Buffer) => {
      if (stalled) return;
      if (fault === 'slow') {
        const delay = delays[chunks++ % delays.length];
        chain = chain.then(() => new Promise((r) => setTimeout(r, delay)));
        toClient(() => client.write(chunk));
        return;
      }
      if (fault === 'pass' || sent + chunk.length < cutAt) {
        sent += chunk.length;
        client.write(chunk);
        return;
      }
      const part = chunk.subarray(0, cutAt - sent);
      sent = cutAt;
      client.write(part);
      if (fault === 'reset-response') client.resetAndDestroy();
      else if (fault === 'truncate') {
        client.end();
        upstream.destroy();
      } else stalled = true; // stall-response: the rest never comes
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    counts,
    open: () => clients.size,
    close: () =>
      new Promise((resolve) => {
        for (const c of clients) c.destroy();
        server.close(() => resolve());
      }),
  };
}
