import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { HiveSourceConfig } from "./cluster-sources-config.ts";
import {
  LABELS,
  labelSafe,
  MANAGED_BY,
  RUN_ID_ANNOTATION,
  runKey,
} from "@netstress/core/kube/netstress-labels.ts";
import { samePayload } from "../registry/same-payload.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import type { ClusterUnderTest } from "../runs/clusters-under-test.ts";
import { parseGoDuration } from "@netstress/core/model/parse-go-duration.ts";
import { ClaimedClusterGone } from "./claimed-cluster-gone.ts";
import { createClusterLease } from "./cluster-lease.ts";
import type { ClusterLeaseKey } from "./cluster-leases.ts";
import type { ClusterSource, SourceContext, SourceLease, SourceRequest } from "./cluster-source.ts";
import {
  clusterClaimSchema,
  clusterDeploymentSchema,
  clusterImageSetSchema,
  clusterPoolSchema,
  hiveMetadataSchema,
  trueCondition,
} from "./hive-objects.ts";
import { createHubPoller } from "./hub-poller.ts";
import { installConfigArch, renderInstallConfig } from "./install-config.ts";
import { InstallStuckError } from "./install-stuck-error.ts";
import type { Kind } from "@netstress/core/kube/kube-objects.ts";
import { readClusterVersion } from "./read-cluster-version.ts";
import { readKubeconfigSecret } from "./read-kubeconfig-secret.ts";

/** Labels Hive's own tooling reads, and the annotation that is Hive's backstop against leaks. */
const HIVE = {
  platform: "hive.openshift.io/cluster-platform",
  region: "hive.openshift.io/cluster-region",
  deleteAfter: "hive.openshift.io/delete-after",
  protectedDelete: "hive.openshift.io/protected-delete",
} as const;
export const CLUSTER_COMPONENT = "cluster-under-test";
const ARM_LABEL = "netstress.io/arm";
const INSTALL_CONFIG_KEY = "install-config.yaml";

/** A claim, or the deployment with its image set and install-config Secret. */
type Provisioned = { kind: "claim"; name: string } | { kind: "deployment"; name: string };
/** What one attempt made, and whether it has been deleted yet. */
interface Attempt {
  made: Provisioned;
  givenBack: boolean;
}
/** The slot and attempt in an object's name (…-c<slot>-a<attempt>). */
const NAME_TAIL = /-c(\d+)-a(\d+)$/;
/** Longest a Node timer waits at once (a longer delay fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A claim's effective lifetime as Hive wrote it (status.lifetime), and when it ends. */
interface ClaimLifetime {
  text: string;
  expiresAt: number;
}

/**
 * Why a bound claim's cluster is no longer the claim's, from the claim as the hub has it (undefined:
 * it still is): the claim is gone or being deleted, or Hive's claim controller reports its
 * ClusterDeployment deleted under it (ClusterRunning=False, ClusterDeleting or ClusterDeleted),
 * which never recovers.
 */
function claimGone(object: unknown, name: string): string | undefined {
  if (object === undefined) return `claim ${name} was deleted`;
  const found = clusterClaimSchema.parse(object);
  if (found.metadata.deletionTimestamp) return `claim ${name} is being deleted`;
  const deleted = trueCondition(found, "ClusterRunning", "False");
  return deleted?.reason === "ClusterDeleted" || deleted?.reason === "ClusterDeleting"
    ? `claim ${name}: Hive reports ClusterRunning=False (${deleted.reason}): ${deleted.message ?? "its cluster is deleted"}`
    : undefined;
}

/**
 * The claim's effective lifetime (Hive's status.lifetime: its spec.lifetime, else the pool's
 * claimLifetime.default, never above claimLifetime.maximum; the bot's own spec.lifetime on a hub
 * that does not write it), counted as Hive counts it: from when the claim was assigned, the last
 * transition of its Pending condition to False.
 */
