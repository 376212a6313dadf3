// Module resolution hooks (registered by snapshot-hooks.mjs): a bare `ebb` or `ebb/<subpath>`
// resolves as a self-reference from inside the snapshot, which carries ebb's package.json, so the
// snapshot's `exports` map decides the file.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

let parentURL;

export function initialize({ dir }) {
  parentURL = pathToFileURL(join(dir, 'dist', 'index.js')).href;
}

export function resolve(specifier, context, nextResolve) {
  if (parentURL && (specifier === 'ebb' || specifier.startsWith('ebb/'))) {
    return nextResolve(specifier, { ...context, parentURL });
  }
  return nextResolve(specifier, context);
}
