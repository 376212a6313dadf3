// Types of bundle-size.mjs for the TypeScript tests that bundle through it.
import type { BuildResult, Plugin } from 'esbuild';

/** What a bundle weighs: its code, minified bytes, gzip -9 bytes, and esbuild's result. */
export interface Bundled {
  readonly code: string;
  readonly minified: number;
  readonly gzip: number;
  readonly result: BuildResult;
}

/** `contents` (an ES module resolved from `resolveDir`) bundled by esbuild as the size figures bundle. */
export function bundleSize(
  contents: string,
  options?: {
    readonly resolveDir?: string;
    readonly define?: Record<string, string>;
    readonly conditions?: readonly string[];
    readonly plugins?: readonly Plugin[];
    readonly minify?: boolean;
    readonly extra?: Record<string, unknown>;
  },
): Promise<Bundled>;

/** The module `entry` with the source `contents`, bundled by Rollup and terser: its sizes. */
export function rollupSize(
  entry: string,
  contents: string,
  plugins?: readonly unknown[],
): Promise<{ readonly minified: number; readonly gzip: number }>;
