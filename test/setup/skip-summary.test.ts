import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { recordSkip, SKIPS_FILE_ENV, skipLine } from '../support/skips.mjs';

const dir = mkdtempSync(join(tmpdir(), 'ebb-skip-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the line npm test ends with when suites skip for want of a server', () => {
  it('names every suite under what it needs, and one apt-get command for all of it (sudo unless root)', () => {
    const records = [
      { suite: 'test/redis/faults.test.ts', need: 'redis-server' },
      { suite: 'test/redis/fleet-rate.test.ts', need: 'nginx' },
      { suite: 'test/redis/fleet-rate.test.ts', need: 'redis-server' },
      { suite: 'test/fidelity/grpc.test.ts', need: 'grpc-java' },
      { suite: 'test/redis/faults.test.ts', need: 'redis-server' },
    ] as const;
    expect(skipLine(records, false)).toBe(
      'npm test skipped 3 suites for want of what is not installed here: test/fidelity/grpc.test.ts (a JDK and grpc-java); ' +
        'test/redis/fleet-rate.test.ts (nginx); test/redis/faults.test.ts, test/redis/fleet-rate.test.ts (redis-server). ' +
        'Install it with: sudo apt-get install -y --no-install-recommends default-jdk-headless libgrpc-java nginx-light redis-server',
    );
    expect(skipLine(records.slice(0, 1), true)).toBe(
      'npm test skipped 1 suite for want of what is not installed here: test/redis/faults.test.ts (redis-server). ' +
        'Install it with: apt-get install -y --no-install-recommends redis-server',
    );
    expect(skipLine([], false)).toBeUndefined();
  });

  it('recordSkip writes the calling test file and the need, only when npm test asked for records', () => {
    const file = join(dir, 'records.jsonl');
    const before = process.env[SKIPS_FILE_ENV];
    try {
      delete process.env[SKIPS_FILE_ENV];
      recordSkip('haproxy'); // outside npm test (the benchmarks share the helpers): nothing
      process.env[SKIPS_FILE_ENV] = file;
      recordSkip('haproxy');
      expect(readFileSync(file, 'utf8')).toBe(
        `${JSON.stringify({ suite: 'test/setup/skip-summary.test.ts', need: 'haproxy' })}\n`,
      );
      expect(() => recordSkip('postgres' as never)).toThrow(/unknown need postgres/);
    } finally {
      if (before === undefined) delete process.env[SKIPS_FILE_ENV];
      else process.env[SKIPS_FILE_ENV] = before;
    }
  });

  it('a run where the JDK, nginx and redis-server are not found ends with that line, naming the suites that skipped', {
    timeout: 120_000,
  }, async () => {
    // A PATH with Node.js alone (no java, no javac), and the servers' binaries pointed at nothing.
    const bin = join(dir, 'bin');
    symlinkSync(process.execPath, join(dir, 'node'));
    const path = dir;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: path,
      EBB_TEST_NGINX: join(bin, 'nginx'),
      EBB_TEST_REDIS_SERVER: join(bin, 'redis-server'),
    };
    // In CI a missing server fails the suite instead; this run is a developer's machine.
    delete env.CI;
    delete env[SKIPS_FILE_ENV];
    const files = ['test/fidelity/google.test.ts', 'test/rate/nginx-limit.test.ts', 'test/redis/fleet-rate.test.ts'];
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...files],
        { cwd: ROOT, env, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve({ stdout: out })),
      ),
    );
    const last = stdout.trimEnd().split('\n').at(-1);
    const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
    expect(last).toBe(
      'npm test skipped 3 suites for want of what is not installed here: ' +
        "test/fidelity/google.test.ts (a JDK and Google's HTTP client); " +
        'test/rate/nginx-limit.test.ts, test/redis/fleet-rate.test.ts (nginx); test/redis/fleet-rate.test.ts (redis-server). ' +
        `Install it with: ${sudo}apt-get install -y --no-install-recommends default-jdk-headless libgoogle-http-client-java nginx-light redis-server`,
    );
    expect(stdout).toMatch(/Test Files .*3 skipped|skipped/);
  });

  it('a run that skips nothing adds no line', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env[SKIPS_FILE_ENV];
    const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/readme/default-policy.test.ts'],
        { cwd: ROOT, env, timeout: 60_000 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${out}\n${err}`)) : resolve({ stdout: out })),
      ),
    );
    expect(stdout).toMatch(/Tests .*passed/);
    expect(stdout).not.toMatch(/npm test skipped/);
  });
});
