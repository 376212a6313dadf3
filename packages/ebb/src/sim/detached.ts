/**
 * A deep copy of a simulator's result, made before it is returned.
 *
 * Why: under Node.js 24.21 (V8's Turbofan), a result object built by an object literal at the
 * end of a simulator's long loop was seen to share its number fields with the next result built
 * at the same place: a result already returned to the caller changed its `collisionProbability`,
 * `throughput` and latency fields when the simulator ran again. Node 20 does not do this, and
 * neither does Node 24 with `--no-turbofan`; `sim/results.test.ts` checks it on every runtime the
 * unit tests run on. A structured clone allocates fresh values the engine cannot share, at a cost
 * that is nothing beside a simulation.
 * @internal
 */
export function detached<T>(result: T): T {
  return structuredClone(result);
}
