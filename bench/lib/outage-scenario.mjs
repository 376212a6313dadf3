// The outage scenario, shared by figures/outage.mjs (which runs it) and run.mjs (which
// describes it): CLIENTS clients against one server that fails every request for DOWN_MS, then
// serves the first CAPACITY requests of each second; every response takes LATENCY_MS.
export const CLIENTS = 1_000;
export const DOWN_MS = 30_000;
export const CAPACITY = 100;
export const LATENCY_MS = 10;
