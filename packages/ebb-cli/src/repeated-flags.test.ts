import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { refuseRepeatedFlags } from './repeated-flags.js';

/** A program with a subcommand of each kind of flag, its errors thrown rather than printed. */
function program(): { root: Command; seen: Record<string, unknown>[] } {
  const seen: Record<string, unknown>[] = [];
  const root = new Command('ebb').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  root
    .command('run')
    .exitOverride()
    .argument('[command...]')
    .option('--initial <duration>')
    .option('--max-attempts <n>')
    .addOption(new Option('--curve <curve>').choices(['exponential', 'linear']))
    .option('--quiet')
    .action((_: string[], flags: Record<string, unknown>) => {
      seen.push(flags);
    });
  refuseRepeatedFlags(root);
  return { root, seen };
}

describe('refuseRepeatedFlags', () => {
  it('refuses a value flag given twice, naming the flag and both values', async () => {
    const { root, seen } = program();
    await expect(root.parseAsync(['run', '--initial', '1s', '--initial', '2s'], { from: 'user' })).rejects.toThrow(
      '--initial given twice ("1s", then "2s"); give it once',
    );
    await expect(root.parseAsync(['run', '--curve', 'linear', '--curve=linear'], { from: 'user' })).rejects.toThrow(
      '--curve given twice ("linear", then "linear"); give it once',
    );
    expect(seen).toEqual([]);
  });

  it('passes a flag given once, and keeps the checks the flag had (choices)', async () => {
    const { root, seen } = program();
    await root.parseAsync(['run', '--initial', '1s', '--max-attempts', '3', '--curve', 'linear'], { from: 'user' });
    expect(seen).toEqual([{ initial: '1s', maxAttempts: '3', curve: 'linear' }]);
    await expect(root.parseAsync(['run', '--curve', 'cubic'], { from: 'user' })).rejects.toThrow(
      /argument 'cubic' is invalid\. Allowed choices are exponential, linear\./,
    );
  });

  it('lets a flag without a value be repeated, and reads each parse afresh', async () => {
    const { root, seen } = program();
    await root.parseAsync(['run', '--quiet', '--quiet', '--initial', '1s'], { from: 'user' });
    await root.parseAsync(['run', '--initial', '2s'], { from: 'user' });
    expect(seen).toEqual([{ quiet: true, initial: '1s' }, { initial: '2s' }]);
  });
});
