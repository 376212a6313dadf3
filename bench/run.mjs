// npm run bench [-- FIGURE…] [--quick] [--out=FILE]
//
// Runs each figure in fresh processes (several for the timed and measured ones, one for the
// deterministic bundle sizes), prints medians with their spread as Markdown, and — on a full run
// (every figure, not --quick) — writes bench/RESULTS.md; `--out=FILE` writes the Markdown to FILE
// instead, for any run. Progress goes to stderr.
//
// Runtimes: every figure runs on the Node.js running this script. When a Node.js >= 22 is
// installed at test/compat/node_modules/.bin/node (the compatibility job's), the runtime-sensitive
// figures (overhead, memory, timers) run a second time on it with every subject, because two
// peers (p-retry 9, cockatiel 4) require Node >= 22: each comparison stays within one process
// (overhead) or one runtime (memory, timers); the two runtimes get separate tables. The outage
// figure runs in virtual time, so its numbers do not depend on the runtime; those two peers run
// it on the newer Node.js.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CAPACITY, CLIENTS, DOWN_MS, LATENCY_MS } from './lib/outage-scenario.mjs';
import { median, summarize } from './lib/stats.mjs';
import { SUBJECTS, subjectsFor } from './subjects.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const FIGURES = [
  'overhead',
  'pipeline',
  'otel-overhead',
  'memory',
  'waiting',
  'size',
  'outage',
  'timers',
  'sim',
  'amplification',
  'resilience',
  'brownout',
  'limit-defaults',
  'slow-tail',
  'limits',
  'redis',
  'limits-hints',
];
const outOption = args.find((a) => a.startsWith('--out='))?.slice('--out='.length);
// npm runs this in bench/; a relative --out is relative to where `npm run` was typed.
const outFile = outOption ? resolve(process.env.INIT_CWD ?? process.cwd(), outOption) : undefined;
const chosen = args.filter((a) => !a.startsWith('--'));
for (const a of args) {
  if (a.startsWith('--') && a !== '--quick' && !a.startsWith('--out=')) {
    process.stderr.write(`unknown option ${a}; options: --quick, --out=FILE\n`);
    process.exit(2);
  }
}
for (const f of chosen) {
  if (!FIGURES.includes(f)) {
    process.stderr.write(`unknown figure ${f}; figures: ${FIGURES.join(', ')}\n`);
    process.exit(2);
  }
}
const figures = chosen.length ? chosen : FIGURES;

/** Processes per figure (and seeds for the outage). */
const P = quick
  ? { overhead: 1, memory: 1, timers: 1, seeds: [1], other: 1 }
  : { overhead: 5, memory: 3, timers: 3, seeds: [1, 2, 3], other: 3 };
const MEMORY_OPS = quick ? 20_000 : 100_000;

const majorOf = (version) => Number(version.replace(/^v/, '').split('.')[0]);
const main = { bin: process.execPath, version: process.version, major: majorOf(process.version) };
const newer = (() => {
  const bin = here('../test/compat/node_modules/.bin/node');
  if (!existsSync(bin)) return undefined;
  try {
    const version = execFileSync(bin, ['-p', 'process.version'], { encoding: 'utf8' }).trim();
    return majorOf(version) >= 22 && majorOf(version) > main.major
      ? { bin, version, major: majorOf(version) }
      : undefined;
  } catch {
    return undefined;
  }
})();
const runtimes = newer ? [main, newer] : [main];

const began = Date.now();

/**
 * Every figure measures one copy of ebb's build, taken now: the copy cannot change (or vanish,
 * while someone rebuilds) during a run that lasts minutes. Every figure process loads
 * lib/snapshot-hooks.mjs, which resolves `ebb` and `ebb/<subpath>` in the copy (through its
 * package.json `exports`); run alone, a figure imports the workspace's `ebb`.
 */
