import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ExpectedPair } from "./compute-disruption.ts";
import { ExtError } from "./ext-error.ts";
import type { Connection, NetworkPath } from "@netstress/core/model/network-paths.ts";
import type { ProbeCluster, ProbePodStatus } from "./probe-cluster.ts";
import { parseProbeLines } from "./probe-line.ts";
import { PROBE_NAMESPACE_LABELS } from "@netstress/core/kube/probe-namespace-labels.ts";
import { PROBE_APP_LABEL, probePodManifest } from "./probe-pod-manifest.ts";
import type { ProbeTargetInput } from "./probe-target.ts";

export interface ProbeSettings {
  /** By digest (readExtSettings refuses a tag); undefined: nobody named one, and no probe starts. */
  image: string | undefined;
  intervalMs: number;
  timeoutMs: number;
  /** How long probe pods may take to listen (image pull included). */
  startTimeoutMs: number;
}

/** Probe pods up and checking: what they probe, and where to read what they saw. */
export interface ProbeDeployment {
  namespace: string;
  expected: ExpectedPair[];
  /** Pods whose logs hold state lines. */
  checkers: string[];
  /** When every checker had started. */
  checkingSince: Date;
  /** The nodes probed, in order (client-0 is on the first). */
  nodes: string[];
}

const POD_PORT = 8080;
const SERVICE_NAME = "netstress-probe";
const FAILED_WAITING = new Set([
  "ErrImagePull",
  "ImagePullBackOff",
  "InvalidImageName",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

/**
 * Puts probe pods on every schedulable node for the paths asked for, in three steps so each knows
 * the addresses it probes: server pods (pod network), then host-network pods (which probe the
 * server pod on their node: host-to-pod), then client pods (which probe the server pod on their node and on every
 * other node, the Service, their own node's host-network pod and the API server). Each step waits
 * until its pods listen. The namespace is the caller's to delete, whatever happens here.
 */
export async function deployProbes(options: {
  cluster: ProbeCluster;
  namespace: string;
  paths: ReadonlySet<`${NetworkPath}/${Connection}`>;
  settings: ProbeSettings;
  signal: AbortSignal;
  log: (line: string) => void;
}): Promise<ProbeDeployment> {
  const { cluster, namespace, settings, signal, log } = options;
  const image = settings.image;
  if (image === undefined) {
    throw new ExtError(
      "NETSTRESS_PROBE_IMAGE is not set: the probe pods run the runner's own image, by digest (a build farm's Job sets it to the farm configuration's runner.image); outside a farm set it to that image, e.g. NETSTRESS_PROBE_IMAGE=quay.io/netstress/network-stress-bot@sha256:<digest>",
      { code: "ext-probes" },
    );
  }
  const wants = (path: NetworkPath) =>
    (["new", "reused"] as const).filter((c) => options.paths.has(`${path}/${c}`));
  const nodes = (await cluster.nodes()).filter((n) => n.schedulable).map((n) => n.name);
  if (nodes.length === 0) {
    throw new ExtError("the cluster under test has no schedulable node (Ready, not cordoned, not tainted)", {
      code: "ext-probes",
    });
  }
  const crossNode = wants("pod-to-pod-cross-node");
  if (crossNode.length > 0 && nodes.length < 2) {
    throw new ExtError(`pod-to-pod-cross-node needs two schedulable nodes; the cluster has ${nodes.length}`, {
      code: "ext-probes",
    });
  }
  const needServers =
    wants("pod-to-pod-same-node").length +
      crossNode.length +
      wants("pod-to-service").length +
      wants("host-to-pod").length >
    0;
  // Host-network pods only for the two paths that are about the node itself: pod-to-host needs a
  // listener at the node's own address, and host-to-pod probes from the node's network namespace,
  // as the kubelet's health checks do. A pod on the pod network has neither. Other paths never
  // start one; host pods are as restricted as the others otherwise (non-root, no capabilities).
  const needHosts = wants("pod-to-host").length + wants("host-to-pod").length > 0;
  const clientPaths: NetworkPath[] = [
    "pod-to-pod-same-node",
    "pod-to-pod-cross-node",
    "pod-to-service",
    "pod-to-host",
    "pod-to-apiserver",
  ];
  const needClients = clientPaths.some((p) => wants(p).length > 0);
  // Host-network pods share their node's ports with everything else there, and with other probe
  // deployments of tests running beside this one: a port of their own for each deployment.
  const hostPort = 20_000 + (randomBytes(2).readUInt16BE(0) % 10_000);

  await cluster.createNamespace(namespace, {
    ...PROBE_NAMESPACE_LABELS,
    // Host-network probe pods are not allowed under the restricted pod security level.
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/audit": "privileged",
    "pod-security.kubernetes.io/warn": "privileged",
    "security.openshift.io/scc.podSecurityLabelSync": "false",
  });
  if (needHosts)
    await cluster.bindClusterRole(
      namespace,
      "netstress-probe-hostnetwork",
      "system:openshift:scc:hostnetwork-v2",
    );

  const expected: ExpectedPair[] = [];
  const checkers: string[] = [];
  const pod = (o: {
    name: string;
    node: string;
    role: "server" | "client" | "host";
    label: string;
    targets: ProbeTargetInput[];
  }) =>
    probePodManifest({
      name: o.name,
      namespace,
      nodeName: o.node,
      image,
      port: o.role === "host" ? hostPort : POD_PORT,
      hostNetwork: o.role === "host",
      role: o.role,
      label: o.label,
      targets: o.targets,
      intervalMs: settings.intervalMs,
      timeoutMs: settings.timeoutMs,
    });
  const serverLabel = (node: string) => `server pod on ${node}`;
  const hostLabel = (node: string) => `host ${node}`;

  let servers: ProbePodStatus[] = [];
  if (needServers) {
    const names = nodes.map((node, i) => ({ name: `server-${i}`, node }));
    for (const n of names)
      await cluster.createPod(
        namespace,
        pod({ ...n, role: "server", label: serverLabel(n.node), targets: [] }),
      );
    log(`probe server pods on ${nodes.length} node(s) in ${namespace}`);
    servers = await waitListening({ cluster, namespace, names: names.map((n) => n.name), settings, signal });
  }
  let serviceIP = "";
  if (wants("pod-to-service").length > 0) {
    serviceIP = await cluster.createService(namespace, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: SERVICE_NAME, namespace },
      spec: {
        type: "ClusterIP",
        selector: { app: PROBE_APP_LABEL },
        ports: [{ name: "http", port: 80, targetPort: POD_PORT, protocol: "TCP" }],
      },
    });
  }
  const hostIPs = new Map<string, string>();
  if (needHosts) {
    const names = nodes.map((node, i) => ({ name: `host-${i}`, node }));
    for (const n of names) {
      // A node reaches its own pods the way the kubelet's health checks do; across nodes is pod-to-pod's.
      const targets: ProbeTargetInput[] = wants("host-to-pod").flatMap((connection) =>
        servers
          .filter((s) => s.nodeName === n.node)
          .map((s) => ({
            path: "host-to-pod" as const,
            connection,
            name: serverLabel(s.nodeName),
            host: s.podIP,
            port: POD_PORT,
          })),
      );
      for (const t of targets)
        expected.push({ path: t.path, connection: t.connection!, source: hostLabel(n.node), target: t.name });
      if (targets.length > 0) checkers.push(n.name);
      await cluster.createPod(namespace, pod({ ...n, role: "host", label: hostLabel(n.node), targets }));
    }
    log(`host-network probe pods on ${nodes.length} node(s), port ${hostPort}`);
    for (const h of await waitListening({
      cluster,
      namespace,
      names: names.map((n) => n.name),
      settings,
      signal,
    })) {
      hostIPs.set(h.nodeName, h.hostIP || h.podIP);
    }
  }
  if (needClients) {
    const names = nodes.map((node, i) => ({ name: `client-${i}`, node }));
    for (const n of names) {
      const source = `client pod on ${n.node}`;
      const targets: ProbeTargetInput[] = [];
      const same = servers.find((s) => s.nodeName === n.node);
      for (const connection of wants("pod-to-pod-same-node"))
        if (same)
          targets.push({
            path: "pod-to-pod-same-node",
            connection,
            name: serverLabel(n.node),
            host: same.podIP,
            port: POD_PORT,
          });
      for (const connection of crossNode)
        for (const s of servers.filter((s) => s.nodeName !== n.node))
          targets.push({
            path: "pod-to-pod-cross-node",
            connection,
            name: serverLabel(s.nodeName),
            host: s.podIP,
            port: POD_PORT,
          });
      for (const connection of wants("pod-to-service"))
        targets.push({
          path: "pod-to-service",
          connection,
          name: `service ${SERVICE_NAME}`,
          host: serviceIP,
          port: 80,
        });
      for (const connection of wants("pod-to-host"))
        targets.push({
          path: "pod-to-host",
          connection,
          name: hostLabel(n.node),
          host: hostIPs.get(n.node) ?? "",
          port: hostPort,
        });
      for (const connection of wants("pod-to-apiserver"))
        targets.push({ path: "pod-to-apiserver", connection, name: "apiserver", kind: "apiserver" });
      for (const t of targets)
        expected.push({ path: t.path, connection: t.connection!, source, target: t.name });
      checkers.push(n.name);
      await cluster.createPod(namespace, pod({ ...n, role: "client", label: source, targets }));
    }
    log(`probe client pods on ${nodes.length} node(s)`);
    await waitListening({ cluster, namespace, names: names.map((n) => n.name), settings, signal });
  }
  return { namespace, expected, checkers, checkingSince: new Date(), nodes };
}