function claimLifetime(claim: ReturnType<typeof clusterClaimSchema.parse>): ClaimLifetime | undefined {
  const text = claim.status.lifetime ?? claim.spec.lifetime;
  const ms = text === undefined ? undefined : parseGoDuration(text);
  if (text === undefined || ms === undefined) return undefined;
  const assigned = Date.parse(trueCondition(claim, "Pending", "False")?.lastTransitionTime ?? "");
  return { text, expiresAt: (Number.isNaN(assigned) ? Date.now() : assigned) + ms };
}

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
  const subjects = config.claimSubjects ?? [
    { kind: "ServiceAccount", name: "netstress-bot", namespace: config.namespace },
  ];
  /** Quota slots (run|holder) held until their objects are gone, whatever the provider reserved. */
  const retiring = new Set<string>();
  /** Ends the waits of objects' teardowns when the source stops (one listener per cluster going). */
  const stopping = new AbortController();
  setMaxListeners(0, stopping.signal);

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

  async function claim(
    request: SourceRequest,
    name: string,
    pool: string,
  ): Promise<{ secret: string; lifetime?: ClaimLifetime }> {
    await hub.create(
      "clusterClaims",
      {
        apiVersion: "hive.openshift.io/v1",
        kind: "ClusterClaim",
        metadata: { name, namespace, ...identity(request.runId, request.arm, request.arch) },
        spec: { clusterPoolName: pool, lifetime: config.claimLifetime, subjects },
      },
      namespace,
    );
    const bound = await poller.wait<{ clusterNamespace: string; lifetime?: ClaimLifetime }>({
      kind: "clusterClaims",
      name,
      what: `claim ${name} on pool ${pool}`,
      deadlineMs: config.readySeconds * 1000,
      signal: request.signal,
      judge: (object) => {
        const gone = claimGone(object, name);
        if (gone) return { fail: gone };
        const found = clusterClaimSchema.parse(object);
        if (!trueCondition(found, "ClusterRunning") || !found.spec.namespace) return undefined;
        const lifetime = claimLifetime(found);
        return { done: { clusterNamespace: found.spec.namespace, ...(lifetime ? { lifetime } : {}) } };
      },
    });
    const { clusterNamespace, lifetime } = bound;
    const deployment = await keepRunning(clusterNamespace, name, request.signal);
    const secret = deployment.spec.clusterMetadata?.adminKubeconfigSecretRef.name;
    if (!secret) throw new ClustersUnavailableError(`claim ${name}: its cluster has no admin kubeconfig yet`);
    return { secret: `${clusterNamespace}/${secret}`, ...(lifetime ? { lifetime } : {}) };
  }

  /**
   * Aborted (with ClaimedClusterGone) when Hive takes a leased claim's cluster away: its lifetime
   * ends (Hive deletes the claim then), or the claim says its cluster is deleted or being deleted
   * (seen at the next poll: one list of claims per poll serves every lease and every wait). Stops
   * watching when `until` is aborted (the lease is given back).
   */
  function watchClaim(name: string, lifetime: ClaimLifetime | undefined, until: AbortSignal): AbortSignal {
    const gone = new AbortController();
    const expiry = lifetime && {
      at: lifetime.expiresAt,
      reason: `claim ${name}'s lifetime (${lifetime.text} from its assignment, as Hive set it from the claim's and the pool's claimLifetime) ended at ${new Date(lifetime.expiresAt).toISOString()}: Hive deletes the claim and its cluster`,
    };
    const end = (reason: string) => {
      if (!until.aborted && !gone.signal.aborted) gone.abort(new ClaimedClusterGone(reason));
    };
    let timer: NodeJS.Timeout | undefined;
    const expireLater = () => {
      if (!expiry) return;
      const left = expiry.at - Date.now();
      if (left <= 0) return end(expiry.reason);
      timer = setTimeout(expireLater, Math.min(left, MAX_TIMER_MS)).unref();
    };
    expireLater();
    const stop = AbortSignal.any([until, gone.signal]);
    stop.addEventListener("abort", () => clearTimeout(timer), { once: true });
    poller
      .wait<never>({
        kind: "clusterClaims",
        name,
        what: `claim ${name}`,
        signal: stop,
        judge: (object) => {
          const why = claimGone(object, name);
          return why === undefined ? undefined : { fail: why };
        },
      })
      // Deleted about when its lifetime ends (the hub's clock against ours): Hive deleted it for that.
      .catch((error: unknown) =>
        end(
          expiry && Date.now() >= expiry.at - context.timing.pollMs
            ? expiry.reason
            : (error as Error).message,
        ),
      );
    return gone.signal;
  }

  /**
   * A claimed cluster (its deployment is named as its namespace) that stays running: the pool's
   * hibernateAfter, which Hive copies to the deployment and counts from the claim, is cleared — the
   * claim's lifetime and its deletion bound the cluster's life instead — and a cluster still
   * resuming is waited for until its powerState is Running.
   */
  async function keepRunning(clusterNamespace: string, claim: string, signal: AbortSignal) {
    const read = async () =>
      clusterDeploymentSchema.parse(await hub.get("clusterDeployments", clusterNamespace, clusterNamespace));
    let deployment = await read();
    if (deployment.spec.hibernateAfter !== undefined) {
      await hub.mergePatch(
        "clusterDeployments",
        clusterNamespace,
        { spec: { hibernateAfter: null } },
        clusterNamespace,
      );
    }
    const deadline = Date.now() + config.readySeconds * 1000;
    while (deployment.status.powerState !== "Running") {
      if (Date.now() > deadline) {
        throw new ClustersUnavailableError(
          `claim ${claim}: its cluster's powerState is ${deployment.status.powerState ?? "unset"}, not Running, after ${config.readySeconds} s`,
        );
      }
      await sleep(context.timing.pollMs, undefined, { signal });
      deployment = await read();
    }
    return deployment;
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
          // A hub whose HiveConfig protects deployments from deletion would keep ours (and their
          // cloud clusters) forever after the bot deletes them.
          annotations: {
            ...meta.annotations,
            [HIVE.deleteAfter]: config.deleteAfter,
            [HIVE.protectedDelete]: "false",
          },
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
        // Conditions Hive never clears by itself: waiting on them would only wait out readySeconds.
        const stuck =
          trueCondition(found, "InstallImagesNotResolved") ??
          trueCondition(found, "AuthenticationFailure") ??
          trueCondition(found, "RequirementsMet", "False");
        if (stuck) {
          return {
            fail: `deployment ${name} cannot install: ${stuck.type} (${stuck.reason ?? stuck.status}): ${stuck.message ?? ""}`,
            stuck: true,
          };
        }
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

  /**
   * Gives a quota slot back once everything its attempts made is gone from the hub: deleted (a
   * failed delete is tried again every poll interval) and then removed by Hive, whose finalizers
   * (hive.openshift.io/claim, hive.openshift.io/deprovision) keep a claim or deployment while its
   * cloud cluster is torn down. A teardown not done in readySeconds frees the slot all the same.
   */
  async function retire(attempts: Attempt[], quota: ClusterLeaseKey): Promise<void> {
    const slot = `${quota.runId}|${quota.holder}`;
    retiring.add(slot);
    try {
      for (const attempt of attempts) {
        while (!attempt.givenBack) {
          try {
            await giveBack(attempt.made);
            attempt.givenBack = true;
          } catch (error) {
            context.logger.warn({ err: error, name: attempt.made.name }, "giving back failed; trying again");
            await sleep(context.timing.pollMs, undefined, { signal: stopping.signal });
          }
        }
      }
      await Promise.all(
        attempts.map(({ made }) =>
          poller.wait<void>({
            kind: made.kind === "claim" ? "clusterClaims" : "clusterDeployments",
            name: made.name,
            what: `the teardown of ${made.name}`,
            deadlineMs: config.readySeconds * 1000,
            signal: stopping.signal,
            judge: (object) => (object === undefined ? { done: undefined } : undefined),
          }),
        ),
      );
    } catch (error) {
      if (stopping.signal.aborted) return;
      context.logger.warn(
        { err: error, quota },
        "a teardown outlasted readySeconds; its quota slot is freed",
      );
    }
    retiring.delete(slot);
    await context.keeper.release(quota);
  }

  async function provision(
    request: SourceRequest,
    slot: number,
    pool: string | undefined,
    firstAttempt: number,
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
    /** Every attempt's objects: the slot's quota is held until all of them are gone. */
    const attempts: Attempt[] = [];
    try {
      for (let attempt = firstAttempt; attempt < config.attempts; attempt += 1) {
        const name = objectName(request.runId, request.arm, request.arch, slot, attempt);
        const made: Provisioned = pool ? { kind: "claim", name } : { kind: "deployment", name };
        const current: Attempt = { made, givenBack: false };
        attempts.push(current);
        request.progress(slot, "installing", pool ? `claiming from pool ${pool}` : `installing ${name}`);
        try {
          const { secret, lifetime } = pool
            ? await claim(request, name, pool)
            : { secret: await deploy(request, name), lifetime: undefined };
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
          // A run that moves its clusters itself (crossover) and resumes may adopt one it moved already.
          const runs = [
            request.payload,
            ...(request.moves && request.upgradeTarget ? [request.upgradeTarget] : []),
          ];
          const running = runs.find((p) => state.payload !== undefined && samePayload(state.payload, p));
          if (running === undefined) {
            throw new ClustersUnavailableError(
              `${name} runs ${state.payload ?? "no known payload"}, not ${request.payload}`,
            );
          }
          const cluster: ClusterUnderTest = {
            id: `${config.name}/${name}`,
            source: config.name,
            arch: request.arch,
            payload: running,
            kubeconfig,
          };
          const leased = new AbortController();
          const lapsed = context.keeper.lapsed(quota);
          return {
            slot,
            ...createClusterLease({
              cluster,
              ...(request.upgradeTarget ? { upgradeTarget: request.upgradeTarget } : {}),
              objects,
              // The run's own cluster: it may move it to another payload (crossover by upgrade).
              movable: { pollMs: context.timing.pollMs, timeoutMs: config.upgradeSeconds * 1000 },
              health: { pollMs: context.timing.healthPollMs, failures: context.timing.lostAfterFailures },
              giveBack: async () => {
                leased.abort();
                await giveBack(made);
                current.givenBack = true;
                void retire(attempts, quota);
              },
              ...(lifetime ? { expiresAt: lifetime.expiresAt } : {}),
              lapsed:
                made.kind === "claim"
                  ? AbortSignal.any([
                      lapsed,
                      watchClaim(name, lifetime, AbortSignal.any([leased.signal, stopping.signal])),
                    ])
                  : lapsed,
              onLost: (reason) =>
                context.logger.warn({ cluster: cluster.id, reason }, "cluster under test lost"),
            }),
          };
        } catch (error) {
          // A failed give-back keeps the attempt's objects on the list: retire tries them again
          // and holds the slot's quota until they are gone.
          await giveBack(made).then(
            () => (current.givenBack = true),
            (failure: unknown) =>
              context.logger.warn({ err: failure, name }, "giving back failed; trying again later"),
          );
          if (request.signal.aborted) throw error;
          failures.push((error as Error).message);
          if (error instanceof InstallStuckError) break;
          context.logger.warn({ err: error, name, attempt }, "cluster under test not ready; trying another");
        }
      }
    } catch (error) {
      void retire(attempts, quota);
      throw error;
    }
    void retire(attempts, quota);
    throw new ClustersUnavailableError(
      `${config.name}: no ${request.arch} cluster of ${request.payload} after ${failures.length} attempt${failures.length === 1 ? "" : "s"}: ${failures.join("; ") || `attempts up to ${config.attempts} were made before`}`,
    );
  }

  /**
   * The bot's claims or deployments on the hub, one list per kind and poll interval for every
   * request that asks meanwhile (a hundred runs starting at once cost two lists).
   */
  const listings = new Map<Kind, { at: number; objects: Promise<unknown[]> }>();
  function ours(kind: "clusterClaims" | "clusterDeployments"): Promise<unknown[]> {
    const cached = listings.get(kind);
    if (cached && Date.now() - cached.at < context.timing.pollMs) return cached.objects;
    const objects = hub.list(kind, { namespace, labelSelector: selector });
    listings.set(kind, { at: Date.now(), objects });
    objects.catch(() => listings.delete(kind));
    return objects;
  }

  /**
   * Where each slot's attempts go on: after the newest attempt this run already has on the hub (a
   * run that resumes after a restart adopts it, or — when it is being deleted — starts the next),
   * from 0 when there is none.
   */
  async function firstAttempts(
    request: SourceRequest,
    pool: string | undefined,
  ): Promise<Map<number, number>> {
    const prefix = objectName(request.runId, request.arm, request.arch, 0, 0).replace(NAME_TAIL, "");
    const first = new Map<number, number>();
    for (const object of await ours(pool ? "clusterClaims" : "clusterDeployments")) {
      const metadata = hiveMetadataSchema.parse((object as { metadata: unknown }).metadata);
      const tail = NAME_TAIL.exec(metadata.name);
      if (!tail || metadata.name !== `${prefix}${tail[0]}`) continue;
      const [slot, attempt] = [Number(tail[1]), Number(tail[2])];
      const next = metadata.deletionTimestamp ? attempt + 1 : attempt;
      first.set(slot, Math.max(first.get(slot) ?? 0, next));
    }
    return first;
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
      const first = await firstAttempts(request, pool);
      const settled = await Promise.allSettled(
        request.slots.map((slot) => provision(request, slot, pool, first.get(slot) ?? 0)),
      );
      const leases = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) {
        await Promise.all(leases.map((l) => l.release()));
        throw failed.reason;
      }
      return { leases };
    },
    async reconcile(activeRuns) {
      // Everything is listed before the run store is asked which runs are active: a run that
      // acquires while the answer is on its way made objects the listings did not see, and one
      // whose objects were listed was accepted before the question, so it is in the answer.
      const listed = {
        clusterClaims: await hub.list("clusterClaims", { namespace, labelSelector: selector }),
        clusterDeployments: await hub.list("clusterDeployments", { namespace, labelSelector: selector }),
        clusterImageSets: await hub.list("clusterImageSets", { labelSelector: selector }),
        secrets: await hub.list("secrets", { namespace, labelSelector: selector }),
        leases: await context.leases.holders(config.name),
      };
      const active = await activeRuns();
      const ended = (object: unknown) => {
        const runId = (object as { metadata?: { annotations?: Record<string, string> } }).metadata
          ?.annotations?.[RUN_ID_ANNOTATION];
        return runId !== undefined && !active.has(runId);
      };
      const name = (object: unknown) => (object as { metadata: { name: string } }).metadata.name;
      let released = 0;
      /** The ended runs' claims and deployments, by quota holder: each is on the hub until Hive's teardown ends. */
      const lingering = new Map<string, Attempt[]>();
      for (const kind of ["clusterClaims", "clusterDeployments"] as const satisfies Kind[]) {
        for (const object of listed[kind].filter(ended)) {
          const metadata = hiveMetadataSchema.parse((object as { metadata: unknown }).metadata);
          const made: Provisioned = {
            kind: kind === "clusterClaims" ? "claim" : "deployment",
            name: metadata.name,
          };
          // One being deleted was given back before (by this replica or one that stopped): it counts once.
          if (!metadata.deletionTimestamp) {
            await giveBack(made);
            released += 1;
          }
          const holder = `${metadata.annotations?.[RUN_ID_ANNOTATION]}|${metadata.labels?.[ARM_LABEL]}/${NAME_TAIL.exec(metadata.name)?.[1]}`;
          lingering.set(holder, [...(lingering.get(holder) ?? []), { made, givenBack: true }]);
        }
      }
      // What an attempt made before its deployment (or a deployment deleted by Hive) left behind.
      for (const object of listed.clusterImageSets.filter(ended)) {
        await hub.delete("clusterImageSets", name(object));
      }
      for (const object of listed.secrets.filter(ended)) {
        await hub.delete("secrets", name(object), namespace);
      }
      for (const lease of listed.leases) {
        if (active.has(lease.runId)) continue;
        const left = lingering.get(`${lease.runId}|${lease.holder}`);
        if (left === undefined) {
          await context.keeper.release(lease);
          continue;
        }
        context.keeper.hold(lease);
        void retire(left, lease);
      }
      return released;
    },
    keeps: (key) => retiring.has(`${key.runId}|${key.holder}`),
    stop() {
      stopping.abort(new Error(`${config.name} stopped`));
      poller.stop();
    },
  };
}
