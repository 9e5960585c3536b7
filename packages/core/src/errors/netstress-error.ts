/**
 * The base of the bot's own errors: a `code` that drives control flow (retry, wait, tell the user),
 * `expected` for failures with a message a user can act on (a bad payload, a missing setting) as
 * opposed to bugs, and the `cause` it wraps. The CLI prints an expected error as one line and
 * anything else with its stack.
 */
export class NetstressError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly expected: boolean;

  constructor(message: string, options: { code: Code; expected?: boolean; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.expected = options.expected ?? true;
  }
}
