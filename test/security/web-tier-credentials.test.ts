// Item: the internet-facing web tier mounted the GitHub App's private key though only workers call
// GitHub. The web tier now runs without it: it verifies webhooks with the secret and queues them.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deployDir, renderKustomization } from "../deploy/render-kustomization.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { startTestBot } from "../helpers/github-test-bot.ts";

interface PodSpec {
  containers: { env?: { name: string; value?: string }[]; volumeMounts?: { name: string }[] }[];
  volumes?: { name: string; secret?: { secretName: string; items?: { key: string }[] } }[];
}

describe("the web tier", () => {
  it("mounts no private key in the manifests", () => {
    const web = renderKustomization(join(deployDir, "overlays", "example")).find(
      (m) => m.kind === "Deployment" && m.metadata.name === "netstress-bot",
    ) as unknown as { spec: { template: { spec: PodSpec } } };
    const pod = web.spec.template.spec;
    const keys = (pod.volumes ?? []).flatMap((v) => v.secret?.items?.map((i) => i.key) ?? []);
    expect(keys).not.toContain("private-key.pem");
    expect(pod.containers[0]!.env).toContainEqual({ name: "NETSTRESS_WORKERS", value: "false" });
  });

  it("accepts signed webhooks without the private key, and a worker refuses to start without one", async () => {
    const t = await startTestBot({ settings: { workers: false, privateKey: undefined } });
    try {
      const delivered = await t.deliver("issue_comment", commentPayload({ body: "/test network-stress" }));
      expect(delivered.status).toBe(200);
      expect(await t.redis.keys(`${t.settings.queuePrefix}:intake:*`)).not.toEqual([]);
    } finally {
      await t.stop();
    }
    await expect(startTestBot({ settings: { privateKey: undefined } })).rejects.toThrow(/private key/);
  });
});
