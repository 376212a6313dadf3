import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/*
 * The declarations as a Node-only project sees them: test/types/no-dom/ is such a project
 * (lib ES2022 without the DOM, Node's types, `strict`, `skipLibCheck: false`), and its files
 * state with `@ts-expect-error` what must not compile as well as what must. The compiler runs
 * as a process on the built package (its `exports`, its .d.ts files), as a user's would.
 */

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function tsc(project: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, '-p', project], { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

describe("ebb's declarations in a Node-only project without the DOM lib, every declaration checked", () => {
  it('withRetry keeps the wrapped fetch’s type (undici’s with its dispatcher); shed fits node:http, Express and Fastify; every subpath compiles', async () => {
    const { code, output } = await tsc(join(ROOT, 'test', 'types', 'no-dom', 'tsconfig.json'));
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});

describe("ebb's declarations in a project with the DOM lib, whose Response is not undici's", () => {
  it('the ready-made HTTP predicates fit withRetry over undici’s fetch as over the global one', async () => {
    const { code, output } = await tsc(join(ROOT, 'test', 'types', 'dom', 'tsconfig.json'));
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
