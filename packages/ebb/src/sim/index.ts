/**
 * ebb/sim — simulators that run ebb's own backoff code, and the analytic models they are
 * checked against.
 *
 * @packageDocumentation
 */

export { type BoundsRow, expectedBackoff, scheduleBounds } from './analytic.js';
export { type BianchiOptions, type BianchiResult, bianchi, type DcfTiming } from './bianchi.js';
export {
  type BreakerOutageBin,
  type BreakerOutageOptions,
  type BreakerOutageResult,
  type OpenPeriod,
  simulateBreakerOutage,
} from './breaker-outage.js';
export {
  type BrownoutBin,
  type BrownoutOptions,
  type BrownoutResult,
  simulateBrownout,
} from './brownout.js';
export {
  type BrookerOptions,
  type BrookerStrategy,
  brookerStrategies,
  type ContentionOptions,
  type ContentionResult,
  simulateContention,
} from './contention.js';
export { type DelayDistributionOptions, type DelayDistributionRow, delayDistribution } from './delays.js';
export {
  type BackoffByCollisions,
  type EthernetOptions,
  type EthernetResult,
  ethernetCeilingSweep,
  simulateEthernet,
} from './ethernet.js';
export type { LatencySummary } from './latency.js';
export type { NetworkModel } from './network.js';
export {
  estimateOverloadRequests,
  type OverloadBin,
  type OverloadOptions,
  type OverloadResult,
  type SimEnvironment,
  simulateOverload,
} from './overload.js';
export type { ProgressCallback } from './progress.js';
export {
  type SharedRateCostOptions,
  type SharedRateCostResult,
  simulateSharedRateCost,
} from './shared-rate-cost.js';
export { type SlowTailOptions, type SlowTailResult, simulateSlowTail } from './slow-tail.js';
export {
  simulateWifi,
  type WifiOptions,
  type WifiResult,
} from './wifi.js';