const HOOKS = ['--import', pathToFileURL(here('lib/snapshot-hooks.mjs')).href];
const snapshot = (() => {
  const dist = here('../packages/ebb/dist');
  const dir = mkdtempSync(join(os.tmpdir(), 'ebb-bench-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  process.env.EBB_BENCH_SNAPSHOT = dir;
  const check = `for (const p of ['ebb', 'ebb/http', 'ebb/rate', 'ebb/sim']) await import(p);`;
  for (let attempt = 1; attempt <= 20; attempt++) {
    try {
      const builtAt = statSync(join(dist, 'index.js')).mtime;
      rmSync(join(dir, 'dist'), { recursive: true, force: true });
      cpSync(dist, join(dir, 'dist'), { recursive: true });
      cpSync(here('../packages/ebb/package.json'), join(dir, 'package.json'));
      // A copy taken halfway through a rebuild fails to load: take it again.
      execFileSync(process.execPath, [...HOOKS, '--input-type=module', '-e', check], { stdio: 'ignore' });
      return { dir, builtAt };
    } catch {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000);
    }
  }
  process.stderr.write('packages/ebb/dist is missing or does not load: run `npm run build` first\n');
  process.exit(1);
})();

/** Whether a library source file is newer than the build measured: then the numbers are stale. */
const staleDist = (() => {
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(here('../packages/ebb/src'));
  return newest > snapshot.builtAt.getTime()
    ? 'packages/ebb/src is newer than its build in dist/: run `npm run build` for current numbers'
    : '';
})();
if (staleDist) process.stderr.write(`warning: ${staleDist}\n`);
const progress = (text) =>
  process.stderr.write(`[${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${text}\n`);

/*
 * The peers whose engines require Node.js >= 22 (p-retry 9, cockatiel 4) live in bench/node22,
 * outside the workspace, so that the workspace's `npm ci` on Node.js 20 neither installs them nor
 * warns about them. They are installed here on first use, from bench/node22's lockfile; npm's
 * warning that their engines do not match this Node.js is expected and not printed (only the
 * newer runtime runs them; the size figure only bundles them).
 */
if (!existsSync(here('node22/node_modules'))) {
  progress('installing bench/node22 (p-retry 9, cockatiel 4)');
  execFileSync('npm', ['ci', '--prefix', here('node22'), '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Runs a figure script in a fresh process; returns the JSON document it printed (its last line,
 * or all of stdout). A failed process is run once more before the failure counts.
 */
function node(runtime, script, extra = [], nodeArgs = []) {
  for (let attempt = 1; ; attempt++) {
    try {
      const out = execFileSync(runtime.bin, [...HOOKS, ...nodeArgs, here(script), ...extra], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
        timeout: 20 * 60_000,
        stdio: ['ignore', 'pipe', 'inherit'],
      }).trim();
      try {
        return JSON.parse(out);
      } catch {
        return JSON.parse(out.split('\n').at(-1));
      }
    } catch (error) {
      if (attempt === 2) throw error;
      progress(`${script} ${extra.join(' ')} failed (${String(error.message).split('\n')[0]}); running it again`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000);
    }
  }
}

// ---------- formatting ----------

const fmt = (x, digits = 0) =>
  x === null || x === undefined || Number.isNaN(x)
    ? '—'
    : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** "median (min–max)", or just the median when the samples agree or there is one. */
const spread = (s, digits = 0) =>
  s.n > 1 && fmt(s.min, digits) !== fmt(s.max, digits)
    ? `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`
    : fmt(s.median, digits);
const times = (x) => (Number.isFinite(x) ? `${fmt(x, 2)}×` : '—');
/** A Markdown table; `align` has one letter a column, l or r (default: the first left, the rest right). */
const table = (head, rows, align = `l${'r'.repeat(head.length - 1)}`) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (align[i] === 'l' ? '---' : '--:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
const labelOf = (id) => SUBJECTS.find((s) => s.id === id)?.label ?? id;
const runtimeName = (r) => `Node.js ${r.version}`;
const summarizeBy = (xs, f) => summarize(xs.map(f).filter((x) => x !== null && !Number.isNaN(x)));

const results = { runtimes: runtimes.map((r) => r.version) };
const sections = [];
const failures = [];
/** Runs one figure; a failure becomes its section's text, and the run goes on. */
function figure(name, title, body) {
  if (!figures.includes(name)) return;
  try {
    body();
  } catch (error) {
    delete results[name];
    failures.push(name);
    const message = String(error?.message ?? error).split('\n')[0];
    progress(`${name} failed: ${message}`);
    sections.push(`## ${title}\n\n**Failed:** ${message}`);
  }
}

// ---------- overhead ----------

figure('overhead', 'Success-path overhead', () => {
  results.overhead = {};
  const parts = [];
  for (const rt of runtimes) {
    const ids = ['bare', 'floor', ...subjectsFor(rt.major).map((s) => s.id)];
    const runs = [];
    for (let i = 0; i < P.overhead; i++) {
      progress(`overhead on ${runtimeName(rt)}: process ${i + 1}/${P.overhead}`);
      runs.push(node(rt, 'figures/overhead.mjs', quick ? ['--quick'] : []));
    }
    // Within each process: the median over its rounds, and ratios taken round by round.
    const per = (id, f) => runs.map((run) => median(run.rounds.map((round) => f(round, round[id]))));
    const rows = ids.map((id) => {
      const ns = summarize(per(id, (_, x) => x));
      const floor = summarize(per(id, (r, x) => x / r.floor));
      const bare = summarize(per(id, (r, x) => x / r.bare));
      const ref = summarize(per(id, (r, x) => x / r.reference));
      results.overhead[rt.version] ??= {};
      results.overhead[rt.version][id] = { ns, floor, bare, reference: ref };
      return [
        id === 'bare' ? 'bare `await fn()`' : id === 'floor' ? 'floor `fn().then(undefined, rethrow)`' : labelOf(id),
        spread(ns, 1),
        spread(floor, 2).replace(/^([\d.,]+)/, '$1×'),
        times(bare.median),
        times(ref.median),
      ];
    });
    parts.push(
      `### ${runtimeName(rt)}\n\n${table(['subject', 'ns / call', '× floor', '× bare', '× reference'], rows)}`,
    );
  }
  sections.push(
    [
      '## Success-path overhead',
      '',
      `\`await call(() => Promise.resolve(1))\` with each library's defaults, in nanoseconds per call: every subject measured in the same process, in ${quick ? 2 : 3} interleaved rounds (mitata's p50 of each); the median over the rounds, then over ${P.overhead} process${P.overhead > 1 ? 'es' : ''}, with the range. Ratios are taken within each round. The floor is the least a wrapper must do.`,
      '',
      ...parts.flatMap((p) => [p, '']),
    ]
      .join('\n')
      .trimEnd(),
  );
});

// ---------- memory ----------

figure('memory', 'Memory per pending retry', () => {
  results.memory = {};
  const parts = [];
  for (const rt of runtimes) {
    const measure = (id) => {
      progress(`memory on ${runtimeName(rt)}: ${id}`);
      return summarize(
        Array.from(
          { length: P.memory },
          () => node(rt, 'figures/memory.mjs', [id, String(MEMORY_OPS)], ['--expose-gc']).bytesPerOp,
        ),
      );
    };
    const timer = measure('timer');
    const m = {};
    for (const s of subjectsFor(rt.major)) m[s.id] = measure(s.id);
    const above = (s) => ({
      median: s.median - timer.median,
      min: s.min - timer.median,
      max: s.max - timer.median,
      n: s.n,
    });
    const refAbove = m.reference ? m.reference.median - timer.median : Number.NaN;
    results.memory[rt.version] = {
      timer,
      subjects: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { bytes: v, above: above(v) }])),
    };
    const rows = [['bare timer `new Promise(r => setTimeout(r, ms))`', spread(timer), '—', '—']];
    for (const [id, s] of Object.entries(m))
      rows.push([labelOf(id), spread(s), spread(above(s)), times(above(s).median / refAbove)]);
    parts.push(
      `### ${runtimeName(rt)}\n\n${table(['subject', 'bytes / operation', 'above a bare timer', '× reference (above the timer)'], rows)}`,
    );
  }
  sections.push(
    [
      '## Memory per pending retry',
      '',
      `${fmt(MEMORY_OPS)} operations that failed once and wait in a one-hour backoff sleep; heap bytes per operation after GC (\`--expose-gc\`), each subject in its own process, median of ${P.memory} with the range. Each run checks that every operation made exactly one attempt and none has settled. The AWS strategy is shared by 30 operations (one SDK client: its retry quota admits 35 retries).`,
      '',
      ...parts.flatMap((p) => [p, '']),
    ]
      .join('\n')
      .trimEnd(),
  );
});

