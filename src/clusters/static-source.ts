import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { StaticSourceConfig } from "./cluster-sources-config.ts";
import { payloadDigest, samePayload } from "../registry/same-payload.ts";
import type { ClusterUnderTest } from "../runs/clusters-under-test.ts";
import { createClusterLease } from "./cluster-lease.ts";
import type { ClusterFence, ClusterLeaseKey } from "./cluster-leases.ts";
import type { ClusterSource, SourceContext, SourceLease, SourceRequest } from "./cluster-source.ts";
import type { KubeObjects } from "@netstress/core/kube/kube-objects.ts";
import { moveClusterTo } from "./move-cluster-to.ts";
import { readClusterVersion } from "./read-cluster-version.ts";
import { readKubeconfigSecret } from "./read-kubeconfig-secret.ts";
import { reapProbeNamespaces } from "./reap-probe-namespaces.ts";

type StaticCluster = StaticSourceConfig["clusters"][number];

/**
 * Pre-installed clusters. A cluster serves an arm only when its ClusterVersion says it runs the
 * arm's payload (by digest) — or, with `upgrade: true` and nobody else on it, after it was moved
 * there. Leases are in Redis: one arm of one run per cluster unless it is `shared`, and every
 * holder of a shared cluster wants the same payload. Nothing resets a static cluster between
 * runs, so a source serves PR arms only with `reinstall: true`, and a cluster a PR arm had is
 * fenced by its kubeconfig's hash until the operator's reinstall gives it a new one.
 */
