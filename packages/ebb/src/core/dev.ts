/**
 * Whether this build writes its messages in full: for a bad option, the option, the value it
 * got, what it must be and how to fix it (`RangeError: exponential(): expected \`multiplier\` to
 * be a finite number >= 1, got -2. Use 1 for a constant delay, or a growth factor such as 2.`).
 *
 * The package ships three builds (docs/retry.md, "What it weighs"): Node's and the browser's,
 * where this is `true`, and a browser build for production (package.json `exports`, condition
 * `production` under `browser`) where it is `false`. There every message is short — where, the
 * option and the value (``exponential(): `multiplier` -2``), still a `TypeError` or a `RangeError`
 * — and the build tool drops the long texts: each message site reads `DEV` and the constant is
 * folded into the output (tsdown.config.ts), as React and Vue do with `process.env.NODE_ENV`.
 * Nothing else depends on it: behaviour is the same in every build.
 * @internal
 */
export const DEV: boolean = true;
