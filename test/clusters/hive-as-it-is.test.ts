import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeHive, type FakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import {
  acquireArm,
  botObjects,
  hiveProvider,
  leastPrivilegeHub,
  NAMESPACE,
  RELEASED,
  request,
  seedHub,
} from "./hive-fixture.ts";
import { useRedis } from "./use-redis.ts";

const redisServer = useRedis();
let hive: FakeHive | undefined;
let prefix: string;

afterEach(async () => {
  await hive?.stop();
  hive = undefined;
});

async function hub(
  options: Parameters<typeof startFakeHive>[0] = {},
  seed: Parameters<typeof seedHub>[1] = {},
) {
  hive = await startFakeHive({ installMs: 200, ...options });
  seedHub(hive, seed);
  prefix = `t${Math.random().toString(36).slice(2, 8)}`;
  return hive;
}
const provider = (h: FakeHive, options: Partial<Parameters<typeof hiveProvider>[0]> = {}) =>
  hiveProvider({ hubKubeconfig: h.hub.kubeconfigPath, redis: redisServer.client, prefix, ...options });
/** Creates a ClusterDeployment with the admin kubeconfig and answers the hub's Status message. */
async function fetchAsAdmin(h: FakeHive, body: object): Promise<string> {
  const config = new KubeConfig();
  config.loadFromFile(h.hub.kubeconfigPath);
  const error = await config
    .makeApiClient(CustomObjectsApi)
    .createNamespacedCustomObject({
      group: "hive.openshift.io",
      version: "v1",
      namespace: NAMESPACE,
      plural: "clusterdeployments",
      body,
    })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  return String((error as { body?: string } | undefined)?.body ?? error);
}
const quota = () => redisServer.client.keys(`${prefix}:clusters:leases:*`);
const pooled = { arm: "baseline" as const, arch: "amd64" as const, payload: RELEASED, count: 1 };