// ---------- waiting: N retries waiting at once ----------

figure('waiting', 'N retries waiting at once', () => {
  const sizes = [10_000, 100_000, 1_000_000];
  const processes = quick ? 1 : 3;
  const rows = [];
  const skipped = [];
  results.waiting = [];
  for (const n of sizes) {
    // About 1 KB of resident memory per waiting retry was measured at N = 1e6; ask for twice that.
    if (os.freemem() < n * 2_048) {
      skipped.push(n);
      continue;
    }
    const runs = Array.from({ length: processes }, (_, i) => {
      progress(`waiting: ${fmt(n)} retries, process ${i + 1}/${processes}`);
      return node(
        main,
        'figures/waiting.mjs',
        [String(n), ...(quick ? ['--quick'] : [])],
        ['--expose-gc', '--max-old-space-size=8192'],
      );
    });
    progress(`waiting: ${fmt(n)} bare timers`);
    const timer = node(main, 'figures/memory.mjs', ['timer', String(n)], ['--expose-gc', '--max-old-space-size=8192']);
    const by = (f) => summarize(runs.map(f));
    const r = {
      n,
      bytesPerRetry: by((x) => x.bytesPerRetry),
      timerBytes: timer.bytesPerOp,
      scheduleNs: by((x) => x.scheduleNs),
      fireNs: by((x) => x.fireNs),
      baselineScheduleNs: by((x) => x.baseline.scheduleNs),
      baselineFireNs: by((x) => x.baseline.fireNs),
      addNs: by((x) => x.queue.addNs),
      popNs: by((x) => x.queue.popNs),
      addLevels: by((x) => x.queue.addLevels),
    };
    results.waiting.push(r);
    const levels = Math.log2(n);
    rows.push([
      fmt(n),
      fmt(levels, 1),
      spread(r.bytesPerRetry),
      fmt(r.timerBytes),
      spread(r.scheduleNs),
      spread(r.fireNs),
      `${fmt(r.baselineScheduleNs.median)} / ${fmt(r.baselineFireNs.median)}`,
      `${spread(r.addNs, 1)} (${fmt(r.addLevels.median, 1)} levels)`,
      spread(r.popNs, 1),
      fmt(r.popNs.median / levels, 2),
    ]);
  }
  sections.push(
    [
      '## N retries waiting at once',
      '',
      `\`bench/figures/waiting.mjs\`: N operations (\`retry(op, { backoff: constant({ delayMs: 3_600_000, jitter: noJitter, maxAttempts: 2 }) })\` on the system clock) fail once and wait together in the process-wide timer queue, a binary min-heap. *Heap per waiting retry*: heap used after GC per operation, the caller's promise included (*bare timer*: N \`new Promise(r => setTimeout(r, ms))\`, bench/figures/memory.mjs). *Schedule*: CPU time per retry from the call until its first failure is handled and its wait queued (a synchronous \`onRetry\` counts them); *fire*: CPU time per retry of one queue turn that pops 1,000 due retries and starts their second attempts; both with N others waiting, beside the same with an empty queue. *Queue add / pop*: the queue alone (the internal \`TimerQueue\`, compiled from its source), N entries due in an hour, then rounds of 1,000 adds of an entry due sooner than those but later than the one added before it (as retries with one delay arrive), and 1,000 pops of the top, as a fire does: an add climbs the levels shown (measured from the entries' heap slots), a pop sinks the heap's last entry from the top through all log2 N levels. Schedule and fire: CPU time (user + system), the median over rounds of 1,000; queue: the fastest round's wall time; then the median over ${processes} process${processes > 1 ? 'es' : ''} with the range, on ${runtimeName(main)}.`,
      '',
      table(
        [
          'N',
          'log2 N',
          'heap per waiting retry (B)',
          'bare timer (B)',
          'schedule (ns)',
          'fire (ns)',
          'schedule / fire, empty queue (ns)',
          'queue add (ns)',
          'queue pop (ns)',
          'pop ÷ log2 N (ns)',
        ],
        rows,
      ),
      ...(skipped.length
        ? [
            '',
            `Not run for N = ${skipped.map((n) => fmt(n)).join(', ')}: less than ${fmt(skipped[0] * 2)} KB of free memory.`,
          ]
        : []),
    ].join('\n'),
  );
});

