// shed() wraps the request listener of node:http, of an Express app and of Fastify's raw server
// factory, with no cast: the listener it returns is the one each server asks for. Compile-time
// checks only (test/types/no-dom.test.ts runs tsc on this folder).
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { type SheddingListener, shed } from 'ebb/http';
import { shedMiddleware } from 'ebb/middleware';
import express from 'express';
import fastify from 'fastify';

const limits = { maxConcurrent: 64, maxQueue: 256 };

// node:http, the handler inline: its types come from createServer.
export const plain: Server = createServer(
  shed((req, res) => {
    res.end(req.url);
  }, limits),
);

// node:http, the handler annotated and written apart.
const handler = (req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(200).end(req.method);
};
export const annotated: Server = createServer(shed(handler, limits));
export const counters: number = shed(handler, limits).stats().running;
// Where nothing asks for a listener type, the handler's own types: not widened to unknown.
export const own: SheddingListener<IncomingMessage, ServerResponse> = shed(handler, limits);
// @ts-expect-error: a listener of IncomingMessage takes no string (it would, typed over unknown).
export const notWidened: SheddingListener<string, ServerResponse> = shed(handler, limits);

// An Express app, bare: it is a request listener for node:http's own types, though its last
// call signature is a router's (req, res, next) over Express's richer types. No type arguments,
// no cast.
const app = express();
app.get('/', (_req, res) => void res.send('ok'));
export const viaExpress: Server = createServer(shed(app, limits));
// The same with nothing typed around it, as shed's own example writes it: createServer is generic,
// so the listener's types are not fixed before shed is called.
createServer(shed(app, { maxConcurrent: 64, maxQueue: 256, retryAfterMs: 2_000 })).listen(8080);
// Given to a server's 'request' event, and kept in a variable typed as node:http's listener.
export const onRequest: Server = createServer().on('request', shed(app, limits));
export const asListener: RequestListener = shed(app, limits);
// Type arguments still work for whoever writes them.
export const viaExpressTyped: Server = createServer(shed<IncomingMessage, ServerResponse>(app, limits));

// Express with shed as its first middleware (ebb/middleware), and a router mounted behind it.
const guarded = express();
guarded.use(shedMiddleware(limits));
guarded.use(express.Router().get('/', (_req, res) => void res.send('ok')));
export const viaMiddleware: Server = createServer(guarded);

// Fastify: its server factory hands over the raw handler; the server it builds sheds load.
export const viaFastify = fastify({
  serverFactory: (raw) => createServer(shed(raw, limits)),
});

// @ts-expect-error: a handler whose response cannot answer 503 (no writeHead/end) is refused.
shed((_req: unknown, _res: { once(): void }) => {}, limits);

// A handler for a narrower request than node:http gives is refused by createServer, not widened.
const narrow = (_req: IncomingMessage & { user: string }, res: ServerResponse): void => void res.end();
// @ts-expect-error: createServer hands an IncomingMessage, which has no `user`.
createServer(shed(narrow, limits));
