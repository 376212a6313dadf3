// cockatiel 4, resolved from this folder's node_modules (bench/subjects.mjs imports it by path).
export * from 'cockatiel-4';
