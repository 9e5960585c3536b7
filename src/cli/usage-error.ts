/** The command line is wrong: exit status 2 with a one-line reason that says how to fix it. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
