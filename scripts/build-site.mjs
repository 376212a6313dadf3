// Builds the documentation site into site/dist: the manual and the topic pages (Markdown rendered
// with markdown-it), the API reference (TypeDoc, from the library's built declarations) and the
// playground (bundled with esbuild from site/playground/, ebb's browser build inside). Static
// files only, no CDN: the site works offline, opened from a local server or the file system.
//
// Run after `npm run build` (the reference reads packages/ebb/dist/*.d.ts): `npm run site`.
// It fails on a link between pages that points nowhere, on an image that is missing, and on a
// TypeDoc warning other than the ones listed in TYPEDOC_KNOWN (gaps of the doc comments,
// reported by the build so that they can be fixed in the source).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync, inflateSync } from 'node:zlib';
import { build } from 'esbuild';
import MarkdownIt from 'markdown-it';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SITE = join(ROOT, 'site');
const OUT = join(SITE, 'dist');

/** Repository Markdown file → its page in the site, and its title in the navigation. */
const PAGES = [
  ['README.md', 'index.html', 'Home'],
  ['docs/guides/README.md', 'guides/index.html', 'The manual'],
  ['docs/guides/retry-an-async-call.md', 'guides/retry-an-async-call.html', 'Retry an async call'],
  ['docs/guides/retry-http.md', 'guides/retry-http.html', 'Retry HTTP'],
  ['docs/guides/back-off-as-a-fleet.md', 'guides/back-off-as-a-fleet.html', 'Back off as a fleet'],
  ['docs/guides/protect-a-service.md', 'guides/protect-a-service.html', 'Protect a service'],
  ['docs/guides/share-state-on-redis.md', 'guides/share-state-on-redis.html', 'Share state on Redis'],
  ['docs/guides/observe.md', 'guides/observe.html', 'Observe it'],
  ['docs/guides/simulate-and-choose.md', 'guides/simulate-and-choose.html', 'Simulate and choose'],
  ['docs/guides/port-from-other-libraries.md', 'guides/port-from-other-libraries.html', 'Port from another library'],
  ['docs/policies.md', 'docs/policies.html', 'Policies in detail'],
  ['docs/retry.md', 'docs/retry.html', 'The executor'],
  ['docs/resilience.md', 'docs/resilience.html', 'Resilience'],
  ['docs/rate-control.md', 'docs/rate-control.html', 'Rate control'],
  ['docs/redis.md', 'docs/redis.html', 'Redis'],
  ['docs/http-notes.md', 'docs/http-notes.html', 'HTTP notes'],
  ['docs/integrations.md', 'docs/integrations.html', 'Integrations'],
  ['docs/telemetry.md', 'docs/telemetry.html', 'Telemetry'],
  ['docs/fidelity.md', 'docs/fidelity.html', 'Fidelity'],
  ['docs/measured.md', 'docs/measured.html', 'Measured'],
  ['docs/structure.md', 'docs/structure.html', 'Structure'],
  ['packages/ebb-cli/README.md', 'cli.html', 'The ebb command'],
  ['bench/RESULTS.md', 'bench.html', 'Benchmarks'],
  ['CHANGELOG.md', 'changelog.html', 'Changelog'],
  ['site/README.md', 'site.html', 'About this site'],
];
const NAV = [
  ['index.html', 'Home'],
  ['guides/index.html', 'Manual'],
  ['api/index.html', 'API reference'],
  ['playground.html', 'Playground'],
  ['cli.html', 'CLI'],
  ['docs/measured.html', 'Measured'],
  ['changelog.html', 'Changelog'],
];

/**
 * TypeDoc's warnings about the doc comments as they are: members without a comment (a property
 * `name`, a union's `ok`…), three types referenced but not exported, and links TypeDoc cannot
 * resolve from the declarations. The build prints how many there are; a new kind fails it.
 */
const TYPEDOC_KNOWN = [
  /does not have any documentation/,
  /Failed to resolve link/,
  /but not included in the documentation/,
];

const pageOf = new Map(PAGES.map(([src, page]) => [src, page]));
const md = new MarkdownIt({ html: true, linkify: false, typographer: false });

