/** A run cannot start or continue. `usage` marks errors the user fixes by changing the command. */
export class RunnerError extends Error {
  override readonly name = "RunnerError";
  readonly usage: boolean;

  constructor(message: string, options: { usage?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.usage = options.usage ?? false;
  }
}
