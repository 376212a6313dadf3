import type { Command } from 'commander';
import { UsageError } from './usage-error.js';

/**
 * Makes every flag that takes a value, in `cmd` and its subcommands, refuse to be given twice
 * (`--initial 1s … --initial 2s`): commander would keep the last value without a word, and a
 * policy or a run built from part of what was typed surprises. No flag of ebb is meant to be
 * repeated; a list goes in one value, separated by commas (`--retry-on-exit 1,75`,
 * `--strategies full,none`). Flags without a value (`--json`, `--quiet`) may be repeated.
 * Call it once the commands have all their options.
 */
export function refuseRepeatedFlags(cmd: Command): void {
  for (const option of cmd.options) {
    if (!option.required && !option.optional) continue;
    const parse = option.parseArg;
    const key = option.attributeName();
    option.argParser((value: string, previous: unknown) => {
      if (cmd.getOptionValueSource(key) === 'cli') {
        const first = typeof previous === 'string' ? ` ("${previous}", then "${value}")` : '';
        throw new UsageError(`${option.long ?? option.flags} given twice${first}; give it once`);
      }
      return parse === undefined ? value : parse(value, previous);
    });
  }
  for (const sub of cmd.commands) refuseRepeatedFlags(sub);
}
