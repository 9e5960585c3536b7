import { CommanderError } from "commander";
import { NetstressError } from "@netstress/core/errors/netstress-error.ts";
import { buildProgram } from "./program.ts";

/**
 * Entry of `netstress`. Exit status: 0 nothing blocking failed, 1 a blocking test failed (or the
 * analysis concluded failure), 2 usage or infrastructure error, with a one-line reason on stderr
 * (a stack trace only for errors nobody expected).
 */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const program = await buildProgram(argv);
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander already printed help or the problem; --help and --version are not errors.
      return error.exitCode === 0 ? 0 : 2;
    }
    const reason =
      error instanceof NetstressError && error.expected
        ? error.message
        : `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    process.stderr.write(`netstress: ${reason.split("\n").join("\n  ")}\n`);
    return 2;
  }
}
