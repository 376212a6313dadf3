// The floor of the typical import, ask by ask: the gzip bytes of bench/floor/floor.mjs (the
// smallest executor and exponential full-jitter policy that keep the non-negotiable asks) as
// `retry` + `exponential({…})`, bundled as bench/figures/size.mjs bundles ebb (esbuild --bundle
// --minify --format=esm, platform browser, gzip -9), then with each further ask turned on
// (bench/floor/asks.mjs): each alone over the floor, and one after another in the table's order.
// Two builds of every row, as ebb ships two: production (short messages: the option and the
// value) and development (full messages: what it must be and the fix). Beside them, from the
// same run: ebb's real build (the typical import, the policy alone, the executor alone — the
// last with the default policy stubbed, as size.mjs does) and p-retry 7.1.1's typical import.
//
// `node figures/floor.mjs` prints the tables as Markdown; `--json` prints
//   { esbuild, floor, floorRollup?, asks: [{ flag, label, alone, added, cumulative, overA? }],
//     contracts: [{ label, flags, size, rollup? }], prototype, ebb, pRetry, memory?, speed? }
// with every size as { production, development } gzip bytes.
// `--rollup` adds the contracts' typical import with Rollup 4 + @rollup/plugin-terser.
// `--memory[=N]` adds the heap bytes per waiting retry of the prototype's loops (N retries,
// default 50,000, each failed once and waiting an hour; child processes with --expose-gc).
// `--speed[=ROUNDS]` adds the success path (`retry(fn)` with an operation that resolves at
// once), × the floor of bench/lib/success-path.mjs (`fn().then(undefined, rethrow)`): the
// prototype's builds and ebb's `retry(fn)` in one process, batches of 10,000 sequential awaits,
// every subject once a round (default 10 rounds), the median — a timed figure: note the load.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { version } from 'esbuild';
import { ASKS, buildFloor, defineAsks, FLOOR_SOURCE, typicalEntry } from '../floor/asks.mjs';
import { bundleSize, rollupSize } from '../lib/bundle-size.mjs';

const args = process.argv.slice(2);

// ---- the memory child: `floor.mjs --memory-child FILE N` ------------------------------------
if (args[0] === '--memory-child') {
  const [, file, nText] = args;
  const n = Number(nText);
  const { retry, exponential, noJitter } = await import(pathToFileURL(file).href);
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      globalThis.gc();
      await new Promise((r) => setImmediate(r));
    }
  };
  const backoff = exponential({ initialDelayMs: 3_600_000, jitter: noJitter, maxAttempts: 2 });
  const failure = new Error('503');
  let calls = 0;
  const op = () => {
    calls++;
    return Promise.reject(failure);
  };
  const keep = new Array(n).fill(undefined);
  await settle();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) keep[i] = retry(op, { backoff });
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  await settle();
  const after = process.memoryUsage().heapUsed;
  if (calls !== n) throw new Error(`expected ${n} first attempts, saw ${calls}`);
  process.stdout.write(`${JSON.stringify({ bytesPerRetry: (after - before) / n })}\n`);
  process.exit(0);
}

const json = args.includes('--json');
const memoryArg = args.find((a) => a.startsWith('--memory'));
const speedArg = args.find((a) => a.startsWith('--speed'));
const withRollup = args.includes('--rollup');
for (const a of args) {
  if (a !== '--json' && a !== '--rollup' && a !== memoryArg && a !== speedArg) {
    process.stderr.write(
      `unknown argument ${a}; usage: node figures/floor.mjs [--json] [--rollup] [--memory[=N]] [--speed[=ROUNDS]]\n`,
    );
    process.exit(2);
  }
}

/** Both builds' gzip bytes of the prototype's typical import with the asks in `on`. */
const floorSize = async (on, entry = typicalEntry) => ({
  production: (await buildFloor(on, { entry })).gzip,
  development: (await buildFloor(on, { entry, messages: true })).gzip,
});
const minus = (a, b) => ({ production: a.production - b.production, development: a.development - b.development });

const floor = await floorSize([]);
const asks = [];
const on = [];
let previous = floor;
for (const [flag, label] of ASKS) {
  const alone = minus(await floorSize([flag]), floor);
  on.push(flag);
  const total = await floorSize(on);
  asks.push({ flag, label, alone, added: minus(total, previous), cumulative: total });
  previous = total;
}

/**
 * Contracts for retry(): what it carries for every bundle (the rest a bundle carries only when it
 * imports it: `retrying(options)` in a pipeline, a predicate, a printing function).
 */
const CONTRACTS = [
  ['A: the floor, kept fast and small in memory', ['QUEUE', 'FAST']],
  ['A without QUEUE (an async loop: more memory per waiting retry)', ['FAST']],
  ['A + GUARD (a thrown value read inside a try)', ['QUEUE', 'FAST', 'GUARD']],
  ['B: A + server hints + a time budget', ['QUEUE', 'FAST', 'HINTS', 'ELAPSED', 'LAZY']],
  [
    'C: B + default rule + unknown options refused + printing',
    ['QUEUE', 'FAST', 'HINTS', 'ELAPSED', 'LAZY', 'RULE', 'UNKNOWN', 'PRINTING'],
  ],
  ['D: every ask (the 1.0 design today)', ASKS.map(([flag]) => flag)],
];
const contracts = [];
for (const [label, flags] of CONTRACTS) contracts.push({ label, flags, size: await floorSize(flags) });