// ---------- size ----------

figure('size', 'Bundle size', () => {
  progress('size');
  const size = node(main, 'figures/size.mjs');
  results.size = size;
  const ref = size.rows.find((r) => r.id === 'reference');
  const sizeRow = (label, typical, whole) => [
    label,
    fmt(typical.minified),
    fmt(typical.gzip),
    ref ? times(typical.gzip / ref.typical.gzip) : '—',
    fmt(whole.minified),
    fmt(whole.gzip),
  ];
  const builds = size.builds ?? [];
  const buildOf = (bundler, build) => builds.find((b) => b.bundler === bundler && b.build === build);
  const rows = size.rows.flatMap((r) => {
    const production = r.id === 'ebb' ? buildOf('esbuild', 'production') : undefined;
    return production
      ? [
          sizeRow(`${r.label} (default build)`, r.typical, r.whole),
          sizeRow(`${r.label} (production build)`, production.typical, production.whole),
        ]
      : [sizeRow(r.label, r.typical, r.whole)];
  });
  const ebb = size.rows.find((r) => r.id === 'ebb');
  // Which build each bundler picks by default (bench/figures/bundlers.mjs).
  const picks = ebb ? node(main, 'figures/bundlers.mjs') : undefined;
  results.bundlers = picks;
  const mechanismNames = builds[0] ? Object.keys(builds[0].mechanisms) : [];
  const buildsSection = builds.length
    ? [
        '',
        '',
        "### ebb's two builds, by bundler",
        '',
        `ebb ships a default browser build (full messages: option, value, fix) and a production one (condition \`production\` under \`browser\`: where, option and value only). Each build is measured with esbuild ${size.esbuild} (minify, ESM, browser; \`conditions: ['production']\` for the production build) and with Rollup ${size.rollup} (@rollup/plugin-node-resolve \`browser: true\` with \`exportConditions\` \`['development']\` or \`['production']\`, then @rollup/plugin-terser); gzip -9. Bytes gzip (minified in parentheses). The executor alone is measured with esbuild only (its entry stubs the default policy's module through an esbuild plugin).`,
        '',
        table(
          ['bundler', 'build', 'typical', '`withRetry(fetch)`', 'policy alone', 'executor alone', 'whole root entry'],
          builds.map((b) => [
            b.bundler,
            b.build,
            ...['typical', 'http', 'policy', 'executor', 'whole'].map((k) =>
              b[k] ? `${fmt(b[k].gzip)} (${fmt(b[k].minified)})` : '—',
            ),
          ]),
        ),
        '',
        "Each mechanism's marginal gzip bytes: `pipeline([])` is the pipeline alone, `retrying()` its cost over that, every other mechanism its cost over `pipeline([retrying()])` (`ratioBudget()`/`tokenBudget()` as `retrying({ budget })`, over the default budget the retry layer carries).",
        '',
        table(
          ['mechanism', ...builds.map((b) => `${b.bundler}, ${b.build}`)],
          mechanismNames.map((m) => [`\`${m}\``, ...builds.map((b) => fmt(b.mechanisms[m]))]),
        ),
      ]
    : [];
  const picksSection = picks
    ? [
        '',
        '',
        '### Which build a bundler picks',
        '',
        "The typical import bundled as each bundler's documentation sets up a browser build; the output tells which build it took (the default build's messages hold \"Known options\"). Vite and webpack in production mode, and Rollup with @rollup/plugin-node-resolve (which adds `production` unless `NODE_ENV` says otherwise), pick the production build by themselves; esbuild needs `conditions: ['production']`.",
        '',
        table(
          ['bundler', 'version', 'setting', 'build picked', 'typical, gzip'],
          picks.rows.map((r) => [r.bundler, r.version, r.setting, r.build, fmt(r.gzip)]),
        ),
      ]
    : [];
  const byModule = (what, m) =>
    `${what}, by ebb source module (minified bytes in the output, attributed through the source maps): ${m
      .map((i) => `\`${i.path}\` ${fmt(i.bytes)}`)
      .join(', ')}.`;
  const inputs = ebb
    ? [
        '',
        '',
        `ebb's \`withRetry(fetch)\` from \`ebb/http\` with its defaults: ${fmt(ebb.http.minified)} B minified, ${fmt(ebb.http.gzip)} B gzip.`,
        '',
        `ebb's policy alone (\`exponential(…).start().next()\`: curve, full jitter, validation, printing): ${fmt(ebb.policy.minified)} B minified, ${fmt(ebb.policy.gzip)} B gzip.`,
        '',
        byModule("ebb's typical import", ebb.typical.modules),
        '',
        byModule('`withRetry(fetch)`', ebb.http.modules),
        '',
        byModule("ebb's policy alone", ebb.policy.modules),
        ...(ebb.executor
          ? [
              '',
              `ebb's executor alone (\`retry\` with a hand-written policy, the default policy's module stubbed): ${fmt(ebb.executor.minified)} B minified, ${fmt(ebb.executor.gzip)} B gzip; marginal gzip bytes by source module: ${ebb.executor.marginal.map((i) => `\`${i.path}\` ${fmt(i.gzip)}`).join(', ')}.`,
            ]
          : []),
        ...buildsSection,
        ...picksSection,
      ].join('\n')
    : '';
  sections.push(
    [
      '## Bundle size',
      '',
      `esbuild ${size.esbuild} \`--bundle --minify --format=esm\` (browser platform); gzip at level 9. *Typical*: the retry call with one exponential policy with full jitter (p-retry and async-retry have only their ×U[1, 2] randomization; the AWS entry includes the loop that drives the strategy, as the SDK's middleware does); *whole*: everything the package's root entry exports. Deterministic: one build each.`,
      '',
      table(
        ['library', 'typical, minified', 'typical, gzip', '× reference (gzip)', 'whole, minified', 'whole, gzip'],
        rows,
      ),
    ].join('\n') + inputs,
  );
});