/** Waits until each pod runs and its log says it listens; fails fast on a pod that cannot start. */
async function waitListening(options: {
  cluster: ProbeCluster;
  namespace: string;
  names: string[];
  settings: ProbeSettings;
  signal: AbortSignal;
}): Promise<ProbePodStatus[]> {
  const { cluster, namespace, signal } = options;
  const deadline = Date.now() + options.settings.startTimeoutMs;
  const ready = new Map<string, ProbePodStatus>();
  while (ready.size < options.names.length) {
    if (signal.aborted)
      throw new ExtError("stopped while the probe pods were starting", { code: "ext-probes" });
    const waiting = options.names.filter((n) => !ready.has(n));
    const now = new Map<string, string>();
    // One list for every pod of the step, and a log read only for the running ones not yet listening:
    // beside other tests' deployments, the API server is what a tight poll would load.
    const pods = new Map((await cluster.listPods(namespace, "")).map((p) => [p.name, p]));
    await Promise.all(
      waiting.map(async (name) => {
        const status = pods.get(name);
        if (!status) return void now.set(name, "not found");
        if (
          status.phase === "Failed" ||
          status.phase === "Succeeded" ||
          FAILED_WAITING.has(status.waitingReason ?? "")
        ) {
          const log = (await cluster.podLog(namespace, name).catch(() => undefined)) ?? "";
          const tail = log.trim().split("\n").slice(-3).join(" | ");
          throw new ExtError(
            `probe pod ${namespace}/${name} on ${status.nodeName || "no node"} could not start: ${status.waitingReason ?? status.phase}${tail ? `: ${tail}` : ""}`,
            { code: "ext-probes" },
          );
        }
        if (status.phase !== "Running" || !status.podIP)
          return void now.set(name, status.waitingReason ?? status.phase);
        const log = await cluster.podLog(namespace, name);
        if (!parseProbeLines(log ?? "").some((l) => l.event === "listening"))
          return void now.set(name, "not listening yet");
        ready.set(name, status);
      }),
    );
    if (ready.size === options.names.length) break;
    if (Date.now() > deadline) {
      const why = [...now.entries()].map(([n, s]) => `${n}: ${s}`).join(", ");
      throw new ExtError(
        `probe pods in ${namespace} did not start within ${Math.round(options.settings.startTimeoutMs / 1000)}s (${why}); is the image ${options.settings.image} pullable there?`,
        { code: "ext-probes" },
      );
    }
    await sleep(500, undefined, { signal }).catch(() => undefined);
  }
  return options.names.map((n) => ready.get(n)!);
}
