import { ProbotOctokit } from "probot";
import pino from "pino";

/** Probot's Octokit with throttling and retries off, so tests see every request at once. */
export const TestOctokit = ProbotOctokit.defaults(
  (options: Record<string, unknown> & { throttle?: object }) => ({
    ...options,
    retry: { enabled: false },
    throttle: { ...options?.throttle, enabled: false },
  }),
);

/** A token-authenticated client for code that takes a GitHub client directly. */
export function testOctokit(): InstanceType<typeof ProbotOctokit> {
  return new TestOctokit({ auth: { token: "test-token" }, log: pino({ level: "silent" }) });
}