/**
 * The prototype's typical import with Rollup 4 and @rollup/plugin-terser (size.mjs's Rollup
 * setup), the `ASK_*` names replaced by `true`/`false` in the source as @rollup/plugin-replace
 * would (terser then drops what is off), gzip -9.
 */
const floorRollupSize = async (on, messages) => {
  const define = defineAsks(on, messages);
  const asks = {
    name: 'floor-asks',
    load: (id) =>
      id === FLOOR_SOURCE ? readFileSync(id, 'utf8').replace(/\bASK_[A-Z]+\b/g, (name) => define[name] ?? name) : null,
  };
  return (await rollupSize(join(dirname(FLOOR_SOURCE), '__typical__.mjs'), typicalEntry, [asks])).gzip;
};
/** The floor as a row of the contracts' table. */
const floorRow = { label: 'the floor', flags: [], size: floor };
if (withRollup) {
  for (const c of [floorRow, ...contracts]) {
    c.rollup = { production: await floorRollupSize(c.flags, false), development: await floorRollupSize(c.flags, true) };
  }
}
// Each other ask over contract A: what one more thing in retry() would cost there.
const [contractA] = contracts;
for (const a of asks) {
  a.overA = contractA.flags.includes(a.flag)
    ? undefined
    : minus(await floorSize([...contractA.flags, a.flag]), contractA.size);
}

const policyEntry = `import { exponential } from ${JSON.stringify(FLOOR_SOURCE)};
export const wait = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 }).start().next();`;
const all = ASKS.map(([flag]) => flag);
const prototype = {
  typical: { floor, all: previous },
  policy: { floor: await floorSize([], policyEntry), all: await floorSize(all, policyEntry) },
};

// ---- ebb's real build and p-retry, with size.mjs's entries --------------------------------
/** The default policy's module as a stub (size.mjs's "executor alone"). */
const stubDefaultPolicy = {
  name: 'stub-default-policy',
  setup(b) {
    b.onResolve({ filter: /backoff\/default\.js$/ }, () => ({ path: 'default-policy', namespace: 'stub' }));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({
      contents: 'export const defaultBackoff = { maxElapsedMs: Infinity, start: () => ({ next: () => -1 }) };',
      loader: 'js',
    }));
  },
};
const EBB = {
  typical: `import { exponential, retry } from 'ebb';
const backoff = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 });
export const call = (op) => retry(op, { backoff });`,
  policy: `import { exponential } from 'ebb';
export const wait = exponential({ initialDelayMs: 100, maxDelayMs: 20_000, maxAttempts: 5 }).start().next();`,
  executor: `import { retry } from 'ebb';
const backoff = { maxElapsedMs: Infinity, start: () => ({ next: () => 100 }) };
export const call = (op) => retry(op, { backoff });`,
};
const ebb = {};
for (const [k, entry] of Object.entries(EBB)) {
  const plugins = k === 'executor' ? [stubDefaultPolicy] : [];
  ebb[k] = {
    production: (await bundleSize(entry, { plugins, conditions: ['production'] })).gzip,
    development: (await bundleSize(entry, { plugins })).gzip,
  };
}
const pRetry = (
  await bundleSize(`import pRetry from 'p-retry-7';
export const call = (op) => pRetry(op, { retries: 4, randomize: true });`)
).gzip;

