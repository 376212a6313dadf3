/**
 * Both signals at once: a signal that aborts, with the reason, when the first of `a` and `b` does.
 *
 * Not `AbortSignal.any`: on Node.js 20 each signal it makes stays in its sources' list of
 * dependants until they abort (nodejs/node#55351), so a long-lived source — a service's shutdown
 * signal passed to every request — kept one entry per request for good (about 80 B each,
 * measured: 100,000 requests, 100,000 entries). Nor one listener per combined signal: a combined
 * signal lives as long as something holds it (a body still read), so a source shared by many
 * calls would gather listeners until a collection, and Node.js warns of a leak from the 11th.
 *
 * Here a source carries one listener, however many combined signals depend on it; that listener
 * reaches each dependant's controller only through a `WeakRef` (the signal keeps its controller
 * alive). A dependant leaves both sources' lists when either aborts or when it is collected —
 * once nothing (a `fetch` in flight, a body still read) holds it — and a source whose list is
 * empty loses the listener. @internal
 */
export function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const signal = controller.signal;
  if (a.aborted || b.aborted) {
    controller.abort((a.aborted ? a : b).reason);
    return signal;
  }
  const link: Link = [new WeakRef(controller), a, b];
  for (const source of [a, b]) {
    const links = dependants.get(source);
    if (links) links.add(link);
    else {
      dependants.set(source, new Set([link]));
      source.addEventListener('abort', aborted);
    }
  }
  // The controller lives as long as its signal does (whoever holds the signal: a fetch, a body
  // still read), not longer: the sources reach it only through the WeakRef.
  controllerOf.set(signal, controller);
  unhook.register(signal, link);
  return signal;
}

/** One combined signal: its controller (weakly) and its two sources. */
type Link = readonly [WeakRef<AbortController>, AbortSignal, AbortSignal];

/** Each source's live dependants; a source is in the map exactly while it carries `aborted`. */
const dependants = /* @__PURE__ */ new WeakMap<AbortSignal, Set<Link>>();

/** Each combined signal's controller, held by the signal (a WeakMap's entry lives as its key does). */
const controllerOf = /* @__PURE__ */ new WeakMap<AbortSignal, AbortController>();

/** Takes a collected combined signal off its sources' lists (a no-op once either aborted). */
const unhook = /* @__PURE__ */ new FinalizationRegistry<Link>(drop);

/** A dependant aborted or was collected: it leaves both sources' lists, and a source left with none loses the listener. */
function drop(link: Link): void {
  for (const source of [link[1], link[2]]) {
    const links = dependants.get(source);
    if (links?.delete(link) && links.size === 0) {
      dependants.delete(source);
      source.removeEventListener('abort', aborted);
    }
  }
}

/** A source aborted: every live dependant leaves both lists and aborts with the source's reason. */
function aborted(this: AbortSignal): void {
  for (const link of dependants.get(this) ?? []) {
    drop(link);
    link[0].deref()?.abort(this.reason);
  }
}
