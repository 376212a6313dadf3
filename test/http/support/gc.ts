import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, on demand: the flag is set at run time, and a new context reads the
 * `gc` function it exposes (the test process was not started with `--expose-gc`).
 */
setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;
