/**
 * A deep copy of a simulator's result, made before it is returned.
 *
 * Why: under Node.js 24.21 (V8 13.6), a result object built by an object literal at the end of a
 * simulator's long loop was seen to share its number fields with the next result built at the
 * same place: a result already returned to the caller changed its `collisionProbability`,
 * `throughput` and latency fields when the simulator ran again. The compiler at fault is
 * **Maglev**, V8's mid-tier, not Turbofan (as first recorded here): its escape analysis, in code
 * entered by on-stack replacement, let two result objects end up with one heap-number box.
 * Without this copy, `sim/results.test.ts`'s ethernet case fails on Node 24.21 in 4 runs of 4
 * with `--no-turbofan` (only Maglev optimizes), 0 of 4 with `--no-maglev`; `ethernet.test.ts`
 * failed 6 of 6 with `--no-turbofan`, 5 of 6 by default and 0 of 6 with `--no-maglev`,
 * `--no-maglev-escape-analysis` or `--no-maglev-osr`. Node 20 (V8 11.3) is not affected. A
 * structured clone allocates fresh values the engine cannot share, at a cost that is nothing
 * beside a simulation.
 * @internal
 */
export function detached<T>(result: T): T {
  return structuredClone(result);
}
