import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/*
 * The package's declarations either ship their maps or do not point at them: a
 * `sourceMappingURL` naming a file that is not there sends an editor's "go to definition", and
 * any tool that follows it, to nothing.
 */

const DIST = join(ROOT, 'packages', 'ebb', 'dist');

describe("the built package's declaration files", () => {
  it('point at no declaration map that is not there', () => {
    const files = readdirSync(DIST, { recursive: true, withFileTypes: true }).filter(
      (e) => e.isFile() && /\.d\.[cm]?ts$/.test(e.name),
    );
    // Both formats' declarations for every subpath: a build that wrote none would pass vacuously.
    expect(files.length).toBeGreaterThan(100);
    const dangling = files.flatMap((e) => {
      const m = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(e.parentPath, e.name), 'utf8'));
      return m && !existsSync(join(e.parentPath, m[1] as string))
        ? [join(e.parentPath, e.name).slice(DIST.length + 1)]
        : [];
    });
    expect(dangling).toEqual([]);
  });
});
