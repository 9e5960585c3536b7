import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { KubeApiError } from "@netstress/core/kube/kube-client.ts";
import { createFreshSecret } from "../../src/farm/create-fresh-secret.ts";

const SECRET: V1Secret = { metadata: { name: "nst-job-secret" }, data: { "stream-key": "b3Vycw==" } };

/**
 * Secrets as an API server keeps them, whose next creates are applied but answered with no answer
 * (`lostAnswers`), as a real server may do when the request times out; `intruder` puts a Secret of
 * the name back after each delete, as another bot dispatching the same Job would.
 */
function server(options: { existing?: V1Secret; lostAnswers?: number; intruder?: boolean }) {
  const secrets = new Map<string, V1Secret>();
  if (options.existing) secrets.set(options.existing.metadata!.name!, options.existing);
  let lost = options.lostAnswers ?? 0;
  const calls: string[] = [];
  return {
    secrets,
    calls,
    async createSecret(secret: V1Secret) {
      calls.push("create");
      const name = secret.metadata!.name!;
      if (secrets.has(name)) return "exists" as const;
      secrets.set(name, secret);
      if (lost-- > 0) throw new KubeApiError("create secret: request timed out", undefined, undefined);
      return "created" as const;
    },
    async deleteSecret(name: string) {
      calls.push("delete");
      const had = secrets.delete(name);
      if (options.intruder) secrets.set(name, { metadata: { name }, data: { "stream-key": "dGhlaXJz" } });
      return had ? ("deleted" as const) : ("gone" as const);
    },
  };
}

describe("a Job's Secret, created fresh", () => {
  it("replaces one left by an earlier attempt, even when the new one's create is applied but its answer is lost", async () => {
    const api = server({
      existing: { metadata: { name: "nst-job-secret" }, data: { old: "eA==" } },
      lostAnswers: 0,
    });
    // The leftover is answered "exists" at once; the replacement's create times out after it was applied.
    const createSecret = api.createSecret.bind(api);
    let creates = 0;
    api.createSecret = async (secret) => {
      creates++;
      if (creates === 2) {
        api.secrets.set(secret.metadata!.name!, secret);
        throw new KubeApiError("create secret: request timed out", undefined, undefined);
      }
      return createSecret(secret);
    };
    await createFreshSecret(api, SECRET, AbortSignal.timeout(10_000));
    expect(api.secrets.get("nst-job-secret")).toBe(SECRET);
    expect(api.calls).toEqual(["create", "delete", "create"]);
  });

  it("takes a first create whose answer was lost as its own, without deleting it", async () => {
    const api = server({ lostAnswers: 1 });
    await createFreshSecret(api, SECRET, AbortSignal.timeout(10_000));
    expect(api.secrets.get("nst-job-secret")).toBe(SECRET);
    expect(api.calls).toEqual(["create", "create"]);
  });

  it("refuses a Secret that is back right after it was deleted: another bot dispatches the same iteration", async () => {
    const api = server({ existing: { metadata: { name: "nst-job-secret" }, data: {} }, intruder: true });
    await expect(createFreshSecret(api, SECRET, AbortSignal.timeout(10_000))).rejects.toThrow(
      "the Secret nst-job-secret came back after it was deleted: is another bot with this Redis prefix dispatching the same iteration?",
    );
  });
});
