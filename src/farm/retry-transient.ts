import { KubeApiError } from "@netstress/core/kube/kube-client.ts";

/** Retries while the API has trouble of its own (5xx, 429, no answer); other answers are final. */
export async function retryTransient<T>(action: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await action();
    } catch (error) {
      if (
        !(error instanceof KubeApiError) ||
        !error.transient ||
        signal?.aborted ||
        (!signal && failures >= 5)
      )
        throw error;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(5000, 50 * 2 ** failures) * (0.5 + Math.random())),
      );
    }
  }
}
