// The four limit algorithms, one module each, under the name the limiter and its tests import.
export { type AimdOptions, aimd } from './aimd.js';
export { type BdpOptions, bdp } from './bdp.js';
export { type Gradient2Options, gradient2 } from './gradient2.js';
export type { LimitAlgorithm, LimitSample } from './limit-algorithm.js';
export { type VegasOptions, vegas } from './vegas.js';
