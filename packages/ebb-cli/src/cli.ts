import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { findPreset } from 'ebb';
import { registerDemo } from './demo.js';
import { CUSTOM_DEFAULTS } from './policy.js';
import { refuseRepeatedFlags } from './repeated-flags.js';
import { type RunFlags, type RunIO, runCommand, STOP_SIGNALS } from './run.js';
import { MAX_ROWS, type ScheduleFlags, schedule } from './schedule.js';
import { registerSimulate } from './simulate.js';
import { UsageError } from './usage-error.js';

/** This package's version, read from its package.json (one level above both src/ and dist/). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** Library option names as the CLI spells them, so that validation errors name the flag typed. */
const FLAG_OF: Record<string, string> = {
  initialDelayMs: '--initial',
  multiplier: '--multiplier',
  incrementMs: '--increment',
  delayMs: '--delay',
  slotMs: '--slot',
  cwMin: '--cw-min',
  cwMax: '--cw-max',
  maxDelayMs: '--max-delay',
  maxIntervalMs: '--max-interval',
  maxAttempts: '--max-attempts',
  maxElapsedMs: '--max-elapsed',
  ceiling: '--ceiling',
  factor: '--jitter proportional:FACTOR',
  maxMs: '--jitter additive:DURATION',
  // ebb simulate's (each name is one model's option, or the same flag in every model that has it).
  baseMs: '--base',
  capMs: '--cap',
  binMs: '--bin',
  capacity: '--capacity',
  capacityPerSecond: '--capacity',
  clients: '--clients',
  durationMs: '--duration',
  frameSlots: '--frame-slots',
  horizonMs: '--horizon',
  load: '--load',
  outageMs: '--outage',
  outageStartMs: '--outage-start',
  queueLimit: '--queue',
  retryAfterMs: '--retry-after',
  serviceMs: '--service',
  serviceSigma: '--spread',
  slots: '--slots',
  slowFactor: '--slow-factor',
  slowdown: '--slowdown',
  startWindowMs: '--start-window',
  stations: '--stations',
  thinkMs: '--think',
  thinkSlots: '--think',
  workers: '--workers',
  attemptTimeoutMs: '--attempt-timeout',
};

/**
 * Rewrites "exponential(): expected `multiplier` to be …" as "--multiplier must be …", and
 * "exponential(): `maxDelayMs` (10 ms) is below the first wait (1 s) …" as "--max-delay (10 ms)
 * is below the first wait (1 s) …".
 */
export function flagMessage(message: string): string {
  const m = /^[\w.]+\(\): expected `([\w.]+)` to be (.*)$/s.exec(message);
  const flag = m && FLAG_OF[m[1] as string];
  if (flag) return `${flag} must be ${m[2]}`;
  const below =
    /^[\w.]+\(\): `(\w+)` (\(.*\) is below the first wait \(.*?\), so every wait would be .*?\.(?=\s|$))/s.exec(
      message,
    );
  const capFlag = below && FLAG_OF[below[1] as string];
  return capFlag ? `${capFlag} ${below[2]} Raise it, or lower the first wait (--initial, --delay).` : message;
}

/** The policy options shared by `schedule` and `run`. */
function policyOptions(cmd: Command): Command {
  return cmd
    .option('--preset <id>', 'a preset id (see ebb schedule --list); default: default')
    .addOption(new Option('--curve <curve>', 'custom curve').choices(['exponential', 'linear', 'constant', 'slotted']))
    .option('--initial <duration>', 'first delay (exponential, linear), e.g. 100ms')
    .option('--multiplier <x>', 'growth per failure (exponential), e.g. 2')
    .option('--increment <duration>', 'added per failure (linear)')
    .option('--delay <duration>', 'the delay (constant)')
    .option('--slot <duration>', 'slot length (slotted), e.g. 51.2us')
    .option('--cw-min <n>', 'initial contention window, slots - 1 (slotted)')
    .option('--cw-max <n>', 'largest contention window, slots - 1 (slotted)')
    .option(
      '--jitter <kind>',
      'none | full | equal | decorrelated | proportional:F | additive:DURATION (custom curves: full unless given)',
    )
    .option('--max-delay <duration>', 'hard cap on every delay')
    .option('--max-interval <duration>', 'cap on the un-randomized delay (jitter may exceed it)')
    .option(
      '--max-attempts <n>',
      `calls in all, the first included (custom curves: ${CUSTOM_DEFAULTS.maxAttempts} unless given; Infinity retries forever)`,
    )
    .option('--max-elapsed <duration>', 'time budget of the whole operation')
    .option('--ceiling <n>', 'failure count after which delays stop growing')
    .addHelpText(
      'after',
      `
Policy: no flags run ${findPreset('default')?.title};
--preset ID runs another preset (ebb schedule ID too); limit flags alone adjust it; curve flags
(--initial, --delay, --slot, …) build a custom curve, which gets --jitter full and --max-attempts ${CUSTOM_DEFAULTS.maxAttempts}
unless you say otherwise (--jitter none, --max-attempts Infinity, --max-elapsed 10m). ebb schedule
and ebb run take the same policy flags and build the policy from them the same way.
Durations need a unit: 500ms, 1.5s, 2m, 1h, 51.2us.`,
    );
}

