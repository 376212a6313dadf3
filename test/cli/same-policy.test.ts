import { describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

/** The waits `ebb run` reported on stderr, as printed ("retrying in 1.442 ms"). */
function runWaits(stderr: string): string[] {
  return [...stderr.matchAll(/retrying in (.+?) \(attempt (\d+) of (\d+)\)/g)].map((m) => m[1] as string);
}

/** The waits `ebb schedule --sample` printed, in the same format. */
function scheduleWaits(stdout: string): string[] {
  return [...stdout.matchAll(/^ +\d+ +(\S+ \S+) +\S+ \S+$/gm)].map((m) => m[1] as string);
}

describe('ebb schedule and ebb run given the same flags describe and run the same policy', () => {
  it.each([
    [[]],
    [['--max-delay', '3ms']],
    [['--max-delay', '2ms', '--max-attempts', '3']],
    [['--initial', '1ms']],
    [['--initial', '1ms', '--multiplier', '3', '--jitter', 'equal', '--max-attempts', '4']],
    [['--delay', '2ms', '--jitter', 'none', '--max-attempts', '3']],
    [['--preset', 'aws-standard', '--max-delay', '4ms']],
    [['--preset', 'grpc-connect', '--max-delay', '2ms', '--max-attempts', '4', '--jitter', 'full']],
  ])('flags %j: the run waits exactly what the sampled schedule shows, and stops where it says', async (flags) => {
    // The same flags, verbatim, to both commands. Small delays keep the runs short; the default's
    // 100 ms… 800 ms waits take 1.5 s at most.
    const sched = await ebb(['schedule', ...flags, '--sample', '--seed', '11']);
    expect(sched.code, sched.stderr).toBe(0);
    const run = await ebb(['run', ...flags, '--seed', '11', '--', 'false']);
    expect(run.code).toBe(1);
    const expected = scheduleWaits(sched.stdout);
    expect(expected.length).toBeGreaterThan(0);
    expect(runWaits(run.stderr)).toEqual(expected);
    const stop = /then gives up: attempt (\d+) is the last/.exec(sched.stdout);
    expect(stop).not.toBeNull();
    expect(run.stderr).toMatch(new RegExp(`giving up after ${stop?.[1]} attempts`));
  });

  it('ebb schedule ID is ebb schedule --preset ID, the spelling ebb run takes; two different presets are refused', async () => {
    for (const id of ['aws-standard', 'google-http-client', 'default']) {
      const positional = await ebb(['schedule', id, '--max-attempts', '4', '--json']);
      const flag = await ebb(['schedule', '--preset', id, '--max-attempts', '4', '--json']);
      expect(flag.code, flag.stderr).toBe(0);
      expect(JSON.parse(flag.stdout).name).toBe(id);
      expect(flag.stdout).toBe(positional.stdout);
      expect((await ebb(['schedule', id, '--preset', id, '--max-attempts', '4', '--json'])).stdout).toBe(flag.stdout);
    }
    const both = await ebb(['schedule', 'aws-standard', '--preset', 'grpc-connect']);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
    expect(both.stderr).toBe('ebb: two presets: "aws-standard" and --preset grpc-connect; give one\n');
  });

  it('every policy flag ebb run --help lists, ebb schedule --help lists too', async () => {
    const flagsOf = (help: string) => new Set([...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1] as string));
    const run = flagsOf((await ebb(['run', '--help'])).stdout);
    const schedule = flagsOf((await ebb(['schedule', '--help'])).stdout);
    // run's own: how it runs the command, not which policy.
    const runOnly = ['--attempt-timeout', '--retry-on-exit', '--kill-after', '--shell', '--quiet'];
    expect([...run].filter((f) => !schedule.has(f)).sort()).toEqual([...runOnly].sort());
    expect(run.has('--preset') && schedule.has('--preset')).toBe(true);
  });

  it('ebb run --initial 1ms -- false stops after 5 jittered attempts instead of retrying forever in lockstep', async () => {
    const a = await ebb(['run', '--initial', '1ms', '--seed', '1', '--', 'false']);
    const b = await ebb(['run', '--initial', '1ms', '--seed', '2', '--', 'false']);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/giving up after 5 attempts/);
    // Jittered: two seeds wait differently; lockstep would print 1 ms, 2 ms, 4 ms, 8 ms for both.
    expect(runWaits(a.stderr)).toHaveLength(4);
    expect(runWaits(a.stderr)).not.toEqual(runWaits(b.stderr));
    expect(runWaits(a.stderr)).not.toEqual(['1 ms', '2 ms', '4 ms', '8 ms']);
  });
});