// ---- memory per waiting retry (optional) -------------------------------------------------
let memory;
if (memoryArg) {
  const n = Number(memoryArg.split('=')[1] ?? 50_000);
  const dir = mkdtempSync(join(tmpdir(), 'ebb-floor-memory-'));
  const self = fileURLToPath(import.meta.url);
  try {
    memory = [];
    for (const [label, flags] of [
      ['the floor (async loop)', []],
      ['the floor, the run as one object (QUEUE)', ['QUEUE']],
      ['every ask but QUEUE', all.filter((f) => f !== 'QUEUE')],
      ['every ask', all],
    ]) {
      const file = join(dir, `${flags.length}-${flags.includes('QUEUE')}.mjs`);
      writeFileSync(file, (await buildFloor(flags, {})).code);
      const out = execFileSync(process.execPath, ['--expose-gc', self, '--memory-child', file, String(n)], {
        encoding: 'utf8',
      });
      memory.push({ label, n, bytesPerRetry: JSON.parse(out).bytesPerRetry });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the success path (optional) ---------------------------------------------------------
let speed;
if (speedArg) {
  const rounds = Number(speedArg.split('=')[1] ?? 10);
  const { loadavg } = await import('node:os');
  const fn = () => Promise.resolve(1);
  const rethrow = (error) => {
    throw error;
  };
  const dir = mkdtempSync(join(tmpdir(), 'ebb-floor-speed-'));
  try {
    const subjects = [
      ['bare', () => fn()],
      ['floor', () => fn().then(undefined, rethrow)],
    ];
    for (const [label, flags] of [
      ['the floor (async loop)', []],
      ['the floor + FAST', ['FAST']],
      ['the floor + QUEUE', ['QUEUE']],
      ['the floor + QUEUE + FAST', ['QUEUE', 'FAST']],
      ['every ask but FAST', all.filter((f) => f !== 'FAST')],
      ['every ask but LAZY', all.filter((f) => f !== 'LAZY')],
      ['every ask', all],
    ]) {
      const file = join(dir, `${label.replace(/\W+/g, '-')}.mjs`);
      writeFileSync(file, (await buildFloor(flags, {})).code);
      const { retry } = await import(pathToFileURL(file).href);
      subjects.push([label, () => retry(fn)]);
    }
    const ebbRetry = (await import('ebb')).retry;
    subjects.push(['ebb retry(fn)', () => ebbRetry(fn)]);
    for (const [id, call] of subjects) if ((await call()) !== 1) throw new Error(`${id}: did not resolve with 1`);
    // A tight loop of sequential awaits per subject, every subject once a round, the order
    // rotated each round (mitata's per-call figures carry its own overhead: docs/dev/size.md).
    const BATCH = 10_000;
    const perCall = new Map(subjects.map(([id]) => [id, []]));
    const before = loadavg()[0];
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < subjects.length; i++) {
        const [id, call] = subjects[(i + r) % subjects.length];
        const t = process.hrtime.bigint();
        for (let k = 0; k < BATCH; k++) await call();
        perCall.get(id).push(Number(process.hrtime.bigint() - t) / BATCH);
      }
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const floorNs = perCall.get('floor');
    speed = {
      loadAverage: [before, loadavg()[0]],
      rounds,
      subjects: subjects.slice(2).map(([id]) => ({
        id,
        timesFloor: Math.round(median(perCall.get(id).map((ns, r) => ns / floorNs[r])) * 100) / 100,
        nsPerCall: Math.round(median(perCall.get(id))),
      })),
      floorNs: Math.round(median(floorNs)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (json) {
  process.stdout.write(
    `${JSON.stringify({ esbuild: version, floor, floorRollup: floorRow.rollup, asks, contracts, prototype, ebb, pRetry, memory, speed })}\n`,
  );
} else {
  const both = (x) => `${x.production.toLocaleString('en')} / ${x.development.toLocaleString('en')}`;
  const signed = (x) =>
    [x.production, x.development].map((v) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toLocaleString('en')}`).join(' / ');
  const lines = [
    `esbuild ${version}, --bundle --minify --format=esm (browser), gzip -9; bytes as production / development (full messages)`,
    '',
    '| ask | alone over the floor | added in this order | cumulative | over contract A |',
    '| --- | ---: | ---: | ---: | ---: |',
    `| the floor (non-negotiable asks) | — | — | ${both(floor)} | — |`,
    ...asks.map(
      (a) =>
        `| ${a.flag}: ${a.label} | ${signed(a.alone)} | ${signed(a.added)} | ${both(a.cumulative)} | ${a.overA ? signed(a.overA) : 'in A'} |`,
    ),
    '',
    `| contract of retry() | asks beyond the floor | typical import |${withRollup ? ' Rollup + terser |' : ''}`,
    `| --- | --- | ---: |${withRollup ? ' ---: |' : ''}`,
    ...[floorRow, ...contracts].map(
      (c) => `| ${c.label} | ${c.flags.join(', ')} | ${both(c.size)} |${c.rollup ? ` ${both(c.rollup)} |` : ''}`,
    ),
    '',
    '| entry | prototype, floor | prototype, every ask | ebb (this build) |',
    '| --- | ---: | ---: | ---: |',
    `| typical: \`retry\` + \`exponential({…})\` | ${both(floor)} | ${both(previous)} | ${both(ebb.typical)} |`,
    `| policy alone | ${both(prototype.policy.floor)} | ${both(prototype.policy.all)} | ${both(ebb.policy)} |`,
    `| executor alone (default policy stubbed) | — | — | ${both(ebb.executor)} |`,
    '',
    `p-retry 7.1.1, typical import (\`retries: 4, randomize: true\`): ${pRetry.toLocaleString('en')} B gzip`,
  ];
  if (memory) {
    lines.push('', '| heap per waiting retry (Node.js, `--expose-gc`) | bytes |', '| --- | ---: |');
    for (const m of memory)
      lines.push(`| ${m.label}, ${m.n.toLocaleString('en')} waiting | ${Math.round(m.bytesPerRetry)} |`);
  }
  if (speed) {
    lines.push(
      '',
      `| success path, ${speed.rounds} interleaved rounds (load ${speed.loadAverage.map((l) => l.toFixed(2)).join(' → ')}; the floor ${speed.floorNs} ns) | × the floor | ns per call |`,
      '| --- | ---: | ---: |',
    );
    for (const x of speed.subjects) lines.push(`| ${x.id} | ${x.timesFloor.toFixed(2)} | ${x.nsPerCall} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
