import { readGitHubApiError } from "../trust/github-api-error.ts";
import type { GitHubWriteBudget } from "./github-write-budget.ts";
import { MissingPermission } from "./missing-permission.ts";

const MAX_ATTEMPTS = 5;

/**
 * Performs one content-creating GitHub request within the shared budget. When GitHub answers 403
 * or 429 with `retry-after`, or with `x-ratelimit-remaining: 0`, every process pauses for as long
 * as GitHub asked and the request is tried again. A 403 for a missing permission pauses the
 * installation's writes (MissingPermission, thrown at once while the pause lasts) instead: retrying
 * cannot help until an owner grants it. Other errors are thrown unchanged.
 */
export async function githubWrite<T>(
  budget: GitHubWriteBudget,
  request: () => Promise<T>,
  options: { isReply?: boolean } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    // A reply may still get through (it needs another permission) and says what to grant.
    await budget.acquire(undefined, { reply: options.isReply === true });
    try {
      return await request();
    } catch (error) {
      const permission = missingPermissionOf(error);
      if (permission !== undefined) {
        await budget.blockForPermission(permission);
        throw new MissingPermission(permission);
      }
      const wait = rateLimitWaitMs(error);
      if (wait === undefined || attempt >= MAX_ATTEMPTS) throw error;
      await budget.pause(wait);
    }
  }
}

/** What permission a 403 says the installation lacks ("" when GitHub did not name it). */
function missingPermissionOf(error: unknown): string | undefined {
  const answer = readGitHubApiError(error);
  if (answer?.status !== 403 || !/resource not accessible by integration/i.test(answer.message))
    return undefined;
  return answer.headers["x-accepted-github-permissions"] ?? "";
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
