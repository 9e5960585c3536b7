import type { Arch } from "../arch/arch.ts";
import type { HiveSourceConfig } from "../farm/farm-config.ts";
import { LABELS, labelSafe, MANAGED_BY, RUN_ID_ANNOTATION, runKey } from "../farm/job-identity.ts";
import type { Arm } from "../runner/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterUnderTest } from "../runs/clusters-under-test.ts";
import { createClusterLease } from "./cluster-lease.ts";
import type { ClusterLeaseKey } from "./cluster-leases.ts";
import type { ClusterSource, SourceContext, SourceLease, SourceRequest } from "./cluster-source.ts";
import {
  clusterClaimSchema,
  clusterDeploymentSchema,
  clusterImageSetSchema,
  clusterPoolSchema,
  trueCondition,
} from "./hive-objects.ts";
import { createHubPoller } from "./hub-poller.ts";
import { installConfigArch, renderInstallConfig } from "./install-config.ts";
import type { Kind } from "./kube-objects.ts";
import { readClusterVersion } from "./read-cluster-version.ts";
import { readKubeconfigSecret } from "./read-kubeconfig-secret.ts";
import { samePayload } from "./same-payload.ts";

/** Labels Hive's own tooling reads, and the annotation that is Hive's backstop against leaks. */
const HIVE = {
  platform: "hive.openshift.io/cluster-platform",
  region: "hive.openshift.io/cluster-region",
  deleteAfter: "hive.openshift.io/delete-after",
} as const;
export const CLUSTER_COMPONENT = "cluster-under-test";
const ARM_LABEL = "netstress.io/arm";
const INSTALL_CONFIG_KEY = "install-config.yaml";

/** A claim, or the deployment with its image set and install-config Secret. */
type Provisioned = { kind: "claim"; name: string } | { kind: "deployment"; name: string };

/**
 * OpenShift Hive on a hub. A payload some ClusterPool serves (its ClusterImageSet's releaseImage,
 * by digest; its platform; the architecture of its install-config template) is served by
 * ClusterClaims; any other by ClusterDeployments made from the configured template, each with a
 * ClusterImageSet of the payload. Every object is labelled as the bot's with the run, named as a
 * pure function of run, arm, arch, cluster number and attempt (a retry or a restarted bot meets
 * 409, never a twin), and carries Hive's own backstop (claim spec.lifetime, deployment
 * delete-after). At most `maxClusters` are held at once by every replica together: the provider
 * reserves a run's whole share before asking, and runs beyond that queue there.
 */
