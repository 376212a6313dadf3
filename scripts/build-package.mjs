// Builds the workspace package in the current directory from its tsdown.config.ts, through
// tsdown's API rather than its command line, and prints only warnings and errors.
//
// Why not `tsdown` itself: its command line prints a line for every file written (about 880 for
// the library: two formats, declarations, maps, the browser build) and, on Node.js before 22.18,
// a notice that its next minor release drops Node.js 20. The workspace pins tsdown exactly
// (package.json), so that notice does not apply until the pin moves (docs/dev/install.md says
// what moving it takes); the listing buried anything that mattered in every `npm ci`.
// Warnings fail the build, as `tsdown` does by default (--fail-on-warn).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'tsdown';

await build({ logLevel: 'warn', failOnWarn: true });

// The declarations are written without maps, yet each ends with a `sourceMappingURL` comment
// naming its .d.ts.map: an editor or a bundler that follows it finds nothing. Such a comment is
// removed; one whose map exists is kept. (test/types/declaration-maps.test.ts holds this.)
const DECLARATION = /\.d\.[cm]?ts$/;
const MAP_COMMENT = /\n\/\/# sourceMappingURL=([^\n]+)\n?$/;
for (const entry of readdirSync('dist', { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !DECLARATION.test(entry.name)) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const m = MAP_COMMENT.exec(text);
  if (m && !existsSync(join(entry.parentPath, m[1]))) writeFileSync(file, `${text.slice(0, m.index)}\n`);
}

// A module whose only use of an import sat in a branch the build dropped (a message behind `DEV`,
// core/dev.ts) keeps that import as a bare `import "./x.js"` (`require("./x.cjs")` in CommonJS):
// rolldown keeps a module's imports in a build of one file per module. The package runs nothing
// for its side effects (package.json `"sideEffects": false`), so such an import does nothing but
// make esbuild warn in a user's build ("Ignoring this import because … was marked as having no
// side effects"; test/compat/packed/bundle-warnings.test.ts). It is blanked, line kept, so the
// source map's lines still match.
const BARE = /^(?:import "\.{1,2}\/[^"]+\.js";|require\("\.{1,2}\/[^"]+\.cjs"\);)$/gm;
for (const entry of readdirSync('dist', { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !/\.c?js$/.test(entry.name)) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  if (BARE.test(text)) writeFileSync(file, text.replace(BARE, ''));
  BARE.lastIndex = 0;
}
