// A vitest reporter that ends `npm test` with one line naming every suite skipped because a
// real server or tool is not installed, and the one command that installs what they need (the
// records come from test/support/skips.mjs, written by the test processes). In CI the suites
// fail instead of skipping, so the line never appears there.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Reporter } from 'vitest/reporters';
import { type Need, skipLine } from './skips.mjs';

export class SkipSummary implements Reporter {
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  onInit(): void {
    writeFileSync(this.#file, '');
  }

  onTestRunEnd(): void {
    const text = existsSync(this.#file) ? readFileSync(this.#file, 'utf8') : '';
    rmSync(this.#file, { force: true });
    const records = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { suite: string; need: Need });
    const line = skipLine(records, process.getuid?.() === 0);
    if (line !== undefined) process.stdout.write(`\n${line}\n`);
  }
}
