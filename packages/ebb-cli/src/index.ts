export { type Environment, flagMessage, main, program } from './cli.js';
export { DEFAULT_SETTINGS, type DemoSettings, demo, demoSettings, type RunSummary, registerDemo } from './demo.js';
export { formatDuration, parseDuration, parseNumber } from './duration.js';
export { EXIT_TIMEOUT, type RunFlags, type RunIO, runCommand, STOP_SIGNALS, type StopSignal } from './run.js';
export { schedule } from './schedule.js';
export { registerSimulate } from './simulate.js';
export { UsageError } from './usage-error.js';
