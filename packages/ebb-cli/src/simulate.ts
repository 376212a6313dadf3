// `ebb simulate <model>`: the commands and their flags. Each model lives in its own file
// (simulate-ethernet.ts, -wifi, -contention, -overload, -delays, -resilience); what they share is
// in simulate-common.ts. The models' functions are re-exported here, where the tests import them.
import { type Command, Option } from 'commander';
import { emit, type SimulateIO } from './simulate-common.js';
import { BROOKER, type ContentionFlags, contentionModel } from './simulate-contention.js';
import { type DelaysFlags, delaysModel } from './simulate-delays.js';
import { type EthernetFlags, ethernetModel } from './simulate-ethernet.js';
import { type FleetBreakerFlags, fleetBreakerModel } from './simulate-fleet-breaker.js';
import { type OverloadFlags, overloadModel } from './simulate-overload.js';
import {
  type BrownoutFlags,
  brownoutModel,
  type OutageFlags,
  outageModel,
  type SlowTailFlags,
  slowTailModel,
} from './simulate-resilience.js';
import { type WifiFlags, wifiModel } from './simulate-wifi.js';
import { UsageError } from './usage-error.js';

export {
  type OutputFlags,
  parseCount,
  parseRange,
  planned,
  type SimulateIO,
  type Simulation,
  seedOf,
} from './simulate-common.js';
export { type ContentionFlags, contentionModel, strategiesFrom } from './simulate-contention.js';
export { type DelaysFlags, delaysModel } from './simulate-delays.js';
export { type EthernetFlags, ethernetModel } from './simulate-ethernet.js';
export { type FleetBreakerFlags, fleetBreakerModel } from './simulate-fleet-breaker.js';
export { budgetFrom, type OverloadFlags, overloadModel, rateFrom } from './simulate-overload.js';
export { type WifiFlags, wifiModel } from './simulate-wifi.js';

function output(cmd: Command): Command {
  return cmd
    .option('--json', 'print one JSON document')
    .option('--svg <file>', 'write the chart as SVG')
    .option('--png <file>', 'write the chart as PNG')
    .option('--seed <n>', 'seed of the simulation (default 1)');
}