/** Slugs as GitHub makes them, so that `#the-executor` links keep working. */
function slug(text) {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}
md.core.ruler.push('anchors', (state) => {
  const seen = new Map();
  for (let i = 0; i < state.tokens.length; i++) {
    const t = state.tokens[i];
    if (t.type !== 'heading_open') continue;
    const base = slug(state.tokens[i + 1].content.replace(/`/g, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    t.attrSet('id', n === 0 ? base : `${base}-${n}`);
  }
});

/** Rewrites a link of the Markdown file `src` to its page in the site, or returns undefined. */
function siteHref(src, href, fromPage) {
  if (/^[a-z]+:/i.test(href) || href.startsWith('#')) return href;
  const [path, hash] = href.split('#');
  const target = posix.normalize(posix.join(posix.dirname(src), path));
  const page = pageOf.get(target);
  const rel = (p) => posix.relative(posix.dirname(fromPage), p) || posix.basename(p);
  if (page) return `${rel(page)}${hash ? `#${hash}` : ''}`;
  if (/\.(svg|png)$/.test(target) && existsSync(join(ROOT, target))) {
    const asset = `assets/${posix.basename(target)}`;
    mkdirSync(join(OUT, 'assets'), { recursive: true });
    copyFileSync(join(ROOT, target), join(OUT, asset));
    return rel(asset);
  }
  return undefined;
}

function layout(title, page, body) {
  const up = posix.relative(posix.dirname(page), '.') || '.';
  const nav = NAV.map(
    ([href, label]) => `<a href="${up}/${href}"${href === page ? ' aria-current="page"' : ''}>${label}</a>`,
  ).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — ebb</title>
<link rel="stylesheet" href="${up}/style.css">
</head>
<body>
<header><a class="brand" href="${up}/index.html">ebb</a><nav>${nav}</nav></header>
<main>
${body}
</main>
</body>
</html>
`;
}

function renderPages() {
  const problems = [];
  for (const [src, page, title] of PAGES) {
    const env = {};
    const tokens = md.parse(readFileSync(join(ROOT, src), 'utf8'), env);
    const walk = (list) => {
      for (const t of list) {
        if (t.children) walk(t.children);
        const attr = t.type === 'link_open' ? 'href' : t.type === 'image' ? 'src' : undefined;
        if (!attr) continue;
        const href = t.attrGet(attr);
        const to = siteHref(src, href, page);
        if (to !== undefined) t.attrSet(attr, to);
        else if (t.type === 'image') problems.push(`${src}: image ${href} is missing`);
        else if (!existsSync(join(ROOT, posix.dirname(src), href.split('#')[0]))) {
          problems.push(`${src}: link ${href} goes nowhere`);
        } else {
          // A file of the repository that is not a page (a test, a script, a folder): named, not linked.
          t.attrSet(attr, `https://github.invalid/${href}`);
          t.attrSet('data-repo-path', posix.normalize(posix.join(posix.dirname(src), href)));
        }
      }
    };
    walk(tokens);
    let html = md.renderer.render(tokens, md.options, env);
    // Repository paths that are not pages are shown as paths, not as links that go nowhere.
    html = html.replace(
      /<a href="https:\/\/github\.invalid\/[^"]*" data-repo-path="([^"]*)">([\s\S]*?)<\/a>/g,
      '<span class="repo-path" title="in the repository: $1">$2</span>',
    );
    const file = join(OUT, page);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, layout(title, page, html));
  }
  return problems;
}

function typedoc() {
  const bin = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
  const r = spawnSync(process.execPath, [bin, '--options', join(SITE, 'typedoc.json')], {
    cwd: SITE,
    encoding: 'utf8',
  });
  const colours = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
  const lines = `${r.stdout}${r.stderr}`.replace(colours, '').split('\n');
  const warnings = lines.filter((l) => l.startsWith('[warning]') && !/Found \d+ errors and \d+ warnings/.test(l));
  const unknown = warnings.filter((w) => !TYPEDOC_KNOWN.some((k) => k.test(w)));
  const errors = lines.filter((l) => l.startsWith('[error]'));
  if (r.status !== 0 || errors.length > 0 || unknown.length > 0) {
    throw new Error(`TypeDoc failed (exit ${r.status}):\n${[...errors, ...unknown].join('\n') || lines.join('\n')}`);
  }
  return warnings.length;
}

/**
 * TypeDoc links each class's "Hierarchy (View Summary)" to its place on the hierarchy page,
 * which a script draws from compressed data — but a type whose parent is a type alias (ebb's
 * `SeededRandom`, a `Random` with more) is not drawn there, and its link would go nowhere. Such
 * links become plain text; every other one is checked against the data.
 */
function hierarchyLinks() {
  const script = readFileSync(join(OUT, 'api', 'assets', 'hierarchy.js'), 'utf8');
  const data = JSON.parse(inflateSync(Buffer.from(/"([^"]+)"/.exec(script)[1], 'base64')).toString());
  const drawn = new Set(Object.values(data.reflections).map((r) => posix.basename(r.url, '.html')));
  let removed = 0;
  for (const file of readdirSync(join(OUT, 'api'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.html'))) {
    const path = join(OUT, 'api', file);
    const html = readFileSync(path, 'utf8');
    const fixed = html.replace(
      /<a href="((?:\.\.\/)*hierarchy\.html)#([^"]+)">([^<]*)<\/a>/g,
      (all, _href, id, text) => {
        if (drawn.has(id)) return all;
        removed += 1;
        return text;
      },
    );
    if (fixed !== html) writeFileSync(path, fixed);
  }
  return { drawn, removed };
}

async function playground() {
  await build({
    entryPoints: [join(SITE, 'playground', 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    outfile: join(OUT, 'playground.js'),
    logLevel: 'warning',
  });
  const body = readFileSync(join(SITE, 'playground', 'playground.html'), 'utf8');
  writeFileSync(
    join(OUT, 'playground.html'),
    layout('Playground', 'playground.html', body).replace(
      '</body>',
      '<script type="module" src="./playground.js"></script>\n</body>',
    ),
  );
}

/** Every local href and src of every HTML file under OUT must name a file that exists (and an anchor on it, when it names one). */
function checkLinks() {
  const files = readdirSync(OUT, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.html'));
  const ids = new Map();
  const idsOf = (file) => {
    if (!ids.has(file)) {
      const html = readFileSync(join(OUT, file), 'utf8');
      ids.set(file, new Set([...html.matchAll(/\s(?:id|name)="([^"]+)"/g)].map((m) => m[1])));
    }
    return ids.get(file);
  };
  const broken = [];
  for (const file of files) {
    const html = readFileSync(join(OUT, file), 'utf8');
    for (const m of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      const href = m[1].replace(/&amp;/g, '&');
      if (/^[a-z]+:/i.test(href) || href === '') continue;
      const [path, hash] = href.split('#');
      const target = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(path)));
      if (!existsSync(join(OUT, target))) broken.push(`${file}: ${href} (no file)`);
      // TypeDoc's class hierarchy page draws its anchors with a script, from its data.
      else if (target === 'api/hierarchy.html' && hash && !hierarchy.drawn.has(decodeURIComponent(hash))) {
        broken.push(`${file}: ${href} (not on the hierarchy page)`);
      } else if (
        hash &&
        target.endsWith('.html') &&
        target !== 'api/hierarchy.html' &&
        !idsOf(target).has(decodeURIComponent(hash))
      ) {
        broken.push(`${file}: ${href} (no anchor)`);
      }
    }
  }
  return { pages: files.length, broken };
}

/**
 * A 16×16 icon (a blue square) as favicon.ico, a PNG inside an ICO: browsers ask for
 * /favicon.ico on every site, and a 404 there is a console error.
 */
function favicon() {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(Buffer.concat([Buffer.from(type, 'latin1'), data])), 0);
    return Buffer.concat([head, data, tail]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(16, 0);
  ihdr.writeUInt32BE(16, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(Array.from({ length: 16 }, () => [0x1f, 0x6f, 0xeb]).flat()),
  ]);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: 16 }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  const ico = Buffer.alloc(22);
  ico.writeUInt16LE(1, 2); // type: icon
  ico.writeUInt16LE(1, 4); // one image
  ico.set([16, 16, 0, 0], 6);
  ico.writeUInt16LE(1, 10); // planes
  ico.writeUInt16LE(32, 12); // bits per pixel
  ico.writeUInt32LE(png.length, 14);
  ico.writeUInt32LE(22, 18);
  writeFileSync(join(OUT, 'favicon.ico'), Buffer.concat([ico, png]));
}

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
favicon();
copyFileSync(join(SITE, 'style.css'), join(OUT, 'style.css'));
const typedocWarnings = typedoc();
const hierarchy = hierarchyLinks();
const missing = renderPages();
await playground();
const { pages, broken } = checkLinks();
const problems = [...missing, ...broken];
if (problems.length > 0) {
  process.stderr.write(`site: ${problems.length} broken links or images:\n${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(
  `site: ${pages} pages in ${relative(ROOT, OUT)}, every local link resolves; ` +
    `TypeDoc: ${typedocWarnings} known gaps of the doc comments (members without a comment, unresolved {@link}s)\n`,
);
