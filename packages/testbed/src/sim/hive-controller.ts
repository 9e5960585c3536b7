import { randomUUID } from "node:crypto";
import { parse as parseYaml } from "yaml";
import { archSchema, type Arch } from "@netstress/core/arch/arch.ts";
import type { KubeObject, ObjectStore } from "./object-store.ts";
import { parseGoDuration } from "@netstress/core/model/parse-go-duration.ts";
import type { ComponentBuild, ResolveRelease } from "./simulated-release.ts";
import type { SimulatedCluster } from "./start-simulated-cluster.ts";

/** A ClusterDeployment by namespace and name. */
export interface DeploymentRef {
  namespace: string;
  name: string;
}

/** Which deployments a fault hits: a share of them (drawn once per deployment) or a predicate. */
export type FaultSelector = number | ((deployment: DeploymentRef) => boolean);

export interface HiveFaults {
  /** Installs that fail: ProvisionFailed=True, Provisioned=False (ProvisionStopped). */
  failInstall?: FaultSelector;
  /** Installs that never finish: Provisioned stays False (Provisioning). */
  neverReady?: FaultSelector;
  /** Clusters lost (their API stops answering) this long after they became ready. */
  lose?: { select: FaultSelector; afterMs: number };
  /**
   * Release images that fail verification (an unsigned payload): InstallImagesNotResolved=True,
   * reason ReleaseImageVerificationFailed, and no install ever starts.
   */
  unresolvedImages?: FaultSelector;
}

/** What a deployment's simulated cluster runs, beyond its payload and arch. */
export interface ClusterSpec {
  version?: string;
  components?: Record<string, ComponentBuild>;
  nodes?: number;
  upgradeMs?: number;
  resolveRelease?: ResolveRelease;
  networkType?: string;
}

export type ClusterFor = (
  request: DeploymentRef & { releaseImage: string; arch: Arch },
) => ClusterSpec | Promise<ClusterSpec>;

type StartCluster = (
  options: { name: string; arch: Arch; payload: string } & ClusterSpec,
) => Promise<SimulatedCluster>;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string;
}

type Phase = "waiting" | "installing" | "installed" | "failed" | "stalled" | "lost" | "deprovisioning";

interface DeploymentState {
  ref: DeploymentRef;
  phase: Phase;
  cluster?: SimulatedCluster;
  timers: NodeJS.Timeout[];
  deleteAfterSet?: boolean;
  /** When the running cluster hibernates by spec.hibernateAfter, while that is scheduled. */
  hibernation?: { at: number; timer: NodeJS.Timeout };
  /** A power change (hibernating or resuming) under way. */
  powering?: boolean;
}

/** Hive's labels and annotations. */
const DELETE_AFTER = "hive.openshift.io/delete-after";
const VERSION_LABEL = "hive.openshift.io/version-major-minor-patch";
const PLATFORM_LABEL = "hive.openshift.io/cluster-platform";
const REGION_LABEL = "hive.openshift.io/cluster-region";
const POOL_LABEL = "hive.openshift.io/clusterpool-name";
const POOL_NAMESPACE_LABEL = "hive.openshift.io/clusterpool-namespace";
const PROTECTED_DELETE = "hive.openshift.io/protected-delete";
const DEPROVISION_FINALIZER = "hive.openshift.io/deprovision";
const CLAIM_FINALIZER = "hive.openshift.io/claim";
/** The Role and RoleBinding Hive makes in a claimed cluster's namespace for the claim's subjects. */
const CLAIM_OWNER = "hive-claim-owner";

const conditionsOf = (o: KubeObject) => ((o.status?.conditions ?? []) as Condition[]).slice();
function setConditions(object: KubeObject, next: Condition[]): void {
  const now = new Date().toISOString();
  let conditions = conditionsOf(object);
  for (const c of next) {
    const current = conditions.find((x) => x.type === c.type);
    const lastTransitionTime = current && current.status === c.status ? current.lastTransitionTime : now;
    conditions = [
      ...conditions.filter((x) => x.type !== c.type),
      { ...c, lastTransitionTime, lastProbeTime: now },
    ];
  }
  object.status = { ...object.status, conditions };
}
const hasCondition = (o: KubeObject, type: string, status: string, reason?: string) =>
  conditionsOf(o).some(
    (c) => c.type === type && c.status === status && (reason === undefined || c.reason === reason),
  );

interface PoolSpec {
  size?: number;
  maxSize?: number;
  runningCount?: number;
  hibernateAfter?: string;
  imageSetRef?: { name: string };
  platform?: Record<string, { region?: string }>;
  baseDomain?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  installConfigSecretTemplateRef?: { name: string };
  pullSecretRef?: { name: string };
}

interface PoolRef {
  namespace: string;
  poolName: string;
  claimName?: string;
  claimedTimestamp?: string;
}
const poolRefOf = (cd: KubeObject) => cd.spec?.clusterPoolRef as PoolRef | undefined;
const key = (ref: DeploymentRef) => `${ref.namespace}/${ref.name}`;