// ---------- outage ----------

figure('outage', 'Under an outage', () => {
  results.outage = {};
  const rows = [];
  const notes = [];
  for (const s of SUBJECTS) {
    const rt = s.minNode <= main.major ? main : newer && s.minNode <= newer.major ? newer : undefined;
    if (!rt) {
      notes.push(`${s.label} was not run: it needs Node.js >= ${s.minNode}.`);
      continue;
    }
    for (const config of s.outageConfigs ?? ['default', 'recommended']) {
      const runs = P.seeds.map((seed) => {
        progress(`outage on ${runtimeName(rt)}: ${s.id} ${config} seed ${seed}`);
        return node(rt, 'figures/outage.mjs', [s.id, config, String(seed), ...(quick ? ['--quick'] : [])]);
      });
      const m = {
        amplification: summarizeBy(runs, (r) => r.amplification),
        peakDuringOutage: summarizeBy(runs, (r) => r.peakDuringOutage),
        peakAfterRecovery: summarizeBy(runs, (r) => r.peakAfterRecovery),
        served: summarizeBy(runs, (r) => r.served),
        gaveUp: summarizeBy(runs, (r) => r.gaveUp),
        lastServedS: summarizeBy(runs, (r) => r.lastServedS),
        truncated: runs.filter((r) => r.truncated).length,
        call: runs[0].call,
        runtime: rt.version,
      };
      results.outage[`${s.id}/${config}`] = m;
      const cut = m.truncated > 0;
      const allServed = m.gaveUp.max === 0 && !cut;
      rows.push([
        `${s.label}${rt === main ? '' : ' †'}`,
        config,
        m.call,
        cut ? `≥ ${fmt(m.amplification.min, 0)} (cut short)` : spread(m.amplification, 1),
        spread(m.peakDuringOutage),
        cut ? '(cut short)' : spread(m.peakAfterRecovery),
        cut ? '—' : `${spread(m.served)} / ${spread(m.gaveUp)}`,
        cut ? '—' : allServed ? spread(m.lastServedS, 1) : `never: ${spread(m.gaveUp)} gave up`,
      ]);
    }
  }
  if (newer)
    notes.push(
      `† engines require Node.js >= 22: run on ${runtimeName(newer)} (virtual time: the runtime does not change these numbers).`,
    );
  if (quick) notes.push('--quick cuts a run short after 250,000 requests (a library retrying in a hot loop).');
  sections.push(
    [
      '## Under an outage',
      '',
      `${fmt(CLIENTS)} clients, each making one call through the library, against one simulated server that answers every request with a 503 for the first ${DOWN_MS / 1000} s, then serves the first ${CAPACITY} requests of each second and answers the rest with a 503; every response takes ${LATENCY_MS} ms; clients start at random in the first second. Each library's real code runs under \`@sinonjs/fake-timers\` with a seeded \`Math.random\`; median over ${P.seeds.length} seed${P.seeds.length > 1 ? 's' : ''} with the range. *Amplification*: requests ÷ clients. *Peaks*: the most requests in any 1-s window, during the outage and after recovery. *All served after*: seconds after recovery until the last client was served.`,
      '',
      table(
        [
          'library',
          'config',
          'call',
          'amplification',
          'peak in outage (req/s)',
          'peak after recovery (req/s)',
          'served / gave up',
          'all served after (s)',
        ],
        rows,
        'lllrrrrr',
      ),
      ...(notes.length ? ['', ...notes] : []),
    ].join('\n'),
  );
});

// ---------- timers ----------

