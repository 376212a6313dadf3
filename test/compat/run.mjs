// Compatibility smoke test for the published shape of `ebb`.
//
// Packs the library exactly as `npm publish` would (npm pack --workspace=ebb), installs the tarball
// into a scratch project under os.tmpdir(), and computes the same schedule in six runtimes:
// the host Node (20 in CI) as ESM and as CommonJS, Node 24, Bun, Deno and headless Chromium.
// Every runtime runs the same check source (CHECK below) and must print the same JSON, which is
// compared byte for byte with EXPECTED: the seeded sample in particular proves that the seeded
// generator gives the same doubles everywhere. It then imports every subpath of the packed
// package.json's `exports` map under the host Node as ESM and as CommonJS.
//
// Node 24, Bun, Deno and playwright-core come from this folder's own npm project
// (`npm ci --prefix test/compat`); Chromium is Debian's /usr/bin/chromium (apt, see .ci/run).
// Run from the repository root: `npm run test:compat`. Exits non-zero if any check fails.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killGroup } from '../support/process-group.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../..');
const compatBin = (name) => join(here, 'node_modules', '.bin', name);
const CHROMIUM = process.env.EBB_COMPAT_CHROMIUM ?? '/usr/bin/chromium';

const EXPECTED = {
  googleHttpClient: [500, 750, 1125, 1687, 2530, 3795, 5692, 8538, 12807, 19210],
  ethernetStopsAfterAttempt: 16,
  defaultSample: [39.46724931250869, 29.55001778709314, 66.75340525730466, 703.6504187057149],
  // retrySync blocks with Atomics.wait where a thread may block, and refuses (without calling the
  // operation) on a browser's main thread: the expectation depends on the runtime.
  retrySync: (runtime) => (runtime === 'browser' ? 'refused to block' : 'blocked and retried'),
  // The browser page also runs retry() on the browser build's own waits (no timer queue there):
  // two real 20 ms waits, and an abort that cuts a one-hour wait short.
  asyncRetry: (runtime) =>
    runtime === 'browser'
      ? { value: 3, waitedMs40: true, aborted: 'rejected with the reason', abortedWithinOneSecond: true }
      : undefined,
};

// The check every runtime runs, pasted verbatim into each entry file and the browser page.
const CHECK = `
function ebbSync(retrySync, constant) {
  let calls = 0;
  try {
    const value = retrySync(() => {
      calls++;
      if (calls < 2) throw new Error('once');
      return calls;
    }, { backoff: constant({ delayMs: 5, maxAttempts: 3 }) });
    return value === 2 ? 'blocked and retried' : 'returned ' + value;
  } catch (error) {
    return calls === 0 && /may not block/.test(error.message) ? 'refused to block' : 'threw ' + error.message;
  }
}
function ebbCheck({ describePolicy, presets, sample, seeded, retrySync, constant }) {
  return {
    googleHttpClient: describePolicy(presets.googleHttpClient, 10).rows.map((r) => r.delayMs),
    ethernetStopsAfterAttempt: describePolicy(presets.ethernet, 3).stopsAfterAttempt,
    defaultSample: sample(presets.default, { random: seeded(1) }),
    retrySync: ebbSync(retrySync, constant),
  };
}
function ebbRuntime() {
  if (typeof Deno !== 'undefined') return { runtime: 'deno', version: Deno.version.deno };
  if (typeof Bun !== 'undefined') return { runtime: 'bun', version: Bun.version };
  if (typeof process !== 'undefined' && process.versions && process.versions.node) {
    return { runtime: 'node', version: process.versions.node };
  }
  return { runtime: 'browser', version: navigator.userAgent };
}
`;

const ESM_ENTRY = `import * as ebb from 'ebb';
${CHECK}
console.log(JSON.stringify({ ...ebbRuntime(), result: ebbCheck(ebb) }));
`;

const CJS_ENTRY = `'use strict';
const ebb = require('ebb');
${CHECK}
console.log(JSON.stringify({ ...ebbRuntime(), result: ebbCheck(ebb) }));
`;