describe("the Hive source on a hub that behaves as Hive does", () => {
  it("works with the shipped least-privilege hub RBAC, which grants exactly the calls it makes; a claimed cluster is readable by the claim's subjects only", async () => {
    const h = await hub();
    const { kubeconfig, rules } = await leastPrivilegeHub(h);
    const clusters = provider(h, { hubKubeconfig: kubeconfig });
    try {
      const claimed = await acquireArm(clusters, request({ ...pooled }));
      const installed = await acquireArm(clusters, request({ count: 1 }));
      for (const lease of [...claimed, ...installed])
        expect(await lease.cluster.kubeconfig()).toContain("certificate-authority-data");
      const claim = h.hub.store.list("clusterclaims", NAMESPACE, () => true).items[0]!;
      expect(claim.spec?.subjects).toEqual([
        { kind: "ServiceAccount", name: "netstress-bot", namespace: NAMESPACE },
      ]);

      // Another identity with the same hub rights is no subject of the claim: the cluster's
      // kubeconfig is closed to it.
      const clusterNamespace = claim.spec?.namespace as string;
      const secret = (
        h.hub.store.get("clusterdeployments", clusterNamespace, clusterNamespace)?.spec?.clusterMetadata as {
          adminKubeconfigSecretRef: { name: string };
        }
      ).adminKubeconfigSecretRef.name;
      const other = new KubeConfig();
      other.loadFromFile(await h.hub.serviceAccountKubeconfig(NAMESPACE, "someone-else"));
      await expect(
        other.makeApiClient(CoreV1Api).readNamespacedSecret({ name: secret, namespace: clusterNamespace }),
      ).rejects.toThrow(/forbidden/);

      await Promise.all([...claimed, ...installed].map((l) => l.release()));
      await clusters.reconcile(async () => new Set());
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);

      const mine = h.hub.stats.authorizations.filter((a) => a.user.endsWith(":netstress-bot"));
      expect(mine.filter((a) => !a.allowed).map((a) => `${a.verb} ${a.resource} ${a.namespace}`)).toEqual([]);
      const granted = mine.filter((a) => a.by?.endsWith("netstress-bot-hive"));
      const used = [
        ...new Set(
          granted.map((a) => `${a.verb} ${a.group}/${a.resource} ${a.namespace ? "namespace" : "cluster"}`),
        ),
      ].sort();
      expect(used).toEqual(rules);
    } finally {
      clusters.stop();
    }
  });

  it("holds the quota until Hive's teardown has removed the object, and a restart counts a lingering object once", async () => {
    const h = await hub({ teardownMs: 2500 });
    const clusters = provider(h);
    try {
      const [lease] = await acquireArm(clusters, request({ count: 1 }));
      await lease!.release();
      const name = lease!.cluster.id.slice("hive/".length);
      expect(
        h.hub.store.get("clusterdeployments", NAMESPACE, name)?.metadata.deletionTimestamp,
      ).toBeDefined();
      expect(await quota()).toHaveLength(1);
      await expect.poll(quota, { timeout: 10_000 }).toEqual([]);
      expect(h.hub.store.get("clusterdeployments", NAMESPACE, name)).toBeUndefined();

      await acquireArm(clusters, request({ runId: "ended", ...pooled }));
      clusters.stop();
      const restarted = provider(h);
      const again = provider(h);
      try {
        expect(await restarted.reconcile(async () => new Set())).toEqual({ released: 1 });
        expect(await again.reconcile(async () => new Set())).toEqual({ released: 0 });
        expect(await quota()).toHaveLength(1);
        await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
        await expect.poll(quota, { timeout: 10_000 }).toEqual([]);
      } finally {
        restarted.stop();
        again.stop();
      }
    } finally {
      clusters.stop();
    }
  });

  it("gives up at once, with Hive's reason, an install whose release image failed verification", async () => {
    const h = await hub();
    h.setFaults({ unresolvedImages: 1 });
    const clusters = provider(h, { readySeconds: 20 });
    try {
      const started = Date.now();
      const error = await acquireArm(clusters, request({ count: 1 })).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /InstallImagesNotResolved \(ReleaseImageVerificationFailed\): release image .* failed verification/,
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      // Another attempt would meet the same unsigned payload: none is made.
      expect(h.stats.api.calls.get("POST clusterdeployments")).toBe(1);
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("keeps a claimed cluster of a pool with hibernateAfter running for the whole lease", async () => {
    // 2h × 0.0005 = 3.6 s after the claim.
    const h = await hub({ timeScale: 0.0005 }, { hibernateAfter: "2h", poolSize: 1 });
    const clusters = provider(h);
    try {
      const [lease] = await acquireArm(clusters, request({ ...pooled }));
      const claim = h.hub.store.list("clusterclaims", NAMESPACE, () => true).items[0]!;
      const namespace = claim.spec?.namespace as string;
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const deployment = h.hub.store.get("clusterdeployments", namespace, namespace)!;
      expect(deployment.status?.powerState).toBe("Running");
      expect(lease!.lost.aborted).toBe(false);
      await lease!.release();
    } finally {
      clusters.stop();
    }
  });

  it("gives clusters back on a hub whose HiveConfig protects deployments from deletion", async () => {
    const h = await hub({ protectedDelete: true, teardownMs: 300 });
    const clusters = provider(h);
    try {
      const [lease] = await acquireArm(clusters, request({ count: 1 }));
      const name = lease!.cluster.id.slice("hive/".length);
      expect(
        h.hub.store.get("clusterdeployments", NAMESPACE, name)?.metadata.annotations?.[
          "hive.openshift.io/protected-delete"
        ],
      ).toBe("false");
      await lease!.release();
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
      await expect.poll(quota, { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("refuses at configuration time deployments on a platform whose required fields it does not write, which the hub would refuse", async () => {
    const h = await hub();
    for (const [platform, needs] of [
      ["openstack", /platform\.openstack\.cloud/],
      ["vsphere", /platform\.vsphere\.certificatesSecretRef/],
      ["nutanix", /platform\.nutanix\.prismCentral/],
      ["ibmcloud", /the ccoctl manifests \(spec\.provisioning\.manifestsSecretRef\)/],
    ] as const) {
      expect(() => provider(h, { source: { platform } })).toThrow(
        new RegExp(`makes deployments on aws, azure, gcp only: on ${platform} Hive needs ${needs.source}`),
      );
    }
    // What the hub says to a deployment without them (as the real CRD schema does).
    await expect(
      fetchAsAdmin(h, {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterDeployment",
        metadata: { name: "no-cloud" },
        spec: {
          clusterName: "no-cloud",
          baseDomain: "x.example",
          platform: { openstack: { credentialsSecretRef: { name: "c" } } },
        },
      }),
    ).resolves.toMatch(/spec\.platform\.openstack\.cloud: Required value/);
    // Pools on those platforms still serve claims.
    const clusters = provider(h, { source: { platform: "openstack", deployment: undefined } });
    clusters.stop();
  });

  it("a give-back the hub fails after a failed attempt keeps the attempt's objects and its quota slot until they are gone", async () => {
    const h = await hub();
    h.setFaults({ failInstall: (d) => d.name.startsWith("nst-") });
    // The hub stops answering as the failed attempt is given back.
    let failing = false;
    const onCall = (_: string, call: string) => {
      if (call === "delete clusterDeployments" && !failing) {
        failing = true;
        h.hub.setFaults({ errorRate: 1 });
      }
    };
    const clusters = provider(h, { attempts: 1, onCall });
    try {
      await expect(acquireArm(clusters, request({ count: 1 }))).rejects.toThrow(/failed to install/);
      expect(botObjects(h).length).toBeGreaterThan(0);
      expect(await quota()).toHaveLength(1);
      h.hub.setFaults({ errorRate: 0 });
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
      await expect.poll(quota, { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("a run that resumes adopts the newest attempt that exists instead of installing attempt 0 again", async () => {
    const h = await hub();
    const creations = new Map<string, number>();
    h.hub.store.subscribe((event) => {
      if (event.resource === "clusterdeployments" && event.type === "ADDED")
        creations.set(event.object.metadata.name, (creations.get(event.object.metadata.name) ?? 0) + 1);
    });
    h.setFaults({ failInstall: (d) => d.name.endsWith("-c0-a0") });
    const crashed = provider(h);
    const [first] = await acquireArm(crashed, request({ count: 1 }));
    expect(first!.cluster.id).toMatch(/-c0-a1$/);
    crashed.stop();
    h.setFaults({});
    const resumed = provider(h);
    try {
      const [adopted] = await acquireArm(resumed, request({ count: 1 }));
      expect(adopted!.cluster.id).toBe(first!.cluster.id);
      expect([...creations.values()].every((count) => count === 1)).toBe(true);
      await adopted!.release();
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
    } finally {
      resumed.stop();
    }
  });

  it("takes a claim's lifetime from Hive (the pool's maximum under the bot's own), counted from the claim's assignment, and loses the cluster then with that reason", async () => {
    const h = await hub({}, { poolSize: 1, claimLifetime: { maximum: "4s" } });
    // Health looked at as rarely as in production: the loss is the lifetime's, not a failed health check.
    const clusters = provider(h, { timing: { pollMs: 50, healthPollMs: 30_000, lostAfterFailures: 3 } });
    try {
      const [lease] = await acquireArm(clusters, request({ ...pooled }));
      const claim = h.hub.store.list("clusterclaims", NAMESPACE, () => true).items[0]!;
      expect(claim.spec?.lifetime).toBe("8h");
      expect(claim.status?.lifetime).toBe("4s");
      const assigned = (claim.status?.conditions as { type: string; lastTransitionTime: string }[]).find(
        (c) => c.type === "Pending",
      )!.lastTransitionTime;
      expect(lease!.expiresAt).toBe(Date.parse(assigned) + 4000);
      await new Promise<void>((resolve) => {
        if (lease!.lost.aborted) resolve();
        lease!.lost.addEventListener("abort", () => resolve(), { once: true });
      });
      expect(String(lease!.lost.reason)).toMatch(
        /^ClaimedClusterGone: claim \S+'s lifetime \(4s from its assignment, .*\) ended at \S+: Hive deletes the claim and its cluster$/,
      );
      await lease!.release();
      await expect.poll(() => botObjects(h), { timeout: 10_000 }).toEqual([]);
    } finally {
      clusters.stop();
    }
  });

  it("loses a claimed cluster at once when Hive reports its deployment deleted under the claim (ClusterRunning=False, ClusterDeleting)", async () => {
    const h = await hub({ teardownMs: 60_000 }, { poolSize: 1 });
    const clusters = provider(h, { timing: { pollMs: 50, healthPollMs: 30_000, lostAfterFailures: 3 } });
    try {
      const [lease] = await acquireArm(clusters, request({ ...pooled }));
      const namespace = h.hub.store.list("clusterclaims", NAMESPACE, () => true).items[0]!.spec
        ?.namespace as string;
      // An administrator (or anything else) deletes the claimed cluster; its teardown takes a minute.
      h.hub.store.delete("clusterdeployments", namespace, namespace);
      const lost = await Promise.race([
        new Promise<unknown>((resolve) =>
          lease!.lost.addEventListener("abort", () => resolve(lease!.lost.reason), { once: true }),
        ),
        // Far beyond a hub poll (50 ms), far below three health checks (90 s).
        new Promise((resolve) => setTimeout(() => resolve("not lost within 20 s"), 20_000)),
      ]);
      expect(String(lost)).toMatch(
        /^ClaimedClusterGone: claim \S+: Hive reports ClusterRunning=False \(ClusterDeleting\): Assigned cluster has been marked for deletion$/,
      );
      await lease!.release();
    } finally {
      clusters.stop();
    }
  });
});
