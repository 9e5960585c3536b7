import type { V1Secret } from "@kubernetes/client-node";
import type { KubeClient } from "@netstress/core/kube/kube-client.ts";
import { FarmError } from "./farm-error.ts";
import { retryTransient } from "./retry-transient.ts";

/**
 * Creates the Secret; one of that name left by an attempt that never got its Job is replaced. A
 * Secret that is there again right after it was deleted means another bot dispatches the same
 * iteration, and is refused.
 */
export async function createFreshSecret(
  client: Pick<KubeClient, "createSecret" | "deleteSecret">,
  secret: V1Secret,
  signal: AbortSignal,
): Promise<void> {
  const name = secret.metadata!.name!;
  if ((await createOnce(client, secret, signal)) === "created") return;
  await retryTransient(() => client.deleteSecret(name), signal);
  if ((await createOnce(client, secret, signal)) === "exists")
    throw new FarmError(
      "kube-api",
      `the Secret ${name} came back after it was deleted: is another bot with this Redis prefix dispatching the same iteration?`,
    );
}

/**
 * One create, retried while the API has trouble. A create whose answer never came (a timeout, a
 * 5xx) may still have been applied, as a real API server may apply it: the retry then finds the
 * Secret this call made, which is "created", not someone else's.
 */
async function createOnce(
  client: Pick<KubeClient, "createSecret">,
  secret: V1Secret,
  signal: AbortSignal,
): Promise<"created" | "exists"> {
  let mayHaveMadeIt = false;
  return retryTransient(async () => {
    try {
      const answer = await client.createSecret(secret);
      return answer === "exists" && mayHaveMadeIt ? "created" : answer;
    } catch (error) {
      mayHaveMadeIt = true;
      throw error;
    }
  }, signal);
}
