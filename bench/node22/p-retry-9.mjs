// p-retry 9, resolved from this folder's node_modules (bench/subjects.mjs imports it by path).
export { default } from 'p-retry-9';
