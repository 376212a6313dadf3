// Builds the workspace package in the current directory from its tsdown.config.ts, through
// tsdown's API rather than its command line, and prints only warnings and errors.
//
// Why not `tsdown` itself: its command line prints a line for every file written (about 880 for
// the library: two formats, declarations, maps, the browser build) and, on Node.js before 22.18,
// a notice that its next minor release drops Node.js 20. The workspace pins tsdown exactly
// (package.json), so that notice does not apply until the pin moves (docs/dev/install.md says
// what moving it takes); the listing buried anything that mattered in every `npm ci`.
// Warnings fail the build, as `tsdown` does by default (--fail-on-warn).
import { build } from 'tsdown';

await build({ logLevel: 'warn', failOnWarn: true });