/**
 * Hive on a hub, as far as clusters under test need it: a ClusterDeployment installs (after
 * `installMs`) a simulated cluster of its release image — `spec.provisioning.releaseImage` or its
 * ClusterImageSet's — and the arch of its install-config Secret (`compute[0].architecture`, else
 * `controlPlane.architecture`, else amd64), then writes the admin kubeconfig Secret, sets
 * `spec.clusterMetadata`, `spec.installed` and the Provisioned/Ready conditions; a ClusterPool keeps
 * `size` unclaimed deployments (each in a namespace of its own, one more per waiting claim, those
 * beyond `runningCount` hibernated); a ClusterClaim gets one of them (`spec.namespace`,
 * Pending=False, ClusterRunning once its powerState is Running, the hive-claim-owner Role bound to
 * its `spec.subjects`) or waits; `spec.hibernateAfter` hibernates a claimed or standalone cluster;
 * a deleted claim or deployment stays (finalizers `hive.openshift.io/claim`,
 * `hive.openshift.io/deprovision`) until its cluster's teardown ends, forever under
 * `hive.openshift.io/protected-delete`; `hive.openshift.io/delete-after` and the claim's lifetime
 * delete them in time (durations × `timeScale`). Every change goes through one idempotent
 * reconciliation of the whole hub, scheduled after each change.
 */
export class HiveController {
  private readonly deployments = new Map<string, DeploymentState>();
  private readonly claimTimers = new Map<string, NodeJS.Timeout>();
  private readonly unsubscribe: () => void;
  private scheduled = false;
  private stopped = false;
  readonly counts = { installsStarted: 0, installsFailed: 0, clustersStarted: 0, clustersStopped: 0 };

  constructor(
    private readonly store: ObjectStore,
    private readonly options: {
      installMs: number;
      /** How long a deleted deployment's deprovision (cloud teardown) takes before its finalizer goes. */
      teardownMs: number;
      /** How long a hibernating cluster takes to resume. */
      resumeMs: number;
      /** HiveConfig's deleteProtection: new deployments get hive.openshift.io/protected-delete "true". */
      protectedDelete: boolean;
      timeScale: number;
      clusterFor: ClusterFor;
      startCluster: StartCluster;
      faults: HiveFaults;
      random: () => number;
    },
  ) {
    this.unsubscribe = store.subscribe((event) => {
      if (
        ["clusterdeployments", "clusterpools", "clusterclaims", "clusterimagesets", "secrets"].includes(
          event.resource,
        )
      ) {
        this.schedule();
      }
    });
    this.schedule();
  }

  setFaults(faults: HiveFaults): void {
    this.options.faults = faults;
  }

  clusterOf(ref: DeploymentRef): SimulatedCluster | undefined {
    return this.deployments.get(key(ref))?.cluster;
  }

  clusters(): SimulatedCluster[] {
    return [...this.deployments.values()].flatMap((d) =>
      d.cluster && d.phase === "installed" ? [d.cluster] : [],
    );
  }

