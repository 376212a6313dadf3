export { flagMessage, main, program } from './cli.js';
export { formatDuration, parseDuration, parseNumber } from './duration.js';
export { schedule } from './schedule.js';
export { UsageError } from './usage-error.js';