/** Adds `ebb simulate <model>` to the program. */
export function registerSimulate(root: Command, env: { readonly out: (text: string) => void }): void {
  const io: SimulateIO = { out: env.out, progress: process.stderr };
  const quiet = { writeOut: env.out, writeErr: () => {}, outputError: () => {} };
  const simulate = root
    .command('simulate')
    .description(
      'simulate backoff on a shared channel, among contending clients, or against an overloaded service; and the breaker (local and fleet-wide), the concurrency limit and hedging',
    )
    .configureOutput(quiet)
    .exitOverride()
    .argument('[model]', 'ethernet, wifi, contention, overload, delays, outage, brownout, slow-tail or fleet-breaker')
    .addHelpText(
      'after',
      `
A model's options: ebb help simulate <model> (or ebb simulate help <model>, or
ebb simulate <model> --help). Every model prints a table, or one JSON document with --json,
and writes its chart with --svg FILE or --png FILE.`,
    )
    // Without a model, the list of models (as `--help` prints it), rather than an error.
    .action((model: string | undefined) => {
      if (model !== undefined) {
        throw new UsageError(
          `unknown model "${model}"; models: ethernet, wifi, contention, overload, delays, outage, brownout, slow-tail, fleet-breaker`,
        );
      }
      env.out(simulate.helpInformation());
    });
  const sub = (name: string, description: string): Command =>
    output(simulate.command(name).description(description)).configureOutput(quiet).exitOverride();

  sub('ethernet', 'slotted CSMA/CD with truncated binary exponential backoff (IEEE 802.3), in saturation')
    .option('--stations <n>', 'stations, each always with a frame (default 32)')
    .option('--ceiling <n>', 'collisions after which the window stops doubling (default 10)')
    .option('--attempt-limit <n>', 'transmissions of a frame before it is dropped (default 16)')
    .option('--frame-slots <n>', 'slots a frame occupies (default 1)')
    .option('--think <slots>', 'mean idle slots between frames (default 0: saturated; 32 with --sweep-ceiling)')
    .option('--slots <n>', 'slots to simulate (default 1e6)')
    .option('--sweep-ceiling <range>', 'one run per ceiling, e.g. 1..16')
    .option('--sweep-stations <range>', 'one run per station count, e.g. 2..64:2')
    .action((flags: EthernetFlags) => emit(io, flags, () => ethernetModel(flags, io)));

  sub('wifi', "802.11 DCF in saturation, beside Bianchi's analytic model")
    .option('--stations <n>', 'stations, each always with a frame (default 10)')
    .option('--cw-min <n>', 'CWmin: first window is CWmin+1 slots (default 31)')
    .option('--stages <n>', 'm: the window doubles m times (default 5)')
    .option('--retry-limit <n>', 'transmissions of a frame before it is dropped (default: none)')
    .option('--slots <n>', 'backoff slots to simulate (default 1e6)')
    .option('--sweep-stations <range>', 'one run per station count, e.g. 5..50:5')
    .action((flags: WifiFlags) => emit(io, flags, () => wifiModel(flags, io)));

  sub('contention', "Brooker's experiment: N clients, one optimistic-concurrency write each")
    .option('--clients <n>', 'clients (default 50)')
    .option('--sweep-clients <range>', 'one run per client count, e.g. 10..50:10')
    .option('--runs <n>', 'runs to average (default 100)')
    .option('--strategies <list>', `comma-separated: ${BROOKER.join(', ')} or preset ids (default: all five)`)
    .option('--base <duration>', "the post's base (default 5ms)")
    .option('--cap <duration>', "the post's cap (default 2s)")
    .action((flags: ContentionFlags) => emit(io, flags, () => contentionModel(flags, io)));

  sub('overload', "a fleet against a service that is down, then recovers: through ebb's retry()")
    .option('--clients <n>', 'clients, one request each (default 1000)')
    .option('--capacity <n>', 'requests the server completes per second (default 100)')
    .option('--queue <n>', 'requests that may wait; more are shed with a 503 (default 100)')
    .option('--outage <duration>', 'the server answers 503 until then (default 10s)')
    .option('--start-window <duration>', 'first requests spread over this window (default 1s)')
    .option('--retry-after <duration>', 'Retry-After sent with shed requests (default: none)')
    .option('--strategies <list>', `comma-separated: ${BROOKER.join(', ')} or preset ids (default: exponential,full)`)
    .option('--base <duration>', 'base of the named strategies (default 100ms)')
    .option('--cap <duration>', 'cap of the named strategies (default 10s)')
    .option('--max-attempts <n>', 'attempts per client, for every strategy (default: the strategy’s own)')
    .option('--attempt-timeout <duration>', 'the time limit of each attempt (a timeout inside the retry)')
    .option('--budget <kind>', 'token[:MAX[:RATIO]], ratio[:SHARE] or aws-quota (from ebb/rate)')
    .addOption(new Option('--rate <kind>', 'a rate controller from ebb/rate').choices(['adaptive', 'aws-adaptive']))
    .option('--horizon <duration>', 'stop simulating then (default 10m)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: OverloadFlags) => emit(io, flags, () => overloadModel(flags, io)));

  sub('delays', 'the sampled distribution of a policy’s waits against describePolicy()')
    .argument('[preset]', 'a preset id (see ebb schedule --list)')
    .option('--runs <n>', 'runs to sample (default 10000)')
    .option('--attempts <n>', 'rows (default 10)')
    .option('--initial <duration>', 'first delay (exponential, linear), e.g. 100ms')
    .option('--multiplier <x>', 'growth per failure (exponential)')
    .option('--jitter <kind>', 'none | full | equal | decorrelated | proportional:F | additive:DURATION')
    .option('--max-delay <duration>', 'hard cap on every delay')
    .option('--max-attempts <n>', 'calls in all, the first included')
    .option('--ceiling <n>', 'failure count after which delays stop growing')
    .action((preset: string | undefined, flags: DelaysFlags) =>
      emit(io, flags, () => delaysModel({ ...flags, ...(preset === undefined ? {} : { preset }) }, io)),
    );

  sub('outage', 'workers through an outage: without and with a circuit breaker (ebb/resilience)')
    .option('--workers <n>', 'workers calling in a loop (default 10)')
    .option('--think <duration>', 'pause between a worker’s calls (default 20ms)')
    .option('--outage-start <duration>', 'the service goes down then (default 5s)')
    .option('--outage <duration>', 'for this long (default 30s)')
    .option('--duration <duration>', 'the workers call for this long (default 60s)')
    .option('--failures <n>', 'consecutive failures that open the breaker (default 5)')
    .option('--open <duration>', 'the first open period (default 1s); it doubles on each failed probe')
    .option('--open-max <duration>', 'the longest open period (default 8s)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: OutageFlags) => emit(io, flags, () => outageModel(flags, io)));

  sub('brownout', 'a thrashing server at 1.5 × capacity: without and with an adaptive concurrency limit')
    .option('--capacity <n>', 'requests the server works on at once (default 8)')
    .option('--service <duration>', 'time of a request while nobody waits (default 100ms)')
    .option('--slowdown <x>', 'how much slower once more than capacity wait (default 10)')
    .option('--load <x>', 'offered load, a multiple of capacity (default 1.5)')
    .option('--duration <duration>', 'calls arrive for this long (default 60s)')
    .option('--algorithms <list>', 'comma-separated: aimd, vegas, gradient2, bdp (default: all four)')
    .option('--initial-limit <n>', 'each algorithm’s first limit (default 4)')
    .option('--max-limit <n>', 'cap every algorithm’s limit (default: each algorithm’s own)')
    .option('--max-queue <n>', 'the limit’s queue (default 16)')
    .option('--max-wait <duration>', 'longest wait in the limit’s queue (default 2 × service)')
    .option('--bin <duration>', 'width of the time series bins (default 1s)')
    .action((flags: BrownoutFlags) => emit(io, flags, () => brownoutModel(flags, io)));

  sub('slow-tail', 'a slow tail: without and with hedging, and hedging under an all-slow overload')
    .option('--workers <n>', 'workers calling in a loop (default 8)')
    .option('--service <duration>', 'time of a fast response (default 10ms)')
    .option('--spread <σ>', 'fast responses log-normal around --service with this σ (default 0: all equal)')
    .option('--slow-share <x>', 'share of slow responses (default 0.05)')
    .option('--slow-factor <x>', 'how much slower they are (default 20)')
    .option('--duration <duration>', 'the workers call for this long (default 60s)')
    .option('--delay <duration>', 'a fixed hedging delay (default: learned)')
    .option('--percentile <x>', 'without --delay: hedge after this latency percentile (default 0.95)')
    .option('--budget <x>', 'hedges at most this share of calls, or 1 a second if more (default 0.05)')
    .action((flags: SlowTailFlags) => emit(io, flags, () => slowTailModel(flags, io)));

  sub(
    'fleet-breaker',
    'a fleet through an outage: one shared circuit breaker (ebb/redis) against one local breaker each',
  )
    .option('--processes <n>', 'processes calling the service, at most 1000 (default 100)')
    .option('--calls-per-second <x>', 'calls a second of each process, from 0.1 to 100 (default 10)')
    .option('--outage-start <duration>', 'the service goes down for everyone then (default 5s)')
    .option('--outage <duration>', 'for this long (default 10s)')
    .option('--duration <duration>', 'simulated time, at most 10m (default 30s)')
    .option('--partitioned <n>', 'processes whose every call fails throughout, the service fine (default 1)')
    .option('--min-members <n>', 'members that must see the failure rate to open the fleet (default 2)')
    .option(
      '--member-failure-rate <x>',
      'more than this share of the reporting members must see it too, from 0 up to 1 (default 0.5)',
    )
    .action((flags: FleetBreakerFlags) => emit(io, flags, () => fleetBreakerModel(flags, io)));
}
