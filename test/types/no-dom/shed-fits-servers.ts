// shed() wraps the request listener of node:http, of an Express app and of Fastify's raw server
// factory, with no cast: the listener it returns is the one each server asks for. Compile-time
// checks only (test/types/no-dom.test.ts runs tsc on this folder).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { shed } from 'ebb/http';
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

// An Express app is a request listener for node:http's own types; its last call signature is a
// router's (req, res, next) over Express's richer types, which TypeScript would infer from, so
// the types come first: shed<IncomingMessage, ServerResponse>(app). Type arguments, not a cast.
const app = express();
app.get('/', (_req, res) => void res.send('ok'));
export const viaExpress: Server = createServer(shed<IncomingMessage, ServerResponse>(app, limits));

// Fastify: its server factory hands over the raw handler; the server it builds sheds load.
export const viaFastify = fastify({
  serverFactory: (raw) => createServer(shed(raw, limits)),
});

// @ts-expect-error: a handler whose response cannot answer 503 (no writeHead/end) is refused.
shed((_req: unknown, _res: { once(): void }) => {}, limits);