/** What the commands need from the outside world. */
export interface Environment {
  /** Receives stdout text. */
  readonly out: (text: string) => void;
  /** `ebb run`'s reports and signals. */
  readonly run: RunIO;
  /** Set by a command that decides the exit status. */
  status: number;
}

/** Builds the `ebb` program. */
export function program(env: Environment): Command {
  const out = env.out;
  const quiet = { writeOut: out, writeErr: () => {}, outputError: () => {} };
  const root = new Command('ebb')
    .description('Exponential backoff done exactly: schedules of real systems, retries, simulations.')
    .version(VERSION, '-V, --version', 'print the version')
    .enablePositionalOptions()
    .helpCommand('help [command] [model]', 'print the help of a command, or of a model of ebb simulate')
    .configureOutput(quiet)
    .exitOverride();

  policyOptions(
    root
      .command('schedule')
      .description('print the exact backoff schedule of a preset or a custom policy')
      .argument('[preset]', 'a preset id (see --list), e.g. google-http-client; the same as --preset')
      .option('--list', 'list the presets')
      .option('--attempts <n>', `rows to print (default 10, at most ${MAX_ROWS})`)
      .option('--json', 'print one JSON document')
      .option('--sample', 'print one concrete randomized run instead')
      .option('--seed <n>', 'seed for --sample (default: random, printed)'),
  )
    .exitOverride()
    .configureOutput(quiet)
    .action((preset: string | undefined, flags: ScheduleFlags) => {
      if (preset !== undefined && flags.preset !== undefined && preset !== flags.preset) {
        throw new UsageError(`two presets: "${preset}" and --preset ${flags.preset}; give one`);
      }
      out(schedule({ ...flags, ...(preset === undefined ? {} : { preset }) }).stdout);
    });

  policyOptions(
    root
      .command('run')
      .description('run a command until it succeeds, backing off between attempts (default policy: default)')
      .usage('[options] -- command [args...]')
      .argument('<command...>', 'the command and its arguments (after --)')
      .option('--attempt-timeout <duration>', "stop an attempt's process group after this long (exit 124)")
      .option('--retry-on-exit <codes>', 'retry only these exit statuses, e.g. 1,75 (default: any non-zero)')
      .option('--kill-after <duration>', 'grace between SIGTERM and SIGKILL when stopping (default 1s)')
      .option('--shell', 'run the command through the shell')
      .option('--quiet', 'do not report attempts on stderr')
      .option('--seed <n>', 'seed of the jitter, as ebb schedule --sample --seed takes (default: random)'),
  )
    .passThroughOptions()
    .exitOverride()
    .configureOutput(quiet)
    .action(async (command: string[], flags: RunFlags) => {
      env.status = await runCommand(flags, command, env.run);
    });
  registerSimulate(root, env);
  registerDemo(root, env);
  refuseRepeatedFlags(root);
  return root;
}

/**
 * `ebb help <command> [model]` and `ebb <command> help [model]` (for a command with models, such
 * as simulate): the command or model whose help to print, a usage error naming what exists when a
 * word names nothing, or undefined when `argv` does not ask for help this way. Commander alone
 * reaches only `ebb help <command>`, and `ebb simulate help overload` would be an error.
 */
