import { checkKeys } from '../core/validate.js';

/**
 * Runs a local constructor only for its option checks, so a shared structure accepts exactly what
 * its local twin accepts, and reports a bad option under its own name.
 */
export function validateAs<T>(where: string, local: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) {
      error.message = error.message.split(local).join(where);
    }
    throw error;
  }
}

/** Splits an options object into the shared part and the rest, rejecting nothing. */
export function pick(o: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** Options `ebb/redis` renamed for 1.0, with their new names: the old name is refused with the new one. */
const RENAMED: Readonly<Record<string, readonly [name: string, about: string]>> = {
  timeoutMs: ['commandTimeoutMs', 'the time limit of one Redis call, in ms; default 100'],
};

/**
 * `checkKeys` for the options of `ebb/redis`: first an option that was renamed, refused with a
 * `TypeError` naming the new name; then every other unknown option.
 */
export function checkRedisKeys(where: string, options: object, known: readonly string[]): void {
  // A client passed where the options go (sharedTokenBudget(redis, 'api')) would be read by its
  // own keys ("unknown option `options`").
  const o = options as { evalsha?: unknown; evalSha?: unknown; sendCommand?: unknown };
  if (typeof o.evalsha === 'function' || typeof o.evalSha === 'function' || typeof o.sendCommand === 'function') {
    throw new TypeError(`${where}: got a Redis client where the options go. Pass { client, name, … }.`);
  }
  for (const key of Object.keys(options)) {
    const now = RENAMED[key];
    if (now !== undefined && !known.includes(key)) {
      throw new TypeError(`${where}: the option \`${key}\` was renamed: pass \`${now[0]}\` instead (${now[1]}).`);
    }
  }
  checkKeys(where, options, known);
}