figure('timers', 'Timer accuracy', () => {
  results.timers = {};
  const parts = [];
  for (const rt of runtimes) {
    const ids = ['timer', ...subjectsFor(rt.major).map((s) => s.id)];
    const m = {};
    for (const id of ids) {
      const runs = Array.from({ length: P.timers }, () => {
        progress(`timers on ${runtimeName(rt)}: ${id}`);
        return node(rt, 'figures/timers.mjs', [id, ...(quick ? ['--quick'] : [])]);
      });
      m[id] = {
        p50: summarizeBy(runs, (r) => r.lateMs.p50),
        p99: summarizeBy(runs, (r) => r.lateMs.p99),
        early: summarizeBy(runs, (r) => r.early),
        maxWaiting: Math.min(...runs.map((r) => r.maxWaiting)),
      };
    }
    results.timers[rt.version] = m;
    const rows = ids.map((id) => [
      id === 'timer' ? 'bare `setTimeout`' : labelOf(id),
      spread(m[id].p50, 2),
      spread(m[id].p99, 2),
      m.reference ? fmt(m[id].p99.median - m.reference.p99.median, 2) : '—',
      spread(m[id].early),
      fmt(m[id].maxWaiting),
    ]);
    parts.push(
      `### ${runtimeName(rt)}\n\n${table(['subject', 'lateness p50 (ms)', 'lateness p99 (ms)', 'p99 − reference (ms)', 'early retries (of 10,000)', 'waiting together'], rows)}`,
    );
  }
  sections.push(
    [
      '## Timer accuracy',
      '',
      `10,000 operations fail once and wait together on the real clock (waits spread evenly over ${quick ? '1,000–1,300' : '1,000–2,000'} ms; ten operations start per event-loop turn); lateness = (second attempt − first failure) − scheduled wait. Each subject in its own process, median of ${P.timers} with the range. *Early*: retries that came before their time by \`performance.now()\` (Node.js timers may fire up to 1 ms early against it).`,
      '',
      ...parts.flatMap((p) => [p, '']),
    ]
      .join('\n')
      .trimEnd(),
  );
});

// ---------- limits: rate control against real nginx and HAProxy ----------

figure('limits', 'Rate control against real limiters', () => {
  progress('limits: nginx and HAProxy on 127.0.0.1 (about 12 minutes; --quick about 6)');
  const chart = here('../docs/rate-control.png');
  const doc = node(main, 'figures/limits.mjs', [...(quick ? ['--quick'] : []), `--chart=${chart}`]);
  results.limits = doc.results;
  sections.push(
    `## Rate control against real limiters\n\n\`bench/figures/limits.mjs\`; chart: \`docs/rate-control.png\`.\n\n${doc.markdown}`,
  );
});

figure('limits-hints', 'adaptiveRate with and without the server’s hints', () => {
  progress('limits-hints: nginx and HAProxy with Retry-After / RateLimit (about 3 minutes)');
  const doc = node(main, 'figures/limits-hints.mjs', quick ? ['--quick'] : []);
  results['limits-hints'] = doc.results;
  sections.push(
    `## adaptiveRate with and without the server’s hints\n\n\`bench/figures/limits-hints.mjs\`.\n\n${doc.markdown}`,
  );
});

// ---------- sim, amplification (other engineers' scripts) ----------

/** Merges runs of one JSON document: each number becomes { median, min, max, n }. */
function merge(docs) {
  const [first] = docs;
  if (docs.every((d) => typeof d === 'number')) return summarize(docs);
  if (Array.isArray(first) && docs.every((d) => Array.isArray(d) && d.length === first.length)) {
    return first.map((_, i) => merge(docs.map((d) => d[i])));
  }
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    return Object.fromEntries(Object.keys(first).map((k) => [k, merge(docs.map((d) => d?.[k]))]));
  }
  return first;
}
const isSummary = (v) => v && typeof v === 'object' && 'median' in v && 'n' in v;
const cell = (v) =>
  isSummary(v)
    ? spread(v, Number.isInteger(v.median) && Number.isInteger(v.min) ? 0 : 2)
    : typeof v === 'object'
      ? `\`${JSON.stringify(v)}\``
      : String(v);
const numeric = (text) => /^[\d,.\s()–—×≥%-]*$/.test(text);
/** Renders a merged document: arrays of flat objects as tables, other values as lists and headings. */
function render(value, depth = 3) {
  const isRow = (x) => x && typeof x === 'object' && !Array.isArray(x) && !isSummary(x);
  if (Array.isArray(value) && value.length && value.every(isRow)) {
    const head = [...new Set(value.flatMap((x) => Object.keys(x)))];
    const rows = value.map((x) => head.map((k) => (x[k] === undefined ? '' : cell(x[k]))));
    return table(head, rows, head.map((_, i) => (rows.every((r) => numeric(r[i])) ? 'r' : 'l')).join(''));
  }
  const flat = (x) => isRow(x) && Object.values(x).every((v) => !v || typeof v !== 'object' || isSummary(v));
  const entries = isRow(value) ? Object.entries(value) : [];
  if (entries.length && entries.every(([, v]) => flat(v))) {
    // { name: { field: … }, … }: one row a name.
    return render(
      entries.map(([k, v]) => ({ '': k, ...v })),
      depth,
    );
  }
  if (isRow(value)) {
    const nested = (v) => v && typeof v === 'object' && !isSummary(v);
    const scalars = Object.entries(value).filter(([, v]) => !nested(v));
    const blocks = Object.entries(value).filter(([, v]) => nested(v));
    return [
      ...(scalars.length ? [scalars.map(([k, v]) => `- ${k}: ${cell(v)}`).join('\n')] : []),
      ...blocks.map(([k, v]) => `${'#'.repeat(Math.min(depth, 6))} ${k}\n\n${render(v, depth + 1)}`),
    ].join('\n\n');
  }
  return cell(value);
}