export function helpRequest(root: Command, argv: readonly string[]): Command | UsageError | undefined {
  let path: readonly string[];
  if (argv[0] === 'help') path = argv.slice(1);
  else if (argv[1] === 'help' && root.commands.some((c) => c.name() === argv[0] && c.commands.length > 0))
    path = [argv[0] as string, ...argv.slice(2)];
  else return undefined;
  let cmd = root;
  for (const word of path) {
    const sub = cmd.commands.find((c) => c.name() === word);
    if (sub !== undefined) {
      cmd = sub;
      continue;
    }
    const names = cmd.commands.map((c) => c.name()).join(', ');
    if (cmd === root) return new UsageError(`unknown command '${word}'; commands: ${names}`);
    if (names === '') return new UsageError(`ebb ${cmd.name()} has no models: ebb help ${cmd.name()}`);
    return new UsageError(`unknown model '${word}' of ebb ${cmd.name()}; models: ${names}`);
  }
  return cmd;
}

let pipesGuarded = false;

/**
 * Output into a pipe whose reader has gone (`ebb schedule … | head -1`): a quiet exit, not an
 * unhandled 'error' event and its stack trace. Node.js ignores SIGPIPE, so a write to a closed pipe
 * fails with EPIPE instead of killing the process as it kills `cat` or `seq` (status 141).
 * We exit 0, as most CLIs written in Node.js do: the reader stopping early is its choice, not a
 * failure of ebb, and a script under `set -o pipefail` should not fail because of `| head`.
 * Stdout: exit at once, as nothing more can reach the reader. Stderr (the reader of the reports
 * gone, or the terminal hung up: EPIPE, EIO): its errors are dropped, and the work goes on, so that
 * `ebb run` still stops or waits for its command.
 */
function guardPipes(): void {
  if (pipesGuarded) return;
  pipesGuarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`ebb: cannot write to stdout: ${error.message}\n`);
    process.exit(1);
  });
  process.stderr.on('error', () => {});
}

/**
 * Runs the CLI and returns the exit status: 0 on success, 2 on a usage error (one line on
 * stderr, no stack), 1 on anything unexpected.
 */
export async function main(argv: readonly string[]): Promise<number> {
  guardPipes();
  const env: Environment = {
    out: (text) => process.stdout.write(text),
    run: {
      report: (line) => process.stderr.write(`${line}\n`),
      onSignal: (handler) => {
        // SIGQUIT cannot be listened to on Windows (where ebb run cannot stop a process group anyway).
        const signals = STOP_SIGNALS.filter((s) => process.platform !== 'win32' || s !== 'SIGQUIT');
        const listeners = signals.map((signal) => [signal, () => handler(signal)] as const);
        for (const [signal, listener] of listeners) process.on(signal, listener);
        return () => {
          for (const [signal, listener] of listeners) process.off(signal, listener);
        };
      },
    },
    status: 0,
  };
  const root = program(env);
  // Bare `ebb`: the usage, on stderr, and 2, as for any call that names no command.
  if (argv.length === 0) {
    process.stderr.write(root.helpInformation());
    return 2;
  }
  const help = helpRequest(root, argv);
  if (help instanceof UsageError) {
    process.stderr.write(`ebb: ${help.message}\n`);
    return 2;
  }
  if (help !== undefined) {
    // outputHelp, not helpInformation: it adds each command's addHelpText (the policy rules, how to reach a model).
    help.outputHelp();
    return 0;
  }
  try {
    await root.parseAsync(argv, { from: 'user' });
    return env.status;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) {
        return 0;
      }
      if (error.code === 'commander.help') {
        // Help shown for a call that is not complete (`ebb help` alone): on stderr, exit 2.
        process.stderr.write(root.helpInformation());
        return 2;
      }
      process.stderr.write(`ebb: ${error.message.replace(/^error: /, '')}\n`);
      return 2;
    }
    if (error instanceof UsageError || error instanceof TypeError || error instanceof RangeError) {
      process.stderr.write(`ebb: ${flagMessage(error.message)}\n`);
      return 2;
    }
    process.stderr.write(`ebb: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
