// npm run bench [-- FIGURE…] [--quick]: runs each figure in several fresh processes and prints
// medians with their spread; a full run (all figures, not --quick) also writes bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { summarize } from './lib/stats.mjs';
import { subjects } from './subjects.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const FIGURES = ['overhead', 'memory'];
const chosen = args.filter((a) => !a.startsWith('--'));
for (const f of chosen)
  if (!FIGURES.includes(f)) throw new Error(`unknown figure ${f}; figures: ${FIGURES.join(', ')}`);
const figures = chosen.length ? chosen : FIGURES;
const processes = quick ? 2 : 5;

const node = (script, extra = [], nodeArgs = []) =>
  JSON.parse(
    execFileSync(process.execPath, [...nodeArgs, here(script), ...extra], { encoding: 'utf8', maxBuffer: 1 << 26 })
      .trim()
      .split('\n')
      .at(-1),
  );

const fmt = (x, digits = 1) => x.toFixed(digits);
const sections = [];

if (figures.includes('overhead')) {
  const runs = Array.from({ length: processes }, () => node('figures/overhead.mjs'));
  const names = Object.keys(runs[0]);
  const rows = names.map((name) => {
    const ns = summarize(runs.map((r) => r[name]));
    const floor = summarize(runs.map((r) => r[name] / r.floor));
    const bare = summarize(runs.map((r) => r[name] / r.bare));
    return `| ${name} | ${fmt(ns.median)} (${fmt(ns.min)}–${fmt(ns.max)}) | ${fmt(floor.median, 2)}× (${fmt(floor.min, 2)}–${fmt(floor.max, 2)}) | ${fmt(bare.median, 2)}× |`;
  });
  sections.push(
    [
      '## Success-path overhead',
      '',
      `\`await retry(() => Promise.resolve(1))\`, ns per call: the median over ${processes} processes of mitata's p50, with the range; ratios to the floor (\`fn().then(undefined, rethrow)\`) and to a bare \`await fn()\`, computed within each process.`,
      '',
      '| subject | ns/call | × floor | × bare |',
      '|---|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

if (figures.includes('memory')) {
  const n = quick ? 20_000 : 100_000;
  const measure = (subject) =>
    summarize(
      Array.from(
        { length: processes },
        () => node('figures/memory.mjs', [subject, String(n)], ['--expose-gc']).bytesPerOp,
      ),
    );
  const timer = measure('timer');
  const rows = [`| bare timer | ${fmt(timer.median, 0)} (${fmt(timer.min, 0)}–${fmt(timer.max, 0)}) | — |`];
  for (const s of await subjects()) {
    const m = measure(s.name);
    rows.push(
      `| ${s.name} | ${fmt(m.median, 0)} (${fmt(m.min, 0)}–${fmt(m.max, 0)}) | ${fmt(m.median - timer.median, 0)} |`,
    );
  }
  sections.push(
    [
      '## Memory per pending retry',
      '',
      `${n.toLocaleString('en')} operations that failed once and sit in a backoff sleep, heap bytes per operation after GC (\`--expose-gc\`), median of ${processes} processes with the range; and above a bare pending timer (\`new Promise(r => setTimeout(r, ms))\`).`,
      '',
      '| subject | bytes/op | above a bare timer |',
      '|---|---|---|',
      ...rows,
    ].join('\n'),
  );
}

const header = [
  '# ebb benchmarks',
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; Node.js ${process.version}; ${new Date().toISOString().slice(0, 10)}${quick ? ' (--quick)' : ''}.`,
  'Reproduce: `npm run bench` (or one figure: `npm run bench -- overhead`).',
].join('\n');
const text = `${header}\n\n${sections.join('\n\n')}\n`;
process.stdout.write(text);
if (!quick && chosen.length === 0) {
  writeFileSync(here('RESULTS.md'), text);
  process.stdout.write('\nwrote bench/RESULTS.md\n');
}