for (const [name, title] of [
  ['sim', 'Simulator throughput'],
  ['amplification', 'Retry amplification and budgets'],
  ['resilience', 'Circuit breaker under an outage (real node:http servers)'],
  ['brownout', 'Adaptive concurrency limit under a brownout (real node:http server)'],
  ['limit-defaults', 'Concurrency-limit defaults against servers of a few slots and of many (real node:http server)'],
  ['slow-tail', 'Hedging against a slow tail (real node:http server)'],
  ['resilience-overhead', 'Success-path overhead of the breaker, the concurrency limit and hedging'],
  ['pipeline', 'Success-path overhead of a composed pipeline, beside cockatiel and p-retry'],
  ['otel-overhead', 'Success-path overhead of ebb/otel, with no OpenTelemetry SDK registered and with one'],
  ['redis', 'Shared budgets and rate on Redis: commands per request and latency (ebb/redis)'],
]) {
  figure(name, title, () => {
    const script = `figures/${name}.mjs`;
    if (!existsSync(here(script))) {
      sections.push(`## ${title}\n\n\`bench/${script}\` is not there yet: nothing measured.`);
      return;
    }
    const runs = Array.from({ length: P.other }, (_, i) => {
      progress(`${name}: process ${i + 1}/${P.other}`);
      return node(main, script, quick ? ['--quick'] : []);
    });
    results[name] = merge(runs);
    sections.push(
      `## ${title}\n\n\`bench/${script}\`, ${P.other} process${P.other > 1 ? 'es' : ''} on ${runtimeName(main)}; every number is the median with the range.\n\n${render(results[name])}`,
    );
  });
}

// ---------- targets and summary ----------

const peerIds = SUBJECTS.map((s) => s.id).filter((id) => id !== 'ebb' && id !== 'reference');
const targets = [];
const summaryRows = [];
{
  const ov = results.overhead;
  const mem = results.memory;
  const size = results.size;
  const out = results.outage;
  /** A subject's value on the first runtime that ran it, and whether that is the main one. */
  const pick = (byRuntime, id, f) => {
    for (const v of results.runtimes) {
      const x = byRuntime?.[v]?.[id] ?? byRuntime?.[v]?.subjects?.[id];
      if (x !== undefined) return { value: f(x), main: v === main.version };
    }
    return undefined;
  };
  if (ov) {
    const within = (v) => {
      const row = ov[v];
      const ebb = row.ebb.floor.median;
      const peers = peerIds.filter((id) => row[id]).map((id) => [id, row[id].floor.median]);
      const best = peers.reduce((a, b) => (b[1] < a[1] ? b : a));
      return { v, ebb, best, met: ebb <= 1.25 && peers.every(([, x]) => ebb < x) };
    };
    for (const v of results.runtimes) {
      const t = within(v);
      targets.push([
        `success path ≤ 1.25× the floor, below every peer (Node.js ${v})`,
        `${fmt(t.ebb, 2)}×`,
        `${labelOf(t.best[0])} ${fmt(t.best[1], 2)}×`,
        t.met ? 'met' : 'missed',
      ]);
    }
  }
  if (mem) {
    for (const v of results.runtimes) {
      const row = mem[v].subjects;
      const ebb = row.ebb.above.median;
      const peers = peerIds.filter((id) => row[id]).map((id) => [id, row[id].above.median]);
      const best = peers.reduce((a, b) => (b[1] < a[1] ? b : a));
      targets.push([
        `≤ 300 B per pending retry above a bare timer, below every peer (Node.js ${v})`,
        `${fmt(ebb)} B`,
        `${labelOf(best[0])} ${fmt(best[1])} B`,
        ebb <= 300 && peers.every(([, x]) => ebb < x) ? 'met' : 'missed',
      ]);
    }
  }
  if (size) {
    const ebb = size.rows.find((r) => r.id === 'ebb').typical.gzip;
    const peers = size.rows.filter((r) => peerIds.includes(r.id));
    const best = peers.reduce((a, b) => (b.typical.gzip < a.typical.gzip ? b : a));
    targets.push([
      'typical import ≤ 1,600 B gzip, smaller than every peer (default build)',
      `${fmt(ebb)} B`,
      `${best.label} ${fmt(best.typical.gzip)} B`,
      ebb <= 1600 && peers.every((r) => ebb < r.typical.gzip) ? 'met' : 'missed',
    ]);
    const prod = size.builds?.find((b) => b.bundler === 'esbuild' && b.build === 'production');
    if (prod) {
      targets.push([
        'typical import ≤ 1,600 B gzip, smaller than every peer (production build)',
        `${fmt(prod.typical.gzip)} B`,
        `${best.label} ${fmt(best.typical.gzip)} B`,
        prod.typical.gzip <= 1600 && peers.every((r) => prod.typical.gzip < r.typical.gzip) ? 'met' : 'missed',
      ]);
      targets.push([
        '`withRetry(fetch)` ≤ 3,000 B gzip (production build)',
        `${fmt(prod.http.gzip)} B`,
        '—',
        prod.http.gzip <= 3000 ? 'met' : 'missed',
      ]);
    }
  }
  if (out) {
    const ebb = out['ebb/default'];
    const peers = peerIds.map((id) => [id, out[`${id}/default`]]).filter(([, m]) => m);
    const complete = peers.filter(([, m]) => m.truncated === 0);
    // Drains: serves every client; among those, the best peer is the one that finished first.
    const drains = complete.filter(([, m]) => m.gaveUp.max === 0);
    const best = drains.reduce((a, b) => (b[1].lastServedS.median < a[1].lastServedS.median ? b : a), drains[0]);
    const lowest = complete.every(([, m]) => ebb.peakAfterRecovery.median <= m.peakAfterRecovery.median);
    const ebbDrains = ebb.gaveUp.max === 0 && ebb.truncated === 0;
    const fast = ebbDrains && (!best || ebb.lastServedS.median <= best[1].lastServedS.median);
    targets.push([
      'outage, default call: lowest peak after recovery, drains no slower than the best peer default',
      `peak ${fmt(ebb.peakAfterRecovery.median)} req/s; ${ebbDrains ? `all served after ${fmt(ebb.lastServedS.median, 1)} s` : `${fmt(ebb.gaveUp.median)} gave up`}`,
      best
        ? `${labelOf(best[0])}: peak ${fmt(best[1].peakAfterRecovery.median)} req/s, all served after ${fmt(best[1].lastServedS.median, 1)} s`
        : 'no peer default served every client',
      lowest && fast
        ? 'met'
        : lowest && !ebbDrains
          ? `lowest peak only because ${fmt(ebb.gaveUp.median)} of ${fmt(CLIENTS)} ebb clients gave up during the outage; does not drain`
          : 'missed',
    ]);
  }
  for (const s of SUBJECTS) {
    const o = pick(ov, s.id, (x) => x.floor.median);
    const m = pick(mem, s.id, (x) => x.above.median);
    const z = size?.rows.find((r) => r.id === s.id);
    const d = out?.[`${s.id}/default`];
    const newerOnly = (o && !o.main) || (m && !m.main);
    summaryRows.push([
      `${s.label}${newerOnly ? ' †' : ''}`,
      o ? times(o.value) : '—',
      m ? fmt(m.value) : '—',
      z ? fmt(z.typical.gzip) : '—',
      d ? (d.truncated ? '(cut short)' : fmt(d.peakAfterRecovery.median)) : '—',
      d ? (d.truncated ? '—' : fmt(d.gaveUp.median)) : '—',
    ]);
  }
}
const summary = table(
  [
    'library',
    'success path (× floor)',
    'bytes per pending retry (above a timer)',
    'typical import (B gzip)',
    'outage, default call: peak after recovery (req/s)',
    'clients that gave up',
  ],
  summaryRows,
);

