// The documentation site, built by `npm run site` (scripts/build-site.mjs) and driven in Debian's
// Chromium through playwright-core (no browser is downloaded): every page loads with no console
// error and no broken link; the playground's schedule of every preset is what
// `ebb schedule <id> --json` prints; the simulations run in the page and draw their charts.
// Screenshots go to reports/site/ (gitignored), for CI to keep.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { presetCatalog } from 'ebb';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ebb, ROOT } from '../support/cli.js';
import { recordSkip } from '../support/skips.mjs';

/** Debian's Chromium; EBB_SITE_CHROMIUM names another (a path that does not exist skips the suite). */
const CHROMIUM = process.env.EBB_SITE_CHROMIUM ?? '/usr/bin/chromium';
const OUT = join(ROOT, 'site', 'dist');
const SHOTS = join(ROOT, 'reports', 'site');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`test/site/site.test.ts needs ${CHROMIUM} in CI`);
if (!haveChromium) {
  console.warn(`skipping the site in a browser: ${CHROMIUM} not found`);
  recordSkip('chromium');
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** A static server of site/dist on 127.0.0.1: the site as any static host would serve it. */
function serve(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(OUT, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(OUT) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Runs the site's build as a process. */
function buildSite(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'scripts', 'build-site.mjs')],
      { cwd: ROOT, timeout: 240_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!haveChromium)('the documentation site in headless Chromium', () => {
  let server: Server;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    const built = await buildSite();
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toMatch(/every local link resolves/);
    mkdirSync(SHOTS, { recursive: true });
    server = await serve();
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: 60_000,
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
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  /** A page that records every console error, uncaught error and failed or 4xx/5xx request. */
  async function open(): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    return { page, problems };
  }

  it('every page loads with no console error, and every link between pages reaches a page (and its anchor)', async () => {
    const pages = readdirSync(OUT, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.html'))
      .sort();
    expect(pages.length).toBeGreaterThan(100); // the manual, the topic pages and the reference
    const { page, problems } = await open();
    const ids = new Map<string, Set<string>>();
    const links: { from: string; to: string }[] = [];
    for (const file of pages) {
      const before = problems.length;
      const response = await page.goto(`${origin}/${file}`, { waitUntil: 'load' });
      expect(response?.status(), file).toBe(200);
      const found = await page.evaluate(() => ({
        ids: [...document.querySelectorAll('[id], a[name]')].map((e) => e.id || (e.getAttribute('name') ?? '')),
        hrefs: [...document.querySelectorAll('a[href]')].map((a) => (a as HTMLAnchorElement).href),
      }));
      ids.set(`${origin}/${file}`, new Set(found.ids));
      for (const to of found.hrefs) if (to.startsWith(origin)) links.push({ from: file, to });
      expect(problems.slice(before), file).toEqual([]);
    }
    const broken: string[] = [];
    for (const { from, to } of links) {
      const [path, hash] = to.split('#') as [string, string | undefined];
      const target = path.endsWith('/') ? `${path}index.html` : path;
      const known = ids.get(target);
      if (!known) broken.push(`${from} → ${to}: no such page`);
      else if (hash && !target.endsWith('/hierarchy.html') && !known.has(decodeURIComponent(hash))) {
        broken.push(`${from} → ${to}: no such anchor`);
      }
    }
    expect(broken).toEqual([]);
    // The class hierarchy page draws its anchors with a script: open each one it is linked by.
    const hierarchy = [...new Set(links.map((l) => l.to).filter((t) => /\/hierarchy\.html#./.test(t)))];
    const undrawn: string[] = [];
    for (const to of hierarchy) {
      await page.goto(to, { waitUntil: 'load' });
      const id = decodeURIComponent(to.split('#')[1] as string);
      await page
        .waitForFunction((i) => document.getElementById(i) !== null, id, { timeout: 10_000 })
        .catch(() => undrawn.push(to));
    }
    expect(hierarchy.length).toBeGreaterThan(10);
    expect(undrawn).toEqual([]);
    expect(problems).toEqual([]);
    for (const [name, file] of [
      ['home', 'index.html'],
      ['guide', 'guides/protect-a-service.html'],
      ['reference', 'api/index.html'],
      ['reference-retry', 'api/functions/index.retry.html'],
    ] as const) {
      await page.goto(`${origin}/${file}`, { waitUntil: 'load' });
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
    }
    await page.close();
  }, 600_000);

  it('the playground shows, for every preset, the exact schedule `ebb schedule <id> --json` prints', async () => {
    const { page, problems } = await open();
    await page.goto(`${origin}/playground.html`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-playground="ready"]');
    const ids = await page.$$eval('#preset option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(ids).toEqual(['custom', ...presetCatalog.map((p) => p.id)]);
    for (const { id } of presetCatalog) {
      await page.selectOption('#preset', id);
      await page.waitForSelector(`#schedule[data-policy="${id}"]`);
      const shown = await page.$$eval('#schedule tbody tr', (trs) =>
        trs.map((tr) => {
          const d = (key: string) =>
            Number((tr.querySelector(`[data-${key}]`) as HTMLElement).getAttribute(`data-${key}`));
          return {
            attempt: d('attempt'),
            delayMs: d('delay-ms'),
            minDelayMs: d('min-delay-ms'),
            maxDelayMs: d('max-delay-ms'),
            meanDelayMs: d('mean-delay-ms'),
          };
        }),
      );
      const cli = await ebb(['schedule', id, '--json']);
      expect(cli.code, cli.stderr).toBe(0);
      const expected = JSON.parse(cli.stdout) as { rows: unknown[] };
      expect(shown, id).toEqual(expected.rows);
      expect(shown.length, id).toBeGreaterThan(0);
      const bars = await page.$eval('#histogram', (svg) => svg.querySelectorAll('path').length);
      expect(bars, `${id}: the sampled distribution is drawn`).toBe(1);
    }
    // Editing a field makes a custom policy at once: 250 ms ×3 without jitter.
    await page.fill('#initialDelayMs', '250');
    await page.fill('#multiplier', '3');
    await page.selectOption('#jitter', 'none');
    await page.waitForFunction(() => (document.getElementById('summary')?.textContent ?? '').includes('250 ms ×3'));
    const custom = await page.$$eval('#schedule tbody tr [data-delay-ms]', (tds) =>
      tds.slice(0, 3).map((td) => Number(td.getAttribute('data-delay-ms'))),
    );
    expect(custom).toEqual([250, 750, 2250]);
    await page.screenshot({ path: join(SHOTS, 'playground-schedule.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 300_000);

  it('the contention, overload and outage simulations run in the page and draw their charts', async () => {
    const { page, problems } = await open();
    await page.goto(`${origin}/playground.html`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-playground="ready"]');
    await page.click('#run-contention');
    await page.waitForSelector('#chart-contention[data-drawn="5"]', { timeout: 120_000 });
    const bars = await page.$$eval('#chart-contention rect[data-value]', (rs) =>
      rs.map((r) => Number(r.getAttribute('data-value'))),
    );
    expect(bars).toHaveLength(5); // none, exponential, full, equal, decorrelated
    expect(bars.every((b) => b > 0)).toBe(true);
    await page.click('#run-overload');
    await page.waitForSelector('#chart-overload[data-drawn="2"]', { timeout: 120_000 });
    const lines = await page.$$eval('#chart-overload path[data-series]', (ps) =>
      ps.map((p) => (p.getAttribute('d') ?? '').split('L').length),
    );
    expect(lines).toHaveLength(2);
    for (const points of lines) expect(points).toBeGreaterThan(3);
    expect(await page.textContent('#overload-summary')).toMatch(/your policy: \d+ of 300 served/);
    await page.click('#run-outage');
    await page.waitForSelector('#chart-outage[data-drawn="2"]', { timeout: 120_000 });
    const summary = (await page.textContent('#outage-summary')) ?? '';
    const m = /requests to the dead service: (\d+) without a breaker, (\d+) with one/.exec(summary);
    expect(m, summary).not.toBeNull();
    const [without, withBreaker] = [Number(m?.[1]), Number(m?.[2])];
    // The breaker keeps all but its probes off the dead service.
    expect(withBreaker).toBeGreaterThan(0);
    expect(withBreaker * 10).toBeLessThan(without);
    await page.screenshot({ path: join(SHOTS, 'playground-simulations.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 300_000);
});
