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