const BROWSER_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>ebb compat</title></head><body>
<script type="module">
${CHECK}
async function ebbAsyncCheck({ retry, constant, noJitter }) {
  let calls = 0;
  const t0 = performance.now();
  const value = await retry(() => {
    calls++;
    if (calls < 3) throw new Error('not yet');
    return calls;
  }, { backoff: constant({ delayMs: 20, maxAttempts: 3, jitter: noJitter }) });
  const waitedMs = performance.now() - t0;
  const controller = new AbortController();
  const reason = new Error('stop');
  const t1 = performance.now();
  const waiting = retry(() => Promise.reject(new Error('down')), {
    signal: controller.signal,
    backoff: constant({ delayMs: 3_600_000, maxAttempts: 2 }),
  }).then(() => 'resolved', (error) => (error === reason ? 'rejected with the reason' : 'rejected with ' + error));
  setTimeout(() => controller.abort(reason), 50);
  const aborted = await waiting;
  return { value, waitedMs40: waitedMs >= 40, aborted, abortedWithinOneSecond: performance.now() - t1 < 1_000 };
}
try {
  // The build a browser bundler picks (package.json \`exports\`, condition \`browser\`).
  const ebb = await import('/ebb/browser/index.js');
  window.ebbOutput = JSON.stringify({ ...ebbRuntime(), result: { ...ebbCheck(ebb), asyncRetry: await ebbAsyncCheck(ebb) } });
} catch (error) {
  window.ebbOutput = JSON.stringify({ error: String((error && error.stack) || error) });
}
</script>
</body></html>
`;

// Imports each specifier given as a JSON array in argv[2]; prints one JSON array of outcomes.
const EXPORTS_ESM = `const out = [];
for (const spec of JSON.parse(process.argv[2])) {
  try {
    const ns = spec.endsWith('.json') ? await import(spec, { with: { type: 'json' } }) : await import(spec);
    out.push({ spec, ok: true, names: Object.keys(ns) });
  } catch (error) {
    out.push({ spec, ok: false, error: String((error && error.message) || error) });
  }
}
console.log(JSON.stringify(out));
`;

const EXPORTS_CJS = `'use strict';
const out = [];
for (const spec of JSON.parse(process.argv[2])) {
  try {
    out.push({ spec, ok: true, names: Object.keys(require(spec)) });
  } catch (error) {
    out.push({ spec, ok: false, error: String((error && error.message) || error) });
  }
}
console.log(JSON.stringify(out));
`;

// ---------------------------------------------------------------------------------------------
// Child processes: every one is awaited, killed (with its process group) on timeout, and killed
// if this script is interrupted.

const children = new Set();

// npm run sets these for its own script; a nested `npm install` in the scratch project must not
// see them (npm_config_local_prefix would point it back at the repository root).
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) => !/^(npm_(package_|lifecycle_|config_local_prefix$|command$)|INIT_CWD$)/i.test(key),
  ),
);
childEnv.NO_COLOR = '1';

function run(command, args, { cwd, timeoutMs, env = childEnv }) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let spawnError;
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
    });
    if (child.pid !== undefined) children.add(child);
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.on('error', (error) => {
      spawnError = error;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolveRun({ code, signal, stdout, stderr, timedOut, spawnError });
    });
  });
}

function describeFailure(command, r, timeoutMs) {
  if (r.spawnError) return `${command} could not start: ${r.spawnError.message}`;
  if (r.timedOut) return `${command} timed out after ${timeoutMs} ms\n${tail(r.stderr || r.stdout)}`;
  return `${command} exited with ${r.code ?? r.signal}\n${tail(r.stderr || r.stdout)}`;
}

function tail(text, lines = 15) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

async function mustRun(command, args, options) {
  const r = await run(command, args, options);
  if (r.spawnError || r.timedOut || r.code !== 0) throw new Error(describeFailure(command, r, options.timeoutMs));
  return r;
}

// ---------------------------------------------------------------------------------------------
// Results

const results = [];

function record(check, version, error) {
  results.push({ check, version: version ?? '?', ok: !error, error });
  const status = error ? 'FAIL' : 'pass';
  console.log(`${status}  ${check}${error ? `\n${indent(error)}` : ''}`);
}

function indent(text) {
  return text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}

function lastJsonLine(stdout) {
  const line = stdout
    .trimEnd()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{') || l.startsWith('['));
  if (line === undefined) throw new Error(`no JSON line on stdout:\n${tail(stdout)}`);
  return JSON.parse(line);
}

// Compares one runtime's output with EXPECTED and with the runtime it claims to be.
function verify(output, expectRuntime) {
  if (output.error) return output.error;
  const problems = [];
  if (output.runtime !== expectRuntime.runtime) {
    problems.push(`ran in ${output.runtime} ${output.version}, expected ${expectRuntime.runtime}`);
  }
  if (expectRuntime.major !== undefined && Number.parseInt(output.version, 10) !== expectRuntime.major) {
    problems.push(`ran in ${output.runtime} ${output.version}, expected major version ${expectRuntime.major}`);
  }
  for (const [key, expected] of Object.entries(EXPECTED)) {
    const want = typeof expected === 'function' ? expected(output.runtime) : expected;
    const got = JSON.stringify(output.result?.[key]);
    if (got !== JSON.stringify(want)) problems.push(`${key}: got ${got}, expected ${JSON.stringify(want)}`);
  }
  return problems.length > 0 ? problems.join('\n') : undefined;
}

async function checkProcessRuntime(check, command, args, { cwd, env, expectRuntime, timeoutMs = 30_000 }) {
  const r = await run(command, args, { cwd, env, timeoutMs });
  if (r.spawnError || r.timedOut || r.code !== 0) {
    record(check, undefined, describeFailure(command, r, timeoutMs));
    return;
  }
  let output;
  try {
    output = lastJsonLine(r.stdout);
  } catch (error) {
    record(check, undefined, error.message);
    return;
  }
  record(check, output.version, verify(output, expectRuntime));
}

// ---------------------------------------------------------------------------------------------
// Browser: a tiny static server for the installed package's dist/ and a page that imports it.

async function startServer(distDir) {
  const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.map': 'application/json' };
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://127.0.0.1').pathname);
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(BROWSER_PAGE);
      return;
    }
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    const file = resolve(distDir, `.${path.replace(/^\/ebb\//, '/')}`);
    if (!path.startsWith('/ebb/') || !file.startsWith(distDir + sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function checkBrowser(state, distDir) {
  const check = 'chromium (headless)';
  if (!existsSync(CHROMIUM)) {
    record(check, undefined, `${CHROMIUM} not found (apt-get install chromium)`);
    return;
  }
  const { chromium } = await import('playwright-core');
  state.server = await startServer(distDir);
  const { port } = state.server.address();
  state.browser = await chromium.launch({
    executablePath: CHROMIUM,
    timeout: 30_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const version = state.browser.version();
  const page = await state.browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(`console: ${msg.text()}`);
  });
  page.on('requestfailed', (request) => pageErrors.push(`requestfailed: ${request.url()}`));
  try {
    await page.goto(`http://127.0.0.1:${port}/`, { timeout: 10_000 });
    const handle = await page.waitForFunction(() => window.ebbOutput, null, { timeout: 10_000 });
    const output = JSON.parse(await handle.jsonValue());
    const error = verify(output, { runtime: 'browser' });
    record(check, version, error && [error, ...pageErrors].join('\n'));
  } catch (error) {
    record(check, version, [error.message, ...pageErrors].join('\n'));
  }
}

// ---------------------------------------------------------------------------------------------
// exports map

// Every subpath of an `exports` map, with `*` patterns expanded against the packed files.
async function exportSubpaths(pkgDir, exportsField) {
  if (exportsField === undefined) return ['.'];
  const map =
    typeof exportsField === 'string' || Array.isArray(exportsField) || !Object.keys(exportsField)[0]?.startsWith('.')
      ? { '.': exportsField }
      : exportsField;
  const subpaths = [];
  for (const [key, target] of Object.entries(map)) {
    if (target === null) continue; // explicitly blocked subpath
    if (!key.includes('*')) {
      subpaths.push(key);
      continue;
    }
    const pattern = firstTarget(target);
    if (pattern === undefined) throw new Error(`exports["${key}"]: cannot find a target to expand`);
    const [targetPrefix, targetSuffix] = pattern.split('*');
    const [keyPrefix, keySuffix] = key.split('*');
    for (const file of await listFiles(pkgDir)) {
      const rel = `./${relative(pkgDir, file).split(sep).join('/')}`;
      if (rel.startsWith(targetPrefix) && rel.endsWith(targetSuffix) && rel.length >= pattern.length - 1) {
        const star = rel.slice(targetPrefix.length, rel.length - targetSuffix.length);
        subpaths.push(`${keyPrefix}${star}${keySuffix}`);
      }
    }
  }
  return subpaths;
}

function firstTarget(target) {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) return target.map(firstTarget).find((t) => t !== undefined);
  if (target && typeof target === 'object') {
    for (const [condition, value] of Object.entries(target)) {
      if (condition === 'types') continue;
      const found = firstTarget(value);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

async function listFiles(dir) {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
}

async function checkExports(project, label, version) {
  const pkgDir = join(project, 'node_modules', 'ebb');
  const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8'));
  const specs = (await exportSubpaths(pkgDir, pkg.exports)).map((s) => (s === '.' ? 'ebb' : `ebb/${s.slice(2)}`));
  console.log(`exports subpaths: ${specs.join(', ')}`);
  const outcomes = {};
  for (const [kind, file] of [
    ['esm', 'exports-esm.mjs'],
    ['cjs', 'exports-cjs.cjs'],
  ]) {
    const timeoutMs = 30_000;
    const r = await run(process.execPath, [file, JSON.stringify(specs)], { cwd: project, timeoutMs });
    if (r.spawnError || r.timedOut || r.code !== 0) {
      for (const spec of specs) record(`${label} ${kind} ${spec}`, version, describeFailure('node', r, timeoutMs));
      continue;
    }
    for (const outcome of lastJsonLine(r.stdout)) outcomes[`${kind} ${outcome.spec}`] = outcome;
  }
  const surface = (names) => names.filter((n) => n !== 'default' && n !== '__esModule').sort();
  for (const spec of specs) {
    const esm = outcomes[`esm ${spec}`];
    const cjs = outcomes[`cjs ${spec}`];
    for (const [kind, outcome] of [
      ['esm', esm],
      ['cjs', cjs],
    ]) {
      if (!outcome) continue;
      let error = outcome.ok ? undefined : outcome.error;
      if (outcome.ok && !spec.endsWith('.json') && surface(outcome.names).length === 0) {
        console.log(`note  ${label} ${kind} import ${spec}: imports, but exports no names`);
      }
      // Dual-package check: the CommonJS build must export the same names as the ESM build.
      if (kind === 'cjs' && !error && esm?.ok && !spec.endsWith('.json')) {
        const a = surface(esm.names);
        const b = surface(outcome.names);
        const onlyEsm = a.filter((n) => !b.includes(n));
        const onlyCjs = b.filter((n) => !a.includes(n));
        if (onlyEsm.length || onlyCjs.length) {
          error = `export names differ from ESM: only in ESM [${onlyEsm}], only in CJS [${onlyCjs}]`;
        }
      }
      record(`${label} ${kind} import ${spec}`, version, error);
    }
  }
}

// ---------------------------------------------------------------------------------------------

function printTable() {
  const rows = results.map((r) => [r.check, r.version, r.ok ? 'pass' : 'FAIL']);
  const header = ['runtime / check', 'version', 'result'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  console.log('');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-+-'));
  for (const row of rows) console.log(line(row));
  console.log('');
}

async function main(state) {
  const hostMajor = Number.parseInt(process.versions.node, 10);
  const host = `node${hostMajor}`;
  if (hostMajor !== 20) console.log(`note: host Node is ${process.version}; CI runs this under Node 20`);
  if (!existsSync(compatBin('node'))) {
    throw new Error('test/compat dependencies are missing: run `npm ci --prefix test/compat` first');
  }

  state.scratch = await mkdtemp(join(tmpdir(), 'ebb-compat-'));
  const packDir = join(state.scratch, 'pack');
  const project = join(state.scratch, 'project');
  await mkdir(packDir);
  await mkdir(project);

  console.log(`packing ebb into ${packDir}`);
  await mustRun('npm', ['pack', '--workspace=ebb', '--pack-destination', packDir], {
    cwd: repoRoot,
    timeoutMs: 60_000,
  });
  const tarballs = (await readdir(packDir)).filter((f) => f.endsWith('.tgz'));
  if (tarballs.length !== 1) throw new Error(`expected one tarball in ${packDir}, found: ${tarballs.join(', ')}`);
  const tarball = join(packDir, tarballs[0]);

  console.log(`installing ${tarballs[0]} into ${project}`);
  await writeFile(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'ebb-compat-scratch', version: '0.0.0', private: true }, null, 2)}\n`,
  );
  // Deno resolves the bare `ebb` through package.json and the node_modules npm just made.
  await writeFile(join(project, 'deno.json'), `${JSON.stringify({ nodeModulesDir: 'manual' }, null, 2)}\n`);
  await mustRun('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefix', project], {
    cwd: project,
    timeoutMs: 60_000,
  });
  await writeFile(join(project, 'check.mjs'), ESM_ENTRY);
  await writeFile(join(project, 'check.cjs'), CJS_ENTRY);
  await writeFile(join(project, 'exports-esm.mjs'), EXPORTS_ESM);
  await writeFile(join(project, 'exports-cjs.cjs'), EXPORTS_CJS);

  console.log('');
  const cwd = project;
  await checkProcessRuntime(`${host} esm`, process.execPath, ['check.mjs'], {
    cwd,
    expectRuntime: { runtime: 'node', major: hostMajor },
  });
  await checkProcessRuntime(`${host} cjs`, process.execPath, ['check.cjs'], {
    cwd,
    expectRuntime: { runtime: 'node', major: hostMajor },
  });
  await checkProcessRuntime('node24', compatBin('node'), ['check.mjs'], {
    cwd,
    expectRuntime: { runtime: 'node', major: 24 },
  });
  await checkProcessRuntime('bun', compatBin('bun'), ['check.mjs'], { cwd, expectRuntime: { runtime: 'bun' } });
  await checkProcessRuntime('deno', compatBin('deno'), ['run', '--allow-read', '--allow-env', 'check.mjs'], {
    cwd,
    env: { ...childEnv, DENO_DIR: join(state.scratch, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1' },
    expectRuntime: { runtime: 'deno' },
  });
  try {
    await checkBrowser(state, join(project, 'node_modules', 'ebb', 'dist'));
  } catch (error) {
    record('chromium (headless)', undefined, `could not start: ${error.message}`);
  }
  await checkExports(project, host, process.versions.node);
}

const state = { scratch: undefined, server: undefined, browser: undefined };

async function cleanup() {
  for (const child of children) killGroup(child);
  await state.browser?.close().catch(() => {});
  if (state.server) {
    state.server.closeAllConnections();
    state.server.close();
  }
  if (state.scratch) rmSync(state.scratch, { recursive: true, force: true });
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    for (const child of children) killGroup(child);
    if (state.scratch) rmSync(state.scratch, { recursive: true, force: true });
    process.exit(code); // Playwright closes the browser on exit
  });
}

let fatal;
try {
  await main(state);
} catch (error) {
  fatal = error;
} finally {
  await cleanup();
}

printTable();
const failed = results.filter((r) => !r.ok).length;
if (fatal) console.error(`compat: could not run: ${fatal.message}`);
console.log(`compat: ${results.length - failed} passed, ${failed} failed`);
process.exitCode = fatal || failed > 0 || results.length === 0 ? 1 : 0;