export function createHiveSource(options: {
  config: HiveSourceConfig;
  context: SourceContext;
}): ClusterSource {
  const { config, context } = options;
  const { namespace } = config;
  const hub = context.connect(`${config.name} hub`, {
    path: config.hub.kubeconfig,
    context: config.hub.context,
  });
  const selector = `${LABELS.managedBy}=${MANAGED_BY},${LABELS.component}=${CLUSTER_COMPONENT},${LABELS.instance}=${labelSafe(context.instance)}`;
  const poller = createHubPoller({
    hub,
    namespace,
    labelSelector: selector,
    pollMs: context.timing.pollMs,
    logger: context.logger,
  });
  const identity = (runId: string, arm: Arm, arch: Arch) => ({
    labels: {
      [LABELS.managedBy]: MANAGED_BY,
      [LABELS.component]: CLUSTER_COMPONENT,
      [LABELS.instance]: labelSafe(context.instance),
      [LABELS.run]: runKey(runId),
      [LABELS.arch]: arch,
      [ARM_LABEL]: arm,
    },
    annotations: { [RUN_ID_ANNOTATION]: runId },
  });
  const objectName = (runId: string, arm: Arm, arch: Arch, slot: number, attempt: number) =>
    `nst-${runKey(runId)}-${arm === "pr" ? "pr" : "bl"}-${arch}-c${slot}-a${attempt}`;

  /**
   * The pool serving this payload on this arch and platform, if any; one look per poll interval
   * serves every request that asks meanwhile (a hundred runs starting at once cost three reads).
   */
  const lookups = new Map<string, { at: number; pool: Promise<string | undefined> }>();
  function findPool(arch: Arch, payload: string): Promise<string | undefined> {
    const key = `${arch} ${payload}`;
    const cached = lookups.get(key);
    if (cached && Date.now() - cached.at < context.timing.pollMs) return cached.pool;
    const pool = lookPool(arch, payload);
    lookups.set(key, { at: Date.now(), pool });
    pool.catch(() => lookups.delete(key));
    return pool;
  }
  async function lookPool(arch: Arch, payload: string): Promise<string | undefined> {
    const pools = (await hub.list("clusterPools", { namespace })).flatMap((o) => {
      const parsed = clusterPoolSchema.safeParse(o);
      return parsed.success && config.platform in parsed.data.spec.platform ? [parsed.data] : [];
    });
    if (pools.length === 0) return undefined;
    const imageSets = new Map(
      (await hub.list("clusterImageSets", {})).flatMap((o) => {
        const parsed = clusterImageSetSchema.safeParse(o);
        return parsed.success ? [[parsed.data.metadata.name, parsed.data.spec.releaseImage] as const] : [];
      }),
    );
    for (const pool of pools) {
      const releaseImage = imageSets.get(pool.spec.imageSetRef.name);
      if (releaseImage === undefined || !samePayload(releaseImage, payload)) continue;
      const template = pool.spec.installConfigSecretTemplateRef?.name;
      const poolArch = template === undefined ? "amd64" : await templateArch(template);
      if (poolArch === arch) return pool.metadata.name;
    }
    return undefined;
  }
  async function templateArch(secret: string): Promise<string | undefined> {
    try {
      return installConfigArch(
        await readKubeconfigSecret({ objects: hub, namespace, name: secret, key: INSTALL_CONFIG_KEY }),
      );
    } catch (error) {
      context.logger.warn(
        { err: error, secret },
        "a pool's install-config template cannot be read; pool skipped",
      );
      return undefined;
    }
  }

  async function claim(request: SourceRequest, name: string, pool: string): Promise<string> {
    await hub.create(
      "clusterClaims",
      {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterClaim",
        metadata: { name, namespace, ...identity(request.runId, request.arm, request.arch) },
        spec: { clusterPoolName: pool, lifetime: config.claimLifetime },
      },
      namespace,
    );
    const clusterNamespace = await poller.wait<string>({
      kind: "clusterClaims",
      name,
      what: `claim ${name} on pool ${pool}`,
      deadlineMs: config.readySeconds * 1000,
      signal: request.signal,
      judge: (object) => {
        if (object === undefined) return { fail: `claim ${name} was deleted` };
        const found = clusterClaimSchema.parse(object);
        return trueCondition(found, "ClusterRunning") && found.spec.namespace
          ? { done: found.spec.namespace }
          : undefined;
      },
    });
    // A pool's deployment is named as its namespace.
    const deployment = clusterDeploymentSchema.parse(
      await hub.get("clusterDeployments", clusterNamespace, clusterNamespace),
    );
    const secret = deployment.spec.clusterMetadata?.adminKubeconfigSecretRef.name;
    if (!secret) throw new ClustersUnavailableError(`claim ${name}: its cluster has no admin kubeconfig yet`);
    return `${clusterNamespace}/${secret}`;
  }

  async function deploy(request: SourceRequest, name: string): Promise<string> {
    const template = config.deployment!;
    const meta = identity(request.runId, request.arm, request.arch);
    await hub.create("clusterImageSets", {
      apiVersion: "hive.openshift.io/v1",
      kind: "ClusterImageSet",
      metadata: { name, ...meta },
      spec: { releaseImage: request.payload },
    });
    const installConfig = renderInstallConfig(
      await readKubeconfigSecret({
        objects: hub,
        namespace,
        name: template.installConfigSecret,
        key: INSTALL_CONFIG_KEY,
      }),
      {
        name,
        baseDomain: template.baseDomain,
        platform: config.platform,
        region: template.region,
        arch: request.arch,
      },
    );
    await hub.create(
      "secrets",
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `${name}-install-config`, namespace, ...meta },
        type: "Opaque",
        data: { [INSTALL_CONFIG_KEY]: Buffer.from(installConfig).toString("base64") },
      },
      namespace,
    );
    await hub.create(
      "clusterDeployments",
      {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterDeployment",
        metadata: {
          name,
          namespace,
          labels: { ...meta.labels, [HIVE.platform]: config.platform, [HIVE.region]: template.region },
          annotations: { ...meta.annotations, [HIVE.deleteAfter]: config.deleteAfter },
        },
        spec: {
          clusterName: name,
          baseDomain: template.baseDomain,
          platform: {
            [config.platform]: {
              region: template.region,
              credentialsSecretRef: { name: template.credentialsSecret },
            },
          },
          pullSecretRef: { name: template.pullSecret },
          // One install per deployment: a failed one is deleted and the next attempt is a new deployment.
          installAttemptsLimit: 1,
          provisioning: { installConfigSecretRef: { name: `${name}-install-config` }, imageSetRef: { name } },
        },
      },
      namespace,
    );
    const secret = await poller.wait<string>({
      kind: "clusterDeployments",
      name,
      what: `deployment ${name}`,
      deadlineMs: config.readySeconds * 1000,
      signal: request.signal,
      judge: (object) => {
        if (object === undefined) return { fail: `deployment ${name} was deleted` };
        const found = clusterDeploymentSchema.parse(object);
        const failed = trueCondition(found, "ProvisionStopped") ?? trueCondition(found, "ProvisionFailed");
        if (failed)
          return {
            fail: `deployment ${name} failed to install: ${failed.message ?? failed.reason ?? failed.type}`,
          };
        const ref = found.spec.clusterMetadata?.adminKubeconfigSecretRef.name;
        return found.spec.installed && ref ? { done: ref } : undefined;
      },
    });
    return `${namespace}/${secret}`;
  }

  /** Deletes what one attempt made; what is already gone counts as given back. */
  async function giveBack(made: Provisioned): Promise<void> {
    if (made.kind === "claim") {
      await hub.delete("clusterClaims", made.name, namespace);
      return;
    }
    await hub.delete("clusterDeployments", made.name, namespace);
    await hub.delete("secrets", `${made.name}-install-config`, namespace);
    await hub.delete("clusterImageSets", made.name);
  }

  async function provision(
    request: SourceRequest,
    slot: number,
    pool: string | undefined,
  ): Promise<SourceLease> {
    const quota: ClusterLeaseKey = {
      pool: config.name,
      runId: request.runId,
      holder: `${request.arm}/${slot}`,
      payload: "",
    };
    // The provider reserved the run's whole need of the quota before asking (a slot's own lease is
    // already there); a slot never waits here while the run holds others.
    if (!(await context.leases.take(quota, config.maxClusters))) {
      const held = (await context.leases.holders(config.name)).length;
      throw new ClustersUnavailableError(
        `${config.name} quota ${held}/${config.maxClusters} is full and the run's share of it was not reserved`,
      );
    }
    context.keeper.hold(quota);
    const failures: string[] = [];
    try {
      for (let attempt = 0; attempt < config.attempts; attempt += 1) {
        const name = objectName(request.runId, request.arm, request.arch, slot, attempt);
        const made: Provisioned = pool ? { kind: "claim", name } : { kind: "deployment", name };
        request.progress(slot, "installing", pool ? `claiming from pool ${pool}` : `installing ${name}`);
        try {
          const secret = pool ? await claim(request, name, pool) : await deploy(request, name);
          const [secretNamespace, secretName] = secret.split("/") as [string, string];
          const kubeconfig = () =>
            readKubeconfigSecret({
              objects: hub,
              namespace: secretNamespace,
              name: secretName,
              key: "kubeconfig",
            });
          const objects = context.connect(`${config.name}/${name}`, { text: await kubeconfig() });
          const state = await readClusterVersion(objects);
          if (state.payload === undefined || !samePayload(state.payload, request.payload)) {
            throw new ClustersUnavailableError(
              `${name} runs ${state.payload ?? "no known payload"}, not ${request.payload}`,
            );
          }
          const cluster: ClusterUnderTest = {
            id: `${config.name}/${name}`,
            source: config.name,
            arch: request.arch,
            payload: request.payload,
            kubeconfig,
          };
          return {
            slot,
            ...createClusterLease({
              cluster,
              ...(request.upgradeTarget ? { upgradeTarget: request.upgradeTarget } : {}),
              objects,
              health: { pollMs: context.timing.healthPollMs, failures: context.timing.lostAfterFailures },
              giveBack: async () => {
                await giveBack(made);
                await context.keeper.release(quota);
              },
              lapsed: context.keeper.lapsed(quota),
              onLost: (reason) =>
                context.logger.warn({ cluster: cluster.id, reason }, "cluster under test lost"),
            }),
          };
        } catch (error) {
          await giveBack(made);
          if (request.signal.aborted) throw error;
          failures.push((error as Error).message);
          context.logger.warn({ err: error, name, attempt }, "cluster under test not ready; trying another");
        }
      }
    } catch (error) {
      await context.keeper.release(quota);
      throw error;
    }
    await context.keeper.release(quota);
    throw new ClustersUnavailableError(
      `${config.name}: no ${request.arch} cluster of ${request.payload} after ${config.attempts} attempts: ${failures.join("; ")}`,
    );
  }

  return {
    name: config.name,
    async acquire(request) {
      const pool = await findPool(request.arch, request.payload);
      if (pool === undefined && !config.deployment?.arches.includes(request.arch)) {
        return {
          leases: [],
          why: `${config.name}: no ${config.platform} pool serves ${request.payload} on ${request.arch}, and ${
            config.deployment
              ? `its deployments are for ${config.deployment.arches.join(", ")}`
              : "it makes no deployments"
          }`,
        };
      }
      const settled = await Promise.allSettled(request.slots.map((slot) => provision(request, slot, pool)));
      const leases = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) {
        await Promise.all(leases.map((l) => l.release()));
        throw failed.reason;
      }
      return { leases };
    },
    async reconcile(active) {
      const ended = (object: unknown) => {
        const runId = (object as { metadata?: { annotations?: Record<string, string> } }).metadata
          ?.annotations?.[RUN_ID_ANNOTATION];
        return runId !== undefined && !active.has(runId);
      };
      const name = (object: unknown) => (object as { metadata: { name: string } }).metadata.name;
      let released = 0;
      for (const kind of ["clusterClaims", "clusterDeployments"] as const satisfies Kind[]) {
        for (const object of (await hub.list(kind, { namespace, labelSelector: selector })).filter(ended)) {
          await giveBack({ kind: kind === "clusterClaims" ? "claim" : "deployment", name: name(object) });
          released += 1;
        }
      }
      // What an attempt made before its deployment (or a deployment deleted by Hive) left behind.
      for (const object of (await hub.list("clusterImageSets", { labelSelector: selector })).filter(ended)) {
        await hub.delete("clusterImageSets", name(object));
      }
      for (const object of (await hub.list("secrets", { namespace, labelSelector: selector })).filter(
        ended,
      )) {
        await hub.delete("secrets", name(object), namespace);
      }
      for (const lease of await context.leases.holders(config.name)) {
        if (!active.has(lease.runId)) await context.keeper.release(lease);
      }
      return released;
    },
    stop: () => poller.stop(),
  };
}