export function createStaticSource(options: {
  config: StaticSourceConfig;
  context: SourceContext;
}): ClusterSource {
  const { config, context } = options;
  const secrets = context.connect(`${config.name} secrets`, { path: config.secretsFrom });
  const kubeconfigOf = async (cluster: StaticCluster): Promise<string> => {
    if (cluster.kubeconfig !== undefined) return readFile(cluster.kubeconfig, "utf8");
    const ref = cluster.kubeconfigSecret!;
    return readKubeconfigSecret({ objects: secrets, ...ref });
  };
  const poolOf = (cluster: StaticCluster) => `${config.name}/${cluster.name}`;
  /** A reason that names nothing an outsider should not read says it all, to operator and public alike. */
  const alike = (why: string) => ({ why, reason: why });

  const hashOf = (kubeconfig: string) => createHash("sha256").update(kubeconfig).digest("hex");
  /**
   * The mark of a PR arm that used the cluster with this very kubeconfig (it was not reinstalled
   * since), unless it is this run's own PR arm taking it again.
   */
  async function fencedFor(
    key: ClusterLeaseKey,
    kubeconfig: string,
    request: SourceRequest,
  ): Promise<ClusterFence | undefined> {
    const fence = await context.leases.fenceOf(key.pool);
    if (fence?.kubeconfig !== hashOf(kubeconfig)) return undefined;
    return request.prCode && fence.runId === request.runId ? undefined : fence;
  }
  /**
   * Marks the cluster before a PR arm's code reaches it (its payload installed, its kubeconfig
   * handed to its test binaries): from then on only a reinstall makes it fit for another run.
   */
  const markPrCode = (key: ClusterLeaseKey, kubeconfig: string) =>
    context.leases.fence(key.pool, { kubeconfig: hashOf(kubeconfig), runId: key.runId });

  /**
   * Deletes the probe namespaces runs left on the cluster (a runner killed mid-test), when nobody
   * but `key` holds it: another holder's probes may be running there.
   */
  async function reapLeftovers(objects: KubeObjects, key: ClusterLeaseKey): Promise<void> {
    const holders = await context.leases.holders(key.pool);
    if (holders.some((l) => l.runId !== key.runId || l.holder !== key.holder)) return;
    const reaped = await reapProbeNamespaces(objects);
    if (reaped.length > 0) {
      context.logger.info(
        { cluster: key.pool, namespaces: reaped },
        "deleted the probe namespaces runs left on the cluster under test",
      );
    }
  }

  async function moveTo(objects: KubeObjects, request: SourceRequest, slot: number): Promise<void> {
    request.progress(slot, "upgrading", `${objects.name} → ${request.payload}`);
    await moveClusterTo({
      objects,
      payload: request.payload,
      timeoutMs: config.upgradeSeconds * 1000,
      pollMs: context.timing.pollMs,
      signal: request.signal,
    });
  }

  return {
    name: config.name,
    async acquire(request) {
      const digest = payloadDigest(request.payload) ?? request.payload;
      const candidates = config.clusters.filter((c) => c.arch === request.arch);
      if (candidates.length === 0)
        return { leases: [], ...alike(`${config.name} has no ${request.arch} cluster`) };
      if (request.prCode && !config.reinstall) {
        return {
          leases: [],
          ...alike(
            `${config.name} serves released payloads only (gate, baseline and periodic arms): a PR arm runs the pull request's code with cluster-admin, and the cluster would go on to the next run as it left it. Set reinstall: true on the source (and reinstall a cluster after each PR run) for it to serve PR arms`,
          ),
        };
      }
      // After a restart the run takes the clusters it held again, in the slots it held them for.
      const held = (await context.leases.heldBy(request.runId)).filter(
        (l) => l.pool.startsWith(`${config.name}/`) && l.holder.startsWith(`${request.arm}/`),
      );
      const heldSlot = (cluster: StaticCluster) => {
        const lease = held.find((l) => l.pool === poolOf(cluster));
        return lease === undefined ? undefined : Number(lease.holder.slice(request.arm.length + 1));
      };
      const ordered = [...candidates].sort(
        (a, b) => Number(heldSlot(b) !== undefined) - Number(heldSlot(a) !== undefined),
      );
      const open = [...request.slots];
      const leases: SourceLease[] = [];
      const why: string[] = [];
      /** Per kind of trouble, how many clusters had it: what a public check run may say. */
      const kinds = new Map<string, number>();
      const skip = (detail: string, kind: string) => {
        why.push(detail);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      };
      for (const cluster of ordered) {
        if (open.length === 0) break;
        request.signal.throwIfAborted();
        const previous = heldSlot(cluster);
        const slot = previous !== undefined && open.includes(previous) ? previous : open[0]!;
        let objects: KubeObjects;
        let kubeconfig: string;
        let running: boolean;
        let runs: string | undefined;
        try {
          kubeconfig = await kubeconfigOf(cluster);
          objects = context.connect(`${config.name}/${cluster.name}`, { text: kubeconfig });
          const state = await readClusterVersion(objects);
          runs = state.payload;
          running = state.settled && runs !== undefined && samePayload(runs, request.payload);
        } catch (error) {
          skip(`${cluster.name}: ${(error as Error).message}`, "that could not be read");
          continue;
        }
        if (request.moves && !cluster.upgrade) {
          skip(
            `${cluster.name} may not be moved to another payload (upgrade: false)`,
            "that may not be moved",
          );
          continue;
        }
        if (!running && !(request.allowUpgrade && cluster.upgrade)) {
          skip(
            `${cluster.name} runs ${runs ?? "no known payload"}${cluster.upgrade ? "" : " (upgrade: false)"}`,
            "running another payload",
          );
          continue;
        }
        const key: ClusterLeaseKey = {
          pool: poolOf(cluster),
          runId: request.runId,
          holder: `${request.arm}/${slot}`,
          payload: digest,
        };
        if (!(await context.leases.take(key, cluster.shared))) {
          skip(`${cluster.name} is in use by other runs`, "in use by other runs");
          continue;
        }
        // Read while the lease is held: a PR arm marks the cluster before it lets go of it.
        const fence = await fencedFor(key, kubeconfig, request).catch(async (error: unknown) => {
          await context.leases.release(key);
          throw error;
        });
        if (fence) {
          await context.leases.release(key);
          context.logger.warn(
            { cluster: key.pool, ranPrCodeOf: fence.runId, runId: request.runId },
            "cluster under test ran a pull request's code: not handed out until it is reinstalled (its kubeconfig changes)",
          );
          skip(
            `${cluster.name} ran a pull request's code and waits to be reinstalled`,
            "waiting to be reinstalled after a pull request's code ran there",
          );
          continue;
        }
        context.keeper.hold(key);
        try {
          // What a run before left is gone before this one starts (not when the run takes its own again).
          if (previous === undefined) await reapLeftovers(objects, key);
          if (!running) {
            if (request.prCode) await markPrCode(key, kubeconfig);
            await moveTo(objects, request, slot);
          }
        } catch (error) {
          await context.keeper.release(key);
          if (request.signal.aborted) throw error;
          skip((error as Error).message, "that could not be made ready");
          continue;
        }
        open.splice(open.indexOf(slot), 1);
        const underTest: ClusterUnderTest = {
          id: poolOf(cluster),
          source: config.name,
          arch: cluster.arch,
          payload: request.payload,
          kubeconfig: async () => {
            const text = await kubeconfigOf(cluster);
            if (request.prCode) await markPrCode(key, text);
            return text;
          },
        };
        leases.push({
          slot,
          ...createClusterLease({
            cluster: underTest,
            ...(request.upgradeTarget ? { upgradeTarget: request.upgradeTarget } : {}),
            objects,
            ...(cluster.upgrade
              ? { movable: { pollMs: context.timing.pollMs, timeoutMs: config.upgradeSeconds * 1000 } }
              : {}),
            health: { pollMs: context.timing.healthPollMs, failures: context.timing.lostAfterFailures },
            giveBack: async () => {
              await reapLeftovers(objects, key).catch((error: unknown) =>
                context.logger.warn(
                  { err: error, cluster: key.pool },
                  "probe namespaces left on the cluster under test not deleted; its next holder deletes them",
                ),
              );
              await context.keeper.release(key);
            },
            lapsed: context.keeper.lapsed(key),
            onLost: (reason) =>
              context.logger.warn({ cluster: underTest.id, reason }, "cluster under test lost"),
          }),
        });
      }
      return open.length === 0
        ? { leases }
        : {
            leases,
            why: `${config.name}: ${why.join("; ") || "no cluster free"}`,
            reason: `${config.name}: ${[...kinds].map(([kind, n]) => `${n} ${n === 1 ? "cluster" : "clusters"} ${kind}`).join(", ") || "no cluster free"}`,
          };
    },
    async reconcile(activeRuns) {
      // Leases first, the runs second: a lease taken after this look is not among those it may free.
      const held = (await Promise.all(config.clusters.map((c) => context.leases.holders(poolOf(c))))).flat();
      const active = await activeRuns();
      const ended = held.filter((lease) => !active.has(lease.runId));
      for (const lease of ended) await context.keeper.release(lease);
      return ended.length;
    },
    stop: () => undefined,
  };
}