  /** Stops a running cluster as if it were lost; Hive then reports it Unreachable. */
  async loseCluster(ref: DeploymentRef): Promise<void> {
    const state = this.deployments.get(key(ref));
    if (!state?.cluster || state.phase !== "installed") return;
    state.phase = "lost";
    const url = state.cluster.url;
    await this.stopCluster(state);
    this.store.update("clusterdeployments", ref.namespace, ref.name, (cd) => {
      setConditions(cd, [
        {
          type: "Unreachable",
          status: "True",
          reason: "ErrorConnectingToCluster",
          message: `cannot reach the cluster's API at ${url}`,
        },
        {
          type: "Ready",
          status: "False",
          reason: "Unreachable",
          message: "the cluster's API does not answer",
        },
      ]);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    for (const timer of this.claimTimers.values()) clearTimeout(timer);
    await Promise.all([...this.deployments.values()].map((d) => this.stopCluster(d)));
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.stopped) this.reconcile();
    });
  }

  private later(state: DeploymentState | undefined, ms: number, action: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      if (!this.stopped) action();
    }, ms);
    state?.timers.push(timer);
    return timer;
  }

  private hits(selector: FaultSelector | undefined, ref: DeploymentRef): boolean {
    if (selector === undefined) return false;
    return typeof selector === "number" ? this.options.random() < selector : selector(ref);
  }

  private reconcile(): void {
    this.releaseDeletedClaims();
    const cds = this.store.list("clusterdeployments", undefined, () => true).items;
    const present = new Set(cds.map((cd) => key(cd.metadata)));
    for (const [k, state] of this.deployments) {
      if (!present.has(k)) this.forget(k, state);
    }
    for (const cd of cds) this.reconcileDeployment(cd);
    for (const pool of this.store.list("clusterpools", undefined, () => true).items) this.reconcilePool(pool);
    for (const claim of this.store.list("clusterclaims", undefined, () => true).items)
      this.reconcileClaim(claim);
  }

  /** A deployment is gone: its cluster stops, its kubeconfig Secret and pool namespace go with it. */
  private forget(k: string, state: DeploymentState): void {
    this.deployments.delete(k);
    for (const timer of state.timers) clearTimeout(timer);
    void this.stopCluster(state);
    const { namespace, name } = state.ref;
    for (const secret of this.store.list("secrets", namespace, () => true).items) {
      if (secret.metadata.labels?.["hive.openshift.io/cluster-deployment-name"] === name) {
        this.store.delete("secrets", namespace, secret.metadata.name);
      }
    }
    const ns = this.store.get("namespaces", "", namespace);
    if (ns?.metadata.labels?.[POOL_LABEL]) this.store.delete("namespaces", "", namespace);
  }

  private async stopCluster(state: DeploymentState): Promise<void> {
    const cluster = state.cluster;
    if (!cluster) return;
    state.cluster = undefined;
    this.counts.clustersStopped += 1;
    await cluster.stop();
  }

  private reconcileDeployment(cd: KubeObject): void {
    const ref = { namespace: cd.metadata.namespace, name: cd.metadata.name };
    let state = this.deployments.get(key(ref));
    if (!state) {
      state = { ref, phase: cd.spec?.installed ? "installed" : "waiting", timers: [] };
      this.deployments.set(key(ref), state);
    }
    if (cd.metadata.deletionTimestamp) return this.deprovision(state, cd);
    const protect = this.options.protectedDelete && cd.metadata.annotations?.[PROTECTED_DELETE] === undefined;
    if (!cd.metadata.finalizers?.includes(DEPROVISION_FINALIZER) || protect) {
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
        o.metadata.finalizers = [...new Set([...(o.metadata.finalizers ?? []), DEPROVISION_FINALIZER])];
        if (protect) o.metadata.annotations = { ...o.metadata.annotations, [PROTECTED_DELETE]: "true" };
      });
    }
    if (state.phase === "installed") this.reconcilePower(state, cd);
    const deleteAfter = cd.metadata.annotations?.[DELETE_AFTER];
    if (deleteAfter && !state.deleteAfterSet) {
      state.deleteAfterSet = true;
      const after = this.duration(deleteAfter);
      if (after !== undefined) {
        const elapsed = Date.now() - Date.parse(cd.metadata.creationTimestamp ?? new Date().toISOString());
        this.later(state, Math.max(0, after - elapsed), () =>
          this.deleteIfPresent("clusterdeployments", ref),
        );
      }
    }
    if (state.phase !== "waiting") return;
    const requirements = this.requirements(cd);
    if ("missing" in requirements) {
      if (!hasCondition(cd, "RequirementsMet", "False", requirements.reason)) {
        this.store.update("clusterdeployments", ref.namespace, ref.name, (o) =>
          setConditions(o, [
            {
              type: "RequirementsMet",
              status: "False",
              reason: requirements.reason,
              message: requirements.missing,
            },
            { type: "Provisioned", status: "False", reason: "Provisioning", message: requirements.missing },
          ]),
        );
      }
      return;
    }
    state.phase = "installing";
    this.counts.installsStarted += 1;
    const platform = (cd.spec?.platform ?? {}) as Record<string, { region?: string }>;
    const platformName = Object.keys(platform)[0];
    const region = platformName ? platform[platformName]?.region : undefined;
    this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
      o.metadata.labels = {
        ...o.metadata.labels,
        ...(platformName ? { [PLATFORM_LABEL]: platformName } : {}),
        ...(region ? { [REGION_LABEL]: region } : {}),
      };
      o.status = { ...o.status, installStartedTimestamp: new Date().toISOString() };
      setConditions(o, [
        {
          type: "RequirementsMet",
          status: "True",
          reason: "AllRequirementsMet",
          message: "All pre-provision requirements met",
        },
        {
          type: "Provisioned",
          status: "False",
          reason: "Provisioning",
          message: "Cluster provision created",
        },
        { type: "ProvisionFailed", status: "False", reason: "Initialized" },
        { type: "Ready", status: "False", reason: "Provisioning" },
      ]);
    });
    const { faults } = this.options;
    if (this.hits(faults.unresolvedImages, ref)) {
      state.phase = "stalled";
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) =>
        setConditions(o, [
          {
            type: "InstallImagesNotResolved",
            status: "True",
            reason: "ReleaseImageVerificationFailed",
            message: `release image ${requirements.releaseImage} failed verification: no valid signature (simulated)`,
          },
        ]),
      );
      return;
    }
    if (this.hits(faults.neverReady, ref)) {
      state.phase = "stalled";
      return;
    }
    const fail = this.hits(faults.failInstall, ref);
    const { releaseImage, arch } = requirements;
    this.later(state, this.options.installMs, () => {
      if (fail)
        return this.failInstall(
          state,
          "InstallFailed",
          "the installer failed: bootstrap failed to complete (simulated)",
        );
      void this.install(state, releaseImage, arch);
    });
  }

  /**
   * A deleted deployment: its cluster stops and, after the teardown, its deprovision finalizer goes
   * (and with it the object) — never while hive.openshift.io/protected-delete is true, as Hive
   * blocks the deprovision of a protected deployment.
   */
  private deprovision(state: DeploymentState, cd: KubeObject): void {
    const { ref } = state;
    if (state.phase !== "deprovisioning") {
      state.phase = "deprovisioning";
      for (const timer of state.timers) clearTimeout(timer);
      state.timers = [];
      state.hibernation = undefined;
      void this.stopCluster(state);
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) =>
        setConditions(o, [
          {
            type: "Provisioned",
            status: "False",
            reason: "Deprovisioning",
            message: "Cluster is being deprovisioned",
          },
          {
            type: "Ready",
            status: "False",
            reason: "ClusterDeploymentDeleted",
            message: "Cluster Deployment has been deleted",
          },
        ]),
      );
    }
    const protectedDelete = ["1", "t", "T", "true", "TRUE", "True"].includes(
      cd.metadata.annotations?.[PROTECTED_DELETE] ?? "",
    );
    if (state.timers.length > 0 || protectedDelete) return;
    this.later(state, this.options.teardownMs, () =>
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
        o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== DEPROVISION_FINALIZER);
      }),
    );
  }

  /**
   * Hibernation: spec.powerState Hibernating stops the cluster (its API stops answering), Running
   * resumes it in `resumeMs`; spec.hibernateAfter hibernates a running cluster that long after the
   * latest of its install, its claim and its last resume — never an unclaimed pool cluster.
   */
  private reconcilePower(state: DeploymentState, cd: KubeObject): void {
    const { ref } = state;
    const wanted = (cd.spec?.powerState as string | undefined) ?? "Running";
    const current = cd.status?.powerState as string | undefined;
    if (!state.powering && wanted === "Hibernating" && current === "Running") {
      state.cluster?.api.setFaults({ errorRate: 1 });
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
        o.status = { ...o.status, powerState: "Hibernating" };
        setConditions(o, [
          { type: "Hibernating", status: "True", reason: "Hibernating", message: "Cluster is stopped" },
          { type: "Ready", status: "False", reason: "StoppingOrHibernating", message: "Cluster is stopped" },
        ]);
      });
    } else if (!state.powering && wanted === "Running" && current === "Hibernating") {
      state.powering = true;
      this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
        o.status = { ...o.status, powerState: "WaitingForNodes" };
        setConditions(o, [
          {
            type: "Hibernating",
            status: "False",
            reason: "ResumingOrRunning",
            message: "Cluster is resuming",
          },
          { type: "Ready", status: "False", reason: "WaitingForNodes", message: "Waiting for nodes" },
        ]);
      });
      this.later(state, this.options.resumeMs, () => {
        state.powering = false;
        state.cluster?.api.setFaults({ errorRate: 0 });
        this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
          o.status = { ...o.status, powerState: "Running" };
          setConditions(o, [
            { type: "Ready", status: "True", reason: "Running", message: "Cluster is running" },
          ]);
        });
      });
    }
    const poolRef = poolRefOf(cd);
    const unclaimedPoolCluster =
      Boolean(poolRef?.poolName) && !(poolRef?.claimName && poolRef.claimedTimestamp);
    const after = cd.spec?.hibernateAfter as string | undefined;
    const afterMs = after ? this.duration(after) : undefined;
    if (afterMs === undefined || unclaimedPoolCluster || wanted !== "Running" || current !== "Running") {
      if (state.hibernation) clearTimeout(state.hibernation.timer);
      state.hibernation = undefined;
      return;
    }
    const readySince = conditionsOf(cd).find(
      (c) => c.type === "Ready" && c.status === "True",
    )?.lastTransitionTime;
    const since = [cd.status?.installedTimestamp, poolRef?.claimedTimestamp, readySince].map((t) =>
      typeof t === "string" ? Date.parse(t) : 0,
    );
    const at = Math.max(...since) + afterMs;
    if (state.hibernation?.at === at) return;
    if (state.hibernation) clearTimeout(state.hibernation.timer);
    state.hibernation = {
      at,
      timer: this.later(state, Math.max(0, at - Date.now()), () => {
        state.hibernation = undefined;
        this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
          o.spec = { ...o.spec, powerState: "Hibernating" };
        });
      }),
    };
  }

  private failInstall(state: DeploymentState, reason: string, message: string): void {
    if (this.deployments.get(key(state.ref)) !== state || state.phase !== "installing") return;
    state.phase = "failed";
    this.counts.installsFailed += 1;
    this.store.update("clusterdeployments", state.ref.namespace, state.ref.name, (o) =>
      setConditions(o, [
        { type: "ProvisionFailed", status: "True", reason, message },
        {
          type: "ProvisionStopped",
          status: "True",
          reason: "InstallAttemptsLimitReached",
          message: "Install attempts limit reached",
        },
        {
          type: "Provisioned",
          status: "False",
          reason: "ProvisionStopped",
          message: "Provisioning failed terminally (see ProvisionFailed condition for details)",
        },
      ]),
    );
  }

  private async install(state: DeploymentState, releaseImage: string, arch: Arch): Promise<void> {
    const { ref } = state;
    let cluster: SimulatedCluster;
    try {
      const spec = await this.options.clusterFor({ ...ref, releaseImage, arch });
      cluster = await this.options.startCluster({ ...spec, name: ref.name, arch, payload: releaseImage });
    } catch (error) {
      return this.failInstall(
        state,
        "InstallFailed",
        `cannot install ${releaseImage}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    this.counts.clustersStarted += 1;
    if (this.stopped || this.deployments.get(key(ref)) !== state || state.phase !== "installing") {
      this.counts.clustersStopped += 1;
      return cluster.stop();
    }
    state.cluster = cluster;
    state.phase = "installed";
    const secretName = `${ref.name}-${randomUUID().slice(0, 5)}-admin-kubeconfig`;
    const kubeconfig = Buffer.from(cluster.kubeconfig).toString("base64");
    this.store.create("secrets", {
      metadata: {
        name: secretName,
        namespace: ref.namespace,
        labels: {
          "hive.openshift.io/cluster-deployment-name": ref.name,
          "hive.openshift.io/secret-type": "kubeconfig",
        },
      },
      type: "Opaque",
      data: { kubeconfig, "raw-kubeconfig": kubeconfig },
    });
    const version = (
      cluster.api.store.get("clusterversions", "", "version")?.status as
        { desired?: { version?: string } } | undefined
    )?.desired?.version;
    const now = new Date().toISOString();
    this.store.update("clusterdeployments", ref.namespace, ref.name, (o) => {
      const infraID = `${ref.name}-${randomUUID().slice(0, 5)}`;
      o.metadata.labels = { ...o.metadata.labels, ...(version ? { [VERSION_LABEL]: version } : {}) };
      o.spec = {
        ...o.spec,
        installed: true,
        clusterMetadata: { clusterID: randomUUID(), infraID, adminKubeconfigSecretRef: { name: secretName } },
      };
      o.status = {
        ...o.status,
        apiURL: cluster.url,
        webConsoleURL: `https://console-openshift-console.apps.${ref.name}.example.test`,
        installedTimestamp: now,
        ...(version ? { installVersion: version } : {}),
        powerState: "Running",
      };
      setConditions(o, [
        { type: "Provisioned", status: "True", reason: "Provisioned", message: "Cluster is provisioned" },
        { type: "ProvisionFailed", status: "False", reason: "ProvisionSucceeded" },
        { type: "Ready", status: "True", reason: "Running", message: "Cluster is running" },
        { type: "Hibernating", status: "False", reason: "ResumingOrRunning" },
        { type: "Unreachable", status: "False", reason: "ClusterReachable" },
      ]);
    });
    const lose = this.options.faults.lose;
    if (lose && this.hits(lose.select, ref))
      this.later(state, lose.afterMs, () => void this.loseCluster(ref));
  }

  /** What a deployment needs before it installs: its release image and arch, or what is missing. */
  private requirements(
    cd: KubeObject,
  ): { releaseImage: string; arch: Arch } | { missing: string; reason: string } {
    const provisioning = (cd.spec?.provisioning ?? {}) as {
      releaseImage?: string;
      imageSetRef?: { name?: string };
      installConfigSecretRef?: { name?: string };
    };
    let releaseImage = provisioning.releaseImage;
    if (!releaseImage) {
      const imageSet = provisioning.imageSetRef?.name;
      if (!imageSet) {
        return {
          reason: "NoReleaseImage",
          missing: "spec.provisioning names neither releaseImage nor imageSetRef",
        };
      }
      releaseImage = (
        this.store.get("clusterimagesets", "", imageSet)?.spec as { releaseImage?: string } | undefined
      )?.releaseImage;
      if (!releaseImage) {
        return {
          reason: "ClusterImageSetNotFound",
          missing: `ClusterImageSet ${imageSet} does not exist or has no spec.releaseImage`,
        };
      }
    }
    const secretName = provisioning.installConfigSecretRef?.name;
    if (!secretName) return { releaseImage, arch: "amd64" };
    const secret = this.store.get("secrets", cd.metadata.namespace, secretName);
    const text = secret?.data?.["install-config.yaml"];
    if (!text) {
      return {
        reason: "InstallConfigSecretNotFound",
        missing: `Secret ${secretName} with install-config.yaml does not exist in ${cd.metadata.namespace}`,
      };
    }
    let installConfig: { compute?: { architecture?: string }[]; controlPlane?: { architecture?: string } };
    try {
      installConfig = (parseYaml(Buffer.from(text, "base64").toString("utf8")) ?? {}) as typeof installConfig;
    } catch (error) {
      return {
        reason: "InvalidInstallConfig",
        missing: `install-config.yaml in Secret ${secretName} is not YAML: ${String(error)}`,
      };
    }
    const wanted =
      installConfig.compute?.[0]?.architecture ?? installConfig.controlPlane?.architecture ?? "amd64";
    const arch = archSchema.safeParse(wanted);
    if (!arch.success) {
      return {
        reason: "InvalidInstallConfig",
        missing: `install-config.yaml in Secret ${secretName} asks for architecture ${JSON.stringify(wanted)}; use one of ${archSchema.options.join(", ")}`,
      };
    }
    return { releaseImage, arch: arch.data };
  }

  /** A duration × timeScale; one that does not parse is ignored, as Hive logs and ignores it. */
  private duration(text: string): number | undefined {
    const ms = parseGoDuration(text);
    return ms === undefined ? undefined : ms * this.options.timeScale;
  }

  private deleteIfPresent(resource: string, ref: DeploymentRef): void {
    if (this.store.get(resource, ref.namespace, ref.name))
      this.store.delete(resource, ref.namespace, ref.name);
  }

  private reconcilePool(pool: KubeObject): void {
    const spec = (pool.spec ?? {}) as PoolSpec;
    const { namespace, name } = pool.metadata;
    const members = this.store
      .list("clusterdeployments", undefined, () => true)
      .items.filter(
        (cd) =>
          poolRefOf(cd)?.namespace === namespace &&
          poolRefOf(cd)?.poolName === name &&
          !cd.metadata.deletionTimestamp,
      );
    // Claims waiting for a cluster make the pool grow beyond its size (up to maxSize), as Hive's does.
    const waiting = this.store
      .list("clusterclaims", namespace, () => true)
      .items.filter(
        (c) => c.spec?.clusterPoolName === name && !c.spec?.namespace && !c.metadata.deletionTimestamp,
      ).length;
    // A broken unclaimed cluster is replaced, as Hive does.
    for (const cd of members) {
      if (!poolRefOf(cd)?.claimName && hasCondition(cd, "ProvisionStopped", "True")) {
        this.store.delete("clusterdeployments", cd.metadata.namespace, cd.metadata.name);
      }
    }
    const unclaimed = members.filter(
      (cd) => !poolRefOf(cd)?.claimName && !hasCondition(cd, "ProvisionStopped", "True"),
    );
    const size = spec.size ?? 0;
    const wanted = size + waiting;
    const room = spec.maxSize === undefined ? Infinity : spec.maxSize - members.length;
    for (let i = unclaimed.length; i < wanted && i - unclaimed.length < room; i++)
      this.createPoolDeployment(pool, spec);
    const ready = (cd: KubeObject) => hasCondition(cd, "Ready", "True");
    for (const cd of unclaimed
      .sort((a, b) => Number(ready(a)) - Number(ready(b)))
      .slice(0, Math.max(0, unclaimed.length - wanted))) {
      this.store.delete("clusterdeployments", cd.metadata.namespace, cd.metadata.name);
    }
    // Installed unclaimed clusters beyond runningCount hibernate; claiming one resumes it.
    const installed = unclaimed.filter((cd) => cd.spec?.installed);
    installed.forEach((cd, i) => {
      const powerState = i < (spec.runningCount ?? 0) ? "Running" : "Hibernating";
      if ((cd.spec?.powerState ?? "Running") !== powerState) {
        this.store.update("clusterdeployments", cd.metadata.namespace, cd.metadata.name, (o) => {
          o.spec = { ...o.spec, powerState };
        });
      }
    });
    const status = {
      size: Math.min(unclaimed.length, size),
      // Hive's ready: installed, running or hibernating; standby: still installing.
      ready: unclaimed.filter((cd) => cd.spec?.installed).length,
      standby: unclaimed.filter((cd) => !cd.spec?.installed).length,
    };
    const current = (pool.status ?? {}) as { size?: number; ready?: number; standby?: number };
    if (
      current.size !== status.size ||
      current.ready !== status.ready ||
      current.standby !== status.standby ||
      !hasCondition(pool, "CapacityAvailable", "True")
    ) {
      this.store.update("clusterpools", namespace, name, (o) => {
        o.status = { ...o.status, ...status };
        setConditions(o, [
          {
            type: "CapacityAvailable",
            status: "True",
            reason: "Available",
            message: "Pool is not at capacity",
          },
        ]);
      });
    }
  }

  private createPoolDeployment(pool: KubeObject, spec: PoolSpec): void {
    const { namespace: poolNamespace, name: poolName } = pool.metadata;
    const name = `${poolName}-${Math.random().toString(36).slice(2, 7).padEnd(5, "x")}`;
    this.store.create("namespaces", {
      metadata: {
        name,
        namespace: "",
        labels: { [POOL_LABEL]: poolName, [POOL_NAMESPACE_LABEL]: poolNamespace },
      },
      status: { phase: "Active" },
    });
    let installConfigSecretRef: { name: string } | undefined;
    const template = spec.installConfigSecretTemplateRef
      ? this.store.get("secrets", poolNamespace, spec.installConfigSecretTemplateRef.name)
      : undefined;
    if (template) {
      installConfigSecretRef = { name: `${name}-install-config` };
      this.store.create("secrets", {
        metadata: {
          name: installConfigSecretRef.name,
          namespace: name,
          labels: { "hive.openshift.io/cluster-deployment-name": name },
        },
        type: "Opaque",
        data: { ...template.data },
      });
    }
    this.store.create("clusterdeployments", {
      metadata: {
        name,
        namespace: name,
        labels: { ...spec.labels },
        annotations: { ...spec.annotations },
      },
      spec: {
        clusterName: name,
        baseDomain: spec.baseDomain ?? "example.test",
        platform: spec.platform ?? {},
        ...(spec.pullSecretRef ? { pullSecretRef: spec.pullSecretRef } : {}),
        clusterPoolRef: { namespace: poolNamespace, poolName },
        ...(spec.hibernateAfter ? { hibernateAfter: spec.hibernateAfter } : {}),
        provisioning: {
          ...(spec.imageSetRef ? { imageSetRef: spec.imageSetRef } : {}),
          ...(installConfigSecretRef ? { installConfigSecretRef } : {}),
        },
        installed: false,
      },
    });
  }

  private reconcileClaim(found: KubeObject): void {
    if (found.metadata.deletionTimestamp) return;
    const { namespace, name } = found.metadata;
    const claim = found.metadata.finalizers?.includes(CLAIM_FINALIZER)
      ? found
      : this.store.update("clusterclaims", namespace, name, (o) => {
          o.metadata.finalizers = [...(o.metadata.finalizers ?? []), CLAIM_FINALIZER];
        })!;
    const spec = (claim.spec ?? {}) as { clusterPoolName?: string; namespace?: string; lifetime?: string };
    const claimKey = `${namespace}/${name}`;
    const pool = spec.clusterPoolName
      ? this.store.get("clusterpools", namespace, spec.clusterPoolName)
      : undefined;
    const cds = this.store.list("clusterdeployments", undefined, () => true).items;
    let assigned = cds.find((cd) => {
      const ref = poolRefOf(cd);
      return ref?.namespace === namespace && ref.poolName === spec.clusterPoolName && ref.claimName === name;
    });
    if (!assigned && spec.namespace) {
      // Its cluster was deleted under it.
      if (!hasCondition(claim, "ClusterRunning", "False", "ClusterDeleted")) {
        this.store.update("clusterclaims", namespace, name, (o) =>
          setConditions(o, [
            {
              type: "ClusterRunning",
              status: "False",
              reason: "ClusterDeleted",
              message: "Assigned cluster has been deleted",
            },
          ]),
        );
      }
      return;
    }
    if (!assigned) {
      if (!pool) {
        if (!hasCondition(claim, "Pending", "True", "ClusterPoolNotFound")) {
          this.store.update("clusterclaims", namespace, name, (o) =>
            setConditions(o, [
              {
                type: "Pending",
                status: "True",
                reason: "ClusterPoolNotFound",
                message: `no ClusterPool ${spec.clusterPoolName ?? ""} in ${namespace}`,
              },
            ]),
          );
        }
        return;
      }
      const free = cds.filter((cd) => {
        const ref = poolRefOf(cd);
        return (
          ref?.namespace === namespace &&
          ref.poolName === pool.metadata.name &&
          !ref.claimName &&
          !hasCondition(cd, "ProvisionStopped", "True")
        );
      });
      assigned =
        free.find((cd) => hasCondition(cd, "Ready", "True")) ??
        free.find((cd) => cd.spec?.installed) ??
        free[0];
      if (!assigned) {
        if (!hasCondition(claim, "Pending", "True", "NoClusters")) {
          this.store.update("clusterclaims", namespace, name, (o) =>
            setConditions(o, [
              {
                type: "Pending",
                status: "True",
                reason: "NoClusters",
                message: "No clusters in pool are ready to be claimed",
              },
            ]),
          );
        }
        return;
      }
      const claimedTimestamp = new Date().toISOString();
      assigned = this.store.update(
        "clusterdeployments",
        assigned.metadata.namespace,
        assigned.metadata.name,
        (o) => {
          o.spec = {
            ...o.spec,
            clusterPoolRef: { ...poolRefOf(o), claimName: name, claimedTimestamp },
            powerState: "Running",
          };
        },
      )!;
      const lifetime = this.claimLifetime(spec.lifetime, pool);
      this.store.update("clusterclaims", namespace, name, (o) => {
        o.spec = { ...o.spec, namespace: assigned!.metadata.namespace };
        if (lifetime) o.status = { ...o.status, lifetime: lifetime.text };
        setConditions(o, [
          { type: "Pending", status: "False", reason: "ClusterClaimed", message: "Cluster claimed" },
        ]);
      });
      if (lifetime && !this.claimTimers.has(claimKey)) {
        this.claimTimers.set(
          claimKey,
          this.later(undefined, lifetime.ms, () => {
            this.claimTimers.delete(claimKey);
            this.deleteIfPresent("clusterclaims", { namespace, name });
          }),
        );
      }
      return;
    }
    this.grantClaimOwner(claim, assigned);
    // As Hive: a deleting cluster is ClusterDeleting; otherwise Running exactly when its powerState is.
    const running = !assigned.metadata.deletionTimestamp && assigned.status?.powerState === "Running";
    const [reason, message] = assigned.metadata.deletionTimestamp
      ? ["ClusterDeleting", "Assigned cluster has been marked for deletion"]
      : running
        ? ["Running", "Cluster is running"]
        : ["Resuming", "Waiting for cluster to be running"];
    if (!hasCondition(claim, "ClusterRunning", running ? "True" : "False", reason)) {
      this.store.update("clusterclaims", namespace, name, (o) =>
        setConditions(o, [{ type: "ClusterRunning", status: running ? "True" : "False", reason, message }]),
      );
    }
  }

  /**
   * The claim's subjects may use its cluster, and nobody else through it: the hive-claim-owner Role
   * (every Hive kind, and get of the admin kubeconfig Secret) bound to spec.subjects in the
   * cluster's namespace, once the cluster has its kubeconfig.
   */
  private grantClaimOwner(claim: KubeObject, cd: KubeObject): void {
    const namespace = cd.metadata.namespace;
    const secret = (cd.spec?.clusterMetadata as { adminKubeconfigSecretRef?: { name?: string } } | undefined)
      ?.adminKubeconfigSecretRef?.name;
    if (!secret || cd.metadata.deletionTimestamp) return;
    const apply = (resource: string, fields: Record<string, unknown>) => {
      const current = this.store.get(resource, namespace, CLAIM_OWNER);
      if (!current) this.store.create(resource, { metadata: { name: CLAIM_OWNER, namespace }, ...fields });
      else if (Object.entries(fields).some(([k, v]) => JSON.stringify(current[k]) !== JSON.stringify(v)))
        this.store.update(resource, namespace, CLAIM_OWNER, (o) => Object.assign(o, fields));
    };
    apply("roles", {
      rules: [
        { apiGroups: ["hive.openshift.io"], resources: ["*"], verbs: ["*"] },
        { apiGroups: [""], resources: ["secrets"], resourceNames: [secret], verbs: ["get"] },
      ],
    });
    apply("rolebindings", {
      subjects: claim.spec?.subjects ?? [],
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: CLAIM_OWNER },
    });
  }

  /** The claim's lifetime: its own, else the pool's default, never above the pool's maximum. */
  private claimLifetime(own: string | undefined, pool: KubeObject): { text: string; ms: number } | undefined {
    const limits = (pool.spec?.claimLifetime ?? {}) as { default?: string; maximum?: string };
    const candidates = [own ?? limits.default, limits.maximum].filter((t): t is string => Boolean(t));
    const parsed = candidates.flatMap((text) => {
      const ms = this.duration(text);
      return ms === undefined ? [] : [{ text, ms }];
    });
    return parsed.sort((a, b) => a.ms - b.ms)[0];
  }

  /**
   * A deleted claim, as Hive's claim controller and its `hive.openshift.io/claim` finalizer have it:
   * its Role and RoleBinding go, its deployment is deleted, and the claim itself goes only once that
   * deployment is gone (its deprovision done).
   */
  private releaseDeletedClaims(): void {
    const claims = this.store.list("clusterclaims", undefined, () => true).items;
    const live = new Set(
      claims
        .filter((c) => !c.metadata.deletionTimestamp)
        .map((c) => `${c.metadata.namespace}/${c.metadata.name}`),
    );
    for (const [claimKey, timer] of this.claimTimers) {
      if (!live.has(claimKey)) {
        clearTimeout(timer);
        this.claimTimers.delete(claimKey);
      }
    }
    for (const cd of this.store.list("clusterdeployments", undefined, () => true).items) {
      const ref = poolRefOf(cd);
      if (
        ref?.claimName &&
        !live.has(`${ref.namespace}/${ref.claimName}`) &&
        !cd.metadata.deletionTimestamp
      ) {
        this.store.delete("clusterdeployments", cd.metadata.namespace, cd.metadata.name);
      }
    }
    for (const claim of claims.filter((c) => c.metadata.deletionTimestamp)) {
      const { namespace, name } = claim.metadata;
      const clusterNamespace = claim.spec?.namespace as string | undefined;
      const cd = clusterNamespace
        ? this.store.get("clusterdeployments", clusterNamespace, clusterNamespace)
        : undefined;
      if (clusterNamespace) {
        for (const resource of ["rolebindings", "roles"])
          this.deleteIfPresent(resource, { namespace: clusterNamespace, name: CLAIM_OWNER });
      }
      const ref = cd && poolRefOf(cd);
      if (ref?.namespace === namespace && ref.claimName === name) continue;
      this.store.update("clusterclaims", namespace, name, (o) => {
        o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== CLAIM_FINALIZER);
      });
    }
  }
}
