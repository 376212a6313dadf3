import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, ebb, ROOT } from '../support/cli.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../packages/ebb-cli/package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** One line on stderr, nothing on stdout, no stack trace, exit 2. */
function usageError(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd()).toMatch(message);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at |outputHelp|Maximum call stack|heap/);
}

describe('the ebb command line: help, version and the limits of its input', () => {
  it('--version prints the package version and exits 0', async () => {
    const r = await ebb(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('bare ebb prints the usage on stderr and exits 2; --help and help print it on stdout and exit 0', async () => {
    const bare = await ebb([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^Usage: ebb \[options\] \[command\]/);
    expect(bare.stderr).toMatch(/schedule .*\n.*run /s);
    for (const args of [['--help'], ['help']]) {
      const r = await ebb(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toBe(bare.stderr);
    }
    const sub = await ebb(['help', 'run']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/^Usage: ebb run/);
    expect(sub.stdout).toMatch(/--max-attempts <n> .*Infinity retries forever/s);
  });

  it('ebb help bogus: one line, exit 2', async () => {
    usageError(await ebb(['help', 'bogus']), /^ebb: unknown command 'bogus'; commands: schedule, run, simulate, demo$/);
  });

  it('ebb help <command> prints what <command> --help prints, for every command the usage lists', async () => {
    const usage = (await ebb(['--help'])).stdout;
    const commands = [...usage.matchAll(/^ {2}([a-z-]+) (?!\[command\])/gm)].map((m) => m[1] as string);
    expect(commands).toEqual(['schedule', 'run', 'simulate', 'demo']);
    for (const command of commands) {
      const viaHelp = await ebb(['help', command]);
      const viaFlag = await ebb([command, '--help']);
      expect(viaHelp.code, command).toBe(0);
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: ebb ${command} `));
      expect(viaHelp.stdout, command).toBe(viaFlag.stdout);
    }
  });

  it('a model of ebb simulate: ebb help simulate M, ebb simulate help M and ebb simulate M --help print its options, for every model listed', async () => {
    const group = await ebb(['help', 'simulate']);
    expect(group.code).toBe(0);
    // The group's help says how to reach a model's options.
    expect(group.stdout).toMatch(/A model's options: ebb help simulate <model> \(or ebb simulate help <model>/);
    expect((await ebb(['simulate', 'help'])).stdout).toBe(group.stdout);
    const listed = /Arguments:\n {2}model +(.*?)\n\n/s.exec(group.stdout)?.[1]?.replace(/\s+/g, ' ');
    const models = [...String(listed).matchAll(/[a-z-]+/g)].map((m) => m[0]).filter((w) => w !== 'or');
    const commands = [...group.stdout.matchAll(/^ {2}([a-z-]+) \[options\]/gm)].map((m) => m[1]);
    expect(models).toEqual(commands);
    expect(models).toHaveLength(9);
    for (const model of models) {
      const viaFlag = await ebb(['simulate', model, '--help']);
      expect(viaFlag.stdout).toMatch(new RegExp(`^Usage: ebb simulate ${model} \\[options\\]`));
      expect(viaFlag.stdout).toMatch(/--json/);
      for (const args of [
        ['help', 'simulate', model],
        ['simulate', 'help', model],
      ]) {
        const r = await ebb(args);
        expect(r.code, args.join(' ')).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout, args.join(' ')).toBe(viaFlag.stdout);
      }
    }
  });

  it.each([
    [
      ['help', 'simulate', 'bogus'],
      /^ebb: unknown model 'bogus' of ebb simulate; models: ethernet, wifi, contention, overload, delays, outage, brownout, slow-tail, fleet-breaker$/,
    ],
    [['simulate', 'help', 'bogus'], /^ebb: unknown model 'bogus' of ebb simulate; models: ethernet, /],
    [['help', 'schedule', 'default'], /^ebb: ebb schedule has no models: ebb help schedule$/],
  ])('%j: one line naming what exists, exit 2', async (args, message) => {
    usageError(await ebb(args), message);
  });

  it('--attempts is bounded (documented in --help) instead of overflowing the stack or the heap', async () => {
    const help = await ebb(['schedule', '--help']);
    expect(help.stdout).toMatch(/--attempts <n> +rows to print \(default 10, at most 10000\)/);
    const ok = await ebb(['schedule', 'grpc-connect', '--attempts', '10000']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ {1,4}10000 /m);
    usageError(
      await ebb(['schedule', 'grpc-connect', '--attempts', '130000']),
      /^ebb: --attempts expects a whole number of rows from 0 to 10000, got "130000"$/,
    );
    usageError(
      await ebb(['schedule', 'grpc-connect', '--attempts', '1e9', '--json']),
      /^ebb: --attempts expects a whole number of rows from 0 to 10000, got "1e9"$/,
    );
  });

  it.each([
    [['schedule', '--initial', '100'], /^ebb: --initial needs a unit: did you mean 100ms\?/],
    [['run', '--delay', '5', '--', 'true'], /^ebb: --delay needs a unit: did you mean 5ms\?/],
    [['run', '--attempt-timeout', '30', '--', 'true'], /^ebb: --attempt-timeout needs a unit: did you mean 30ms\?/],
    [['demo', '--base', '100'], /^ebb: --base needs a unit: did you mean 100ms\?/],
    [['run', '--seed', '1.5', '--', 'true'], /^ebb: --seed expects a whole number, got "1.5"$/],
    [['schedule', '--sample', '--attempts', '-1'], /^ebb: --attempts expects a whole number of rows/],
  ])('%j: one line with a hint, exit 2', async (args, message) => {
    usageError(await ebb(args), message);
  });

  it.each([
    [
      ['schedule', '--initial', '1s', '--initial', '2s'],
      /^ebb: --initial given twice \("1s", then "2s"\); give it once$/,
    ],
    [
      ['run', '--max-attempts', '3', '--max-attempts=5', '--', 'true'],
      /^ebb: --max-attempts given twice \("3", then "5"\)/,
    ],
    [['simulate', 'overload', '--clients', '10', '--clients', '20'], /^ebb: --clients given twice \("10", then "20"\)/],
    [['demo', '--seed', '1', '--seed', '2'], /^ebb: --seed given twice \("1", then "2"\)/],
  ])('%j: a flag given twice is refused, one line, exit 2', async (args, message) => {
    usageError(await ebb(args), message);
  });

  it('a flag without a value may be given twice; the command after ebb run -- keeps its own flags', async () => {
    const json = await ebb(['schedule', 'sip', '--json', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).name).toBe('sip');
    const run = await ebb(['run', '--delay', '1ms', '--quiet', '--', 'echo', '--delay', '2ms', '--delay']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('--delay 2ms --delay\n');
  });

  it('an --svg or --png path that cannot be written: one line naming the flag and the path, exit 2, before the simulation', async () => {
    usageError(
      await ebb(['simulate', 'overload', '--svg', '/nonexistent/dir/x.svg']),
      /^ebb: --svg \/nonexistent\/dir\/x\.svg: cannot write there: no directory \/nonexistent\/dir$/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'ebb-out-'));
    try {
      const svg = join(dir, 'ok.svg');
      // Checked before anything runs or is written: the good --svg is not written either.
      usageError(
        await ebb(['simulate', 'delays', '--svg', svg, '--png', dir]),
        /^ebb: --png .*: cannot write there: it is a directory$/,
      );
      expect(existsSync(svg)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Runs `ebb …args`, `close(child)` once it has started, and collects what is left. */
function closedEarly(
  args: readonly string[],
  close: (streams: { stdout: NodeJS.ReadableStream & { destroy(): void }; stderr: { destroy(): void } }) => void,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    close({ stdout: child.stdout, stderr: child.stderr });
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('output into a pipe that closes early (| head -1)', () => {
  it('stdout: a quiet exit 0, no stack trace', async () => {
    for (const args of [
      ['schedule', '--attempts', '10000', '--max-attempts', 'Infinity'],
      ['help', 'run'],
    ]) {
      const r = await closedEarly(args, ({ stdout }) => stdout.once('data', () => stdout.destroy()));
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code, args.join(' ')).toBe(0);
    }
  });

  it('stderr: its reports are dropped, ebb run still ends with the command’s status', async () => {
    const r = await closedEarly(
      ['run', '--delay', '1ms', '--max-attempts', '3', '--', 'sh', '-c', 'exit 3'],
      ({ stderr }) => stderr.destroy(),
    );
    expect(r.code).toBe(3);
  });
});
