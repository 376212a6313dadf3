/**
 * A mistake in how the command was called: the CLI prints its message on one line of stderr,
 * without a stack trace, and exits with status 2.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
