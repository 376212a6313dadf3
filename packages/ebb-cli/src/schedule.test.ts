import { presetCatalog } from 'ebb';
import { describe, expect, it } from 'vitest';
import { schedule } from './schedule.js';

describe('schedule', () => {
  it('--json prints exactly the describe document plus the name', () => {
    const doc = JSON.parse(schedule({ preset: 'aws-standard', json: true }).stdout);
    expect(Object.keys(doc)).toEqual(['name', 'rows', 'stopsAfterAttempt', 'maxElapsedMs']);
    expect(doc).toEqual({
      name: 'aws-standard',
      rows: [
        { attempt: 1, delayMs: 50, minDelayMs: 0, maxDelayMs: 50, meanDelayMs: 25 },
        { attempt: 2, delayMs: 100, minDelayMs: 0, maxDelayMs: 100, meanDelayMs: 50 },
      ],
      stopsAfterAttempt: 3,
      maxElapsedMs: null,
    });
  });

  it('--json tells a policy stopped by its time budget from one that never stops (maxElapsedMs)', () => {
    const doc = (flags: Parameters<typeof schedule>[0]) => {
      const { stopsAfterAttempt, maxElapsedMs } = JSON.parse(schedule({ ...flags, json: true }).stdout);
      return { stopsAfterAttempt, maxElapsedMs };
    };
    expect(doc({ preset: 'default', maxAttempts: 'Infinity', maxElapsed: '1m' })).toEqual({
      stopsAfterAttempt: null,
      maxElapsedMs: 60_000,
    });
    expect(doc({ preset: 'default', maxAttempts: 'Infinity' })).toEqual({
      stopsAfterAttempt: null,
      maxElapsedMs: null,
    });
    expect(doc({ preset: 'default', maxElapsed: '10s' })).toEqual({ stopsAfterAttempt: 5, maxElapsedMs: 10_000 });
    // Google's budget (maxElapsedTimeMs, checked before each wait): 15 minutes.
    expect(doc({ preset: 'google-http-client' })).toEqual({ stopsAfterAttempt: null, maxElapsedMs: 900_000 });
  });

  it('--attempts sets the number of rows (default 10)', () => {
    expect(JSON.parse(schedule({ preset: 'sip', json: true }).stdout).rows).toHaveLength(10);
    expect(JSON.parse(schedule({ preset: 'sip', json: true, attempts: '3' }).stdout).rows).toHaveLength(3);
    expect(() => schedule({ preset: 'sip', attempts: '-1' })).toThrow(/--attempts/);
  });

  it('--sample --seed prints one reproducible run; without --seed the seed is chosen and printed', () => {
    const a = schedule({ preset: 'default', sample: true, seed: '5', json: true }).stdout;
    const b = schedule({ preset: 'default', sample: true, seed: '5', json: true }).stdout;
    const c = schedule({ preset: 'default', sample: true, seed: '6', json: true }).stdout;
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    const doc = JSON.parse(a);
    expect(doc.seed).toBe(5);
    expect(doc.rows).toHaveLength(4);
    expect(doc.rows.at(-1).elapsedMs).toBeCloseTo(
      doc.rows.reduce((s: number, r: { delayMs: number }) => s + r.delayMs, 0),
      9,
    );
    expect(schedule({ preset: 'default', sample: true }, () => 77).stdout).toContain('seed 77');
    expect(() => schedule({ preset: 'default', seed: '5' })).toThrow(/--seed only applies with --sample/);
  });

  it('says why a sampled run ends', () => {
    expect(schedule({ preset: 'default', sample: true, seed: '1' }).stdout).toMatch(
      /attempt 5 is the last \(maxAttempts\)/,
    );
    expect(schedule({ preset: 'sip', sample: true, seed: '1', attempts: '50' }).stdout).toMatch(/past the 32 s budget/);
    expect(schedule({ preset: 'sip', sample: true, seed: '1', attempts: '3' }).stdout).toMatch(/the first 3 waits/);
  });

  it('a preset changed by limit flags says what runs under its title (the title describes the preset)', () => {
    const text = schedule({ preset: 'default', maxDelay: '300ms', maxAttempts: '3' }).stdout;
    expect(text.split('\n').slice(0, 3)).toEqual([
      "default — ebb's default: 100 ms ×2, 20 s cap, full jitter, 5 attempts",
      'source: ebb (see presets.default)',
      'with the flags given: exponential 100 ms ×2, 300 ms cap, full jitter, 3 attempts',
    ]);
    expect(schedule({ preset: 'default' }).stdout).not.toMatch(/with the flags given/);
  });

  it('a time budget beside maxAttempts: where each ends the run, never past the last attempt', () => {
    const stop = (flags: Parameters<typeof schedule>[0]) =>
      /stops: rather than wait past .*\n {7}(.*)/.exec(schedule(flags).stdout)?.[1];
    // Longest waits: 100 + 200 + 400 ms, then 800 ms passes 1 s; shortest (0): never, so attempt 5 (maxAttempts).
    expect(stop({ maxElapsed: '1s' })).toBe('with attempts that fail at once, the last attempt is between 4 and 5');
    expect(stop({ maxElapsed: '1ms' })).toBe('with attempts that fail at once, the last attempt is between 1 and 5');
    // 100 + 200 + 400 + 800 ms = 1.5 s: a 10-s budget never ends a run of 5 attempts.
    expect(stop({ maxElapsed: '10s', jitter: 'none' })).toBe(
      'with attempts that fail at once, it never does: maxAttempts ends the run first',
    );
    expect(stop({ maxElapsed: '500ms', jitter: 'none' })).toBe(
      'with attempts that fail at once, attempt 3 is the last',
    );
    // No maxAttempts: with waits that may be 0, no attempt is the last for sure.
    expect(stop({ maxElapsed: '1s', maxAttempts: 'Infinity' })).toBe(
      'with attempts that fail at once, the last attempt is between 4 and later',
    );
  });

  it('prints the table with the source, the seed note and where the policy stops', () => {
    const text = schedule({ preset: 'google-http-client' }).stdout;
    expect(text).toMatch(/^google-http-client — /);
    expect(text).toMatch(/source: google-http-java-client/);
    expect(text).toMatch(/note: The Javadoc table's STOP at try 10/);
    expect(text).toMatch(/\n {5}10 {3}19\.21 s {2}9\.605 s {2}28\.815 s {3}19\.21 s\n/);
    expect(text).toMatch(/stops: once more than 15 min have passed when a wait is due \(maxElapsedTimeMs/);
    const run = schedule({ preset: 'google-http-client', sample: true, seed: '1', attempts: '40' }).stdout;
    expect(run).toMatch(/then stops: more than 15 min had passed when the next wait was due/);
    expect(schedule({ preset: 'sip' }).stdout).toMatch(/attempt 11 is the last/);
    expect(schedule({ preset: 'ethernet' }).stdout).toMatch(/stops: after attempt 16 \(maxAttempts\)/);
    expect(schedule({ preset: 'grpc-connect' }).stdout).toMatch(/never stops by itself/);
    expect(schedule({ initial: '1s', jitter: 'full', ceiling: '3', maxDelay: '2s' }).stdout).toMatch(
      /^custom — exponential 1 s ×2, ceiling 3, 2 s cap, full jitter, 5 attempts/,
    );
  });

  it('--list names every preset, and --list --json gives their ids, titles and sources', () => {
    const text = schedule({ list: true }).stdout;
    for (const id of [
      'google-http-client',
      'google-drive',
      'aws-simpledb',
      'ethernet',
      'wifi',
      'sip-invite',
      'grpc-connect',
    ]) {
      expect(text).toMatch(new RegExp(`^${id} +\\S`, 'm'));
    }
    // Each preset names its source on the line below its title.
    expect(text).toMatch(/^aws-standard +.*\n +source: @smithy\/util-retry 4\.6\.2/m);
    expect(text.match(/^ +source: \S/gm)).toHaveLength(presetCatalog.length);
    const doc = JSON.parse(schedule({ list: true, json: true }).stdout);
    expect(doc.find((p: { id: string }) => p.id === 'wifi')).toMatchObject({
      key: 'wifi',
      source: expect.stringContaining('802.11'),
    });
  });
});