const sh = (cmd) => {
  try {
    return execFileSync('sh', ['-c', cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};

const cpu = os.cpus();
const commit = sh('git -C .. rev-parse --short HEAD');
const dirty = sh('git -C .. status --porcelain -- packages/ebb') ? ' (library sources modified)' : '';
const header = [
  '# ebb benchmarks',
  '',
  `Machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, ${os.type()} ${os.release()}; load average at the start ${os
    .loadavg()
    .map((x) => fmt(x, 2))
    .join(' / ')}.`,
  `Runtimes: ${runtimes.map(runtimeName).join('; ')}. Date: ${new Date().toISOString().slice(0, 10)}. Commit ${commit || 'unknown'}${dirty}; ebb's build from ${snapshot.builtAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.${quick ? ' **--quick** (fewer processes, shorter measurements).' : ''}`,
  `Reproduce: \`npm run build && npm run bench\` (${fmt((Date.now() - began) / 1000)} s for this run), or one figure: \`npm run bench -- overhead\` (\`pipeline\`, \`memory\`, \`waiting\`, \`size\`, \`outage\`, \`timers\`, \`sim\`, \`amplification\`, \`limits\`, \`limits-hints\`, \`redis\`, \`resilience\`, \`brownout\`, \`limit-defaults\`, \`slow-tail\`).`,
  ...(staleDist ? ['', `**Warning:** ${staleDist}.`] : []),
  ...(failures.length ? ['', `**Incomplete:** ${failures.join(', ')} failed (see below).`] : []),
  '',
  'The reference is a ten-line hand-written loop (`bench/lib/reference.mjs`): full jitter on 100 ms × 2, capped at 20 s, five attempts.',
].join('\n');
const parts = [header];
if (summaryRows.length && figures.length > 1) {
  parts.push(
    `## Summary\n\n${summary}\n\n† measured on ${newer ? runtimeName(newer) : 'a newer Node.js'} (engines >= 22), against ebb in the same process or runtime there.`,
  );
}
if (targets.length) parts.push(`## Targets\n\n${table(['target', 'ebb', 'best peer', 'status'], targets, 'llll')}`);
parts.push(...sections);
const text = `${parts.join('\n\n')}\n`;
process.stdout.write(text);
progress('done');
if (outFile) {
  writeFileSync(outFile, text);
  process.stderr.write(`wrote ${outFile}\n`);
} else if (!quick && chosen.length === 0) {
  writeFileSync(here('RESULTS.md'), text);
  process.stderr.write('wrote bench/RESULTS.md\n');
}
if (failures.length) {
  process.stderr.write(`failed: ${failures.join(', ')}\n`);
  process.exitCode = 1;
}
