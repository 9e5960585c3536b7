import { readGitHubApiError } from "../trust/github-api-error.ts";
import type { GitHubWriteBudget } from "./github-write-budget.ts";

const MAX_ATTEMPTS = 5;

/**
 * Performs one content-creating GitHub request within the shared budget. When GitHub answers 403
 * or 429 with `retry-after`, or with `x-ratelimit-remaining: 0`, every process pauses for as long
 * as GitHub asked and the request is tried again; other errors are thrown unchanged.
 */
export async function githubWrite<T>(budget: GitHubWriteBudget, request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await budget.acquire();
    try {
      return await request();
    } catch (error) {
      const wait = rateLimitWaitMs(error);
      if (wait === undefined || attempt >= MAX_ATTEMPTS) throw error;
      await budget.pause(wait);
    }
  }
}

/** How long GitHub asked us to wait, if the error is a rate-limit answer. */
export function rateLimitWaitMs(error: unknown, now: number = Date.now()): number | undefined {
  const answer = readGitHubApiError(error);
  if (!answer || (answer.status !== 403 && answer.status !== 429)) return undefined;
  const { status, message, headers } = answer;
  const retryAfter = Number(headers["retry-after"]);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return retryAfter * 1000;
  if (headers["x-ratelimit-remaining"] === "0") {
    const reset = Number(headers["x-ratelimit-reset"]) * 1000;
    return Number.isFinite(reset) ? Math.max(1000, reset - now) : 60_000;
  }
  // A secondary limit without a hint: GitHub asks for at least a minute.
  return status === 429 || /secondary rate limit/i.test(message) ? 60_000 : undefined;
}
