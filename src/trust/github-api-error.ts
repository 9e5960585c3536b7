/** What an Octokit request error says, read in one place. */
export interface GitHubApiError {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/**
 * The HTTP status, message and response headers of an Octokit RequestError (or anything shaped
 * like one); undefined for errors that carry no HTTP answer (a network failure, a bug).
 */
export function readGitHubApiError(error: unknown): GitHubApiError | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { status, message, response } = error as {
    status?: unknown;
    message?: unknown;
    response?: { headers?: Record<string, unknown> };
  };
  if (typeof status !== "number") return undefined;
  const headers = Object.fromEntries(
    Object.entries(response?.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
  return { status, message: typeof message === "string" ? message : "", headers };
}
