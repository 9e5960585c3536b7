import { execFile } from "node:child_process";
import { LabError } from "./lab-error.ts";

/**
 * Runs `ip [-n NETNS] ARGS…` (argv, never a shell) and resolves with its stdout; a LabError with
 * the command and ip's own message when it fails.
 */
export function runIp(
  args: string[],
  options: { netns?: string; allowFailure?: boolean } = {},
): Promise<string> {
  const argv = options.netns ? ["-n", options.netns, ...args] : args;
  return new Promise((resolve, reject) => {
    execFile("ip", argv, { timeout: 10_000 }, (error, stdout, stderr) => {
      if (!error || options.allowFailure) return resolve(stdout);
      reject(
        new LabError(`ip ${argv.join(" ")} failed: ${stderr.trim() || error.message}`, {
          code: "LabCommandFailed",
          cause: error,
        }),
      );
    });
  });
}
