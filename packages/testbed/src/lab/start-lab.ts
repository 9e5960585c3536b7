import { createHash } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { clusterUnderTestObjects } from "../sim/cluster-under-test-objects.ts";
import { ClusterVersionOperator } from "../sim/cluster-version-operator.ts";
import type { KubeObject } from "../sim/object-store.ts";
import { startFakeKubeApi, type FakeImage, type FakeKubeApi } from "../sim/start-fake-kube-api.ts";
import { checkLabAvailable } from "./check-lab-available.ts";
import { labAddressPlan, type LabAddressPlan } from "./lab-address-plan.ts";
import { LabError } from "./lab-error.ts";
import { labImages } from "./lab-images.ts";
import { faultKey, faultRule, type LabFault } from "./lab-fault.ts";
import { LAB_PAYLOADS, type LabPayload } from "./lab-payloads.ts";
import { parseLabName, type LabName } from "./lab-name.ts";
import { LabPodNetwork } from "./lab-pod-network.ts";
import { claimSlot, labDir, processAlive, readLabState, releaseLab, writeLabState } from "./lab-state.ts";
import { labNamespaces, removeLabNamespaces, removeLabNamespacesSync } from "./remove-lab-namespaces.ts";
import { runIp } from "./run-ip.ts";
import { LEADER_LEASE } from "./run-control-plane.ts";
import { AGENT_HEALTH_PORT, AGENT_ROUTE_PROTOCOL, type AgentBuild } from "./run-node-agent.ts";
import { spawnLabProcess, type LabProcess } from "./spawn-lab-process.ts";
import { startRelay } from "./start-relay.ts";

/**
 * The lab's probe image, by digest as the network extension wants it (NETSTRESS_PROBE_IMAGE): the
 * lab runs it as `netstress` from this checkout.
 */
export const PROBE_IMAGE = `quay.io/netstress/network-stress-bot@sha256:${createHash("sha256").update("lab-probe").digest("hex")}`;
export const AGENT_NAMESPACE = "openshift-ovn-kubernetes";
export const AGENT_DAEMONSET = "ovnkube-node";
export const CONTROL_PLANE_DAEMONSET = "ovnkube-control-plane";
/** The label of the nodes the control plane runs on (the first two). */
const CONTROL_PLANE_LABEL = "netstress.io/control-plane";

/** What the lab logs through (pino's shape). */
export interface LabLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface LabNode {
  name: string;
  ip: string;
  podCIDR: string;
  /** The node's network namespace (host-network pods run there). */
  netns: string;
}

export interface Lab {
  name: string;
  build: AgentBuild;
  /** Kubeconfig for the host (the runner, kubectl): the API on loopback, HTTPS with the lab's CA. */
  kubeconfigPath: string;
  /** Kubeconfig for processes inside the lab's namespaces: the API at the lab address. */
  podKubeconfigPath: string;
  /** The API server as pods and nodes reach it (`https://10.250.<slot>.2:6443`). */
  apiAddress: { host: string; port: number };
  plan: LabAddressPlan;
  nodes: LabNode[];
  api: FakeKubeApi;
  /** The network namespace a pod runs in (its node's for a host-network pod); undefined if not running. */
  podNetns(namespace: string, name: string): string | undefined;
  inject(fault: LabFault): Promise<void>;
  clear(fault: LabFault): Promise<void>;
  /** Faults injected and not cleared. */
  faults(): LabFault[];
  stop(): Promise<void>;
}

/** Labs this process runs (its own pid in a state file says nothing about which). */
const RUNNING = new Set<LabName>();

/**
 * Starts a lab: a network of Linux network namespaces — an underlay bridge, a master namespace
 * that relays the API server, `nodes` node namespaces with a pod bridge each — and a fake
 * Kubernetes API (HTTPS) whose kubelet runs pods in namespaces of their own on those nodes, whose
 * `ovnkube-node` DaemonSet (the `build` of its payload) programs the routes between nodes, and
 * whose Services every node's proxy serves. Everything carries the lab's name as prefix and is
 * removed by `stop()`, on exit and on SIGINT/SIGTERM (then the process exits 130/143).
 */
export async function startLab(options: {
  name?: string;
  nodes?: number;
  build?: AgentBuild;
  logger?: LabLogger;
  /** More images the kubelet can run (the probe image and the agent builds are always there). */
  images?: Record<string, FakeImage>;
  /** How long to wait for the lab to be up (default 90 s). */
  readyTimeoutMs?: number;
  /** Tear down and exit on SIGINT/SIGTERM (default true). */
  handleSignals?: boolean;
}): Promise<Lab> {
  const name = parseLabName(options.name ?? "lab");
  const build = options.build ?? "released";
  if (build !== "released" && build !== "pr") {
    throw new LabError(`--build is released or pr, not ${JSON.stringify(build)}`, { code: "BadLabOptions" });
  }
  // Bad options are refused before anything is touched.
  labAddressPlan({ name, slot: 0, nodes: options.nodes ?? 3 });
  await checkLabAvailable();
  const previous = await readLabState(name);
  if (RUNNING.has(name) || (previous && processAlive(previous.pid) && previous.pid !== process.pid)) {
    throw new LabError(
      `lab ${name} is running already (process ${RUNNING.has(name) ? process.pid : previous?.pid}): use another --name, or stop it (Ctrl-C, or netstress lab down --name ${name})`,
      { code: "LabRunning" },
    );
  }
  RUNNING.add(name);
  const hasLeftovers = async (other: LabName) =>
    labNamespaces(other, await runIp(["netns", "list"])).length > 0;
  let slot: number;
  try {
    await removeLabNamespaces(name);
    await releaseLab(name);
    slot = await claimSlot({ name, hasLeftovers });
  } catch (error) {
    RUNNING.delete(name);
    throw error;
  }
  const plan = labAddressPlan({ name, slot, nodes: options.nodes ?? 3 });
  const log = options.logger ?? { info: () => undefined, warn: () => undefined };
  const processes: LabProcess[] = [];
  let api: FakeKubeApi | undefined;
  let operator: ClusterVersionOperator | undefined;
  let hostRelay: Awaited<ReturnType<typeof startRelay>> | undefined;
  let stopping: Promise<void> | undefined;
  const active = new Map<string, LabFault>();
  const exitCleanup = () => removeLabNamespacesSync(name);
  const onSignal = (signal: NodeJS.Signals) => {
    log.warn({ lab: name, signal }, "tearing the lab down");
    void stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  const stop = () =>
    (stopping ??= (async () => {
      process.off("exit", exitCleanup);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      operator?.stop();
      await Promise.all(processes.map((p) => p.stop()));
      await api?.stop();
      await hostRelay?.close();
      const removed = await removeLabNamespaces(name);
      await releaseLab(name);
      RUNNING.delete(name);
      log.info({ lab: name, namespaces: removed.namespaces.length }, "lab removed");
    })());
  process.on("exit", exitCleanup);
  if (options.handleSignals ?? true) {
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  }
  try {
    await buildNetwork(plan);
    const dir = labDir(name);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const socket = join(dir, "api.sock");
    const podKubeconfigPath = join(dir, "pod-kubeconfig");
    const env = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      KUBERNETES_SERVICE_HOST: plan.apiAddress,
      KUBERNETES_SERVICE_PORT: String(plan.apiPort),
      KUBECONFIG: podKubeconfigPath,
      NETSTRESS_LAB: name,
    };
    /** Each node's helper: its Service proxy and its kubelet's readiness prober. */
    const helpers = new Map<string, LabProcess>();
    const proxyStates = new Map<string, (state: string) => void>();
    const pendingProbes = new Map<number, (ok: boolean) => void>();
    let probeId = 0;
    const network = new LabPodNetwork(plan, env, (check) => {
      const prober = helpers.get(check.nodeName);
      if (!prober?.child.connected) return Promise.resolve(false);
      const id = (probeId += 1);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => settle(false), check.timeoutMs + 1000);
        const settle = (ok: boolean) => {
          clearTimeout(timer);
          pendingProbes.delete(id);
          resolve(ok);
        };
        pendingProbes.set(id, settle);
        const { nodeName: _node, ...rest } = check;
        // A helper that went away meanwhile (the lab is stopping) fails the probe; without the
        // callback its EPIPE would be an uncaught error event.
        prober.child.send({ id, ...rest }, (error) => {
          if (error) settle(false);
        });
      });
    });
    const images: Record<string, FakeImage> = { ...labImages(PROBE_IMAGE), ...options.images };
    api = await startFakeKubeApi({
      tls: true,
      name,
      tlsAddresses: [plan.apiAddress],
      nodes: plan.nodes.map((n) => ({
        name: n.name,
        internalIP: n.ip,
        podCIDR: n.podCIDR,
        labels: {
          "kubernetes.io/arch": hostArch(),
          "node-role.kubernetes.io/worker": "",
          ...(plan.nodes.indexOf(n) < 2 ? { [CONTROL_PLANE_LABEL]: "" } : {}),
        },
      })),
      images,
      maxRunning: 1000,
      baseEnv: { PATH: env.PATH },
      podNetwork: network,
      gracefulTermination: true,
      daemonSetPods: true,
      serviceCIDR: plan.serviceCIDR,
    });
    const apiPort = Number(new URL(api.url).port);
    await rm(socket, { force: true });
    hostRelay = await startRelay({ listen: { path: socket }, to: { host: "127.0.0.1", port: apiPort } });
    const kubeconfigPath = join(dir, "kubeconfig");
    await writeFile(kubeconfigPath, api.kubeconfig, { mode: 0o600 });
    await writeFile(
      podKubeconfigPath,
      api.kubeconfig.replace(api.url, `https://${plan.apiAddress}:${plan.apiPort}`),
      { mode: 0o600 },
    );
    const logOf = (source: string) => (line: string) =>
      line && log.info({ lab: name, source, line }, "lab process");
    processes.push(
      await spawnLabProcess({
        netns: plan.masterNetns,
        args: ["lab", "relay", "--listen", `${plan.apiAddress}:${plan.apiPort}`, "--unix", socket],
        env,
        log: logOf("api-relay"),
      }),
    );
    createClusterObjects(api, plan, LAB_PAYLOADS[build]);
    operator = new ClusterVersionOperator(api.store, {
      upgradeMs: 500,
      resolveRelease: (image) => {
        const target = Object.values(LAB_PAYLOADS).find((p) => p.payload === image);
        if (!target) {
          throw new Error(
            `not a lab payload: ${Object.values(LAB_PAYLOADS)
              .map((p) => p.payload)
              .join(" or ")}`,
          );
        }
        return {
          version: target.version,
          components: { "ovn-kubernetes": { image: target.agentImage, commit: target.commit } },
        };
      },
      roll: (release) => rollAgents(api!, release.components["ovn-kubernetes"]!.image),
    });
    await Promise.all(
      plan.nodes.map(async (node) => {
        const helper = await spawnLabProcess({
          netns: node.netns,
          args: ["lab", "node-helper"],
          env,
          ipc: true,
          log: logOf(`node-helper ${node.name}`),
        });
        helper.child.on("message", (answer: { id: number; ok: boolean } | { proxy: string }) => {
          if ("proxy" in answer) proxyStates.get(node.name)?.(answer.proxy);
          else pendingProbes.get(answer.id)?.(answer.ok);
        });
        helpers.set(node.name, helper);
        processes.push(helper);
      }),
    );
    /** Stops or restarts a node's Service proxy and resolves once it says so. */
    const setProxy = (node: string, want: "stop" | "start") =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new LabError(`the Service proxy of ${node} did not ${want} in 10 s`, { code: "LabNotReady" }),
            ),
          10_000,
        );
        proxyStates.set(node, (state) => {
          if (state !== (want === "stop" ? "stopped" : "running")) return;
          clearTimeout(timer);
          proxyStates.delete(node);
          resolve();
        });
        helpers.get(node)!.child.send({ proxy: want }, (error) => {
          if (!error) return;
          clearTimeout(timer);
          proxyStates.delete(node);
          reject(
            new LabError(
              `the Service proxy of ${node} cannot be told to ${want}: its helper is gone (${error.message})`,
              {
                code: "LabNotReady",
              },
            ),
          );
        });
      });
    await waitForRoutes(plan, options.readyTimeoutMs ?? 90_000);
    await waitForLeader(api, options.readyTimeoutMs ?? 90_000);
    await writeLabState({
      name,
      slot,
      pid: process.pid,
      build,
      startedAt: new Date().toISOString(),
      kubeconfigPath,
      apiUrl: api.url,
      nodes: plan.nodes.map((n) => ({ name: n.name, ip: n.ip, podCIDR: n.podCIDR })),
    });
    log.info({ lab: name, slot, nodes: plan.nodes.length, build, kubeconfigPath }, "lab up");
    const lab: Lab = {
      name,
      build,
      kubeconfigPath,
      podKubeconfigPath,
      apiAddress: { host: plan.apiAddress, port: plan.apiPort },
      plan,
      nodes: plan.nodes.map((n) => ({ name: n.name, ip: n.ip, podCIDR: n.podCIDR, netns: n.netns })),
      api,
      podNetns(namespace, podName) {
        const pod = api!.store.get("pods", namespace, podName);
        if ((pod?.spec as { hostNetwork?: boolean } | undefined)?.hostNetwork) {
          return plan.nodes.find((n) => n.name === pod?.spec?.nodeName)?.netns;
        }
        return network.netnsOf(namespace, podName);
      },
      async inject(fault) {
        const key = faultKey(fault);
        const rule = faultRule(plan, fault);
        if (active.has(key)) return;
        if (rule) await runIp(["rule", "add", ...rule.rule], { netns: rule.netns });
        else if (fault.kind === "stop-service-proxy") await setProxy(fault.node, "stop");
        active.set(key, fault);
        log.info({ lab: name, fault: key }, "fault injected");
      },
      async clear(fault) {
        const key = faultKey(fault);
        const rule = faultRule(plan, fault);
        if (!active.has(key)) return;
        if (rule) await runIp(["rule", "del", ...rule.rule], { netns: rule.netns });
        else if (fault.kind === "stop-service-proxy") await setProxy(fault.node, "start");
        active.delete(key);
        log.info({ lab: name, fault: key }, "fault cleared");
      },
      faults: () => [...active.values()],
      stop,
    };
    return lab;
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** The underlay bridge, the master namespace and every node namespace with its pod bridge. */
async function buildNetwork(plan: LabAddressPlan): Promise<void> {
  const underlay = plan.underlayNetns;
  await runIp(["netns", "add", underlay]);
  await runIp(["link", "add", "br0", "type", "bridge"], { netns: underlay });
  await runIp(["link", "set", "br0", "up"], { netns: underlay });
  await runIp(["link", "set", "lo", "up"], { netns: underlay });
  const attach = async (netns: string, port: string, address: string) => {
    await runIp(["netns", "add", netns]);
    await runIp(["link", "set", "lo", "up"], { netns });
    await runIp([
      "link",
      "add",
      port,
      "netns",
      underlay,
      "type",
      "veth",
      "peer",
      "name",
      "ul0",
      "netns",
      netns,
    ]);
    await runIp(["link", "set", port, "master", "br0", "up"], { netns: underlay });
    await runIp(["addr", "add", `${address}/24`, "dev", "ul0"], { netns });
    await runIp(["link", "set", "ul0", "up"], { netns });
  };
  await attach(plan.masterNetns, "m0", plan.apiAddress);
  for (const node of plan.nodes) {
    await runIp(["route", "add", node.podCIDR, "via", node.ip], { netns: plan.masterNetns }).catch(
      () => undefined,
    );
  }
  await Promise.all(
    plan.nodes.map(async (node, i) => {
      await attach(node.netns, `n${i}`, node.ip);
      await runIp(["link", "add", "br0", "type", "bridge"], { netns: node.netns });
      await runIp(["addr", "add", `${node.gateway}/24`, "dev", "br0"], { netns: node.netns });
      await runIp(["link", "set", "br0", "up"], { netns: node.netns });
      // Every address of the Service CIDR is local, so the node's proxy can listen on any ClusterIP.
      await runIp(["route", "add", "local", plan.serviceCIDR, "dev", "lo"], { netns: node.netns });
      await setSysctl(node.netns, "net.ipv4.ip_forward", "1");
    }),
  );
  await Promise.all(
    plan.nodes.map((node) =>
      runIp(["route", "replace", node.podCIDR, "via", node.ip], { netns: plan.masterNetns }),
    ),
  );
}

async function setSysctl(netns: string, key: string, value: string): Promise<void> {
  await runIp(["netns", "exec", netns, "sysctl", "-q", "-w", `${key}=${value}`]);
}

function createClusterObjects(api: FakeKubeApi, plan: LabAddressPlan, payload: LabPayload): void {
  const url = `https://${plan.apiAddress}:${plan.apiPort}`;
  for (const { resource, object } of clusterUnderTestObjects({
    name: plan.name,
    url,
    arch: hostArch(),
    payload: payload.payload,
    version: payload.version,
    platform: "None",
    region: "",
    networkType: "OVNKubernetes",
  })) {
    if (resource === "networks") {
      const network = {
        clusterNetwork: [{ cidr: plan.clusterCIDR, hostPrefix: 24 }],
        serviceNetwork: [plan.serviceCIDR],
      };
      object.spec = { ...object.spec, ...network };
      object.status = { ...object.status, ...network };
    }
    api.store.create(resource, object);
  }
  for (const namespace of ["default", AGENT_NAMESPACE]) {
    api.store.create("namespaces", {
      metadata: { name: namespace, namespace: "" },
      status: { phase: "Active" },
    });
  }
  // The `kubernetes` Service: the first ClusterIP, its endpoint the API relay.
  const kubernetes = api.store.create("services", serviceObject(plan));
  api.store.create("endpointslices", {
    metadata: {
      name: "kubernetes",
      namespace: "default",
      labels: { "kubernetes.io/service-name": "kubernetes" },
      ownerReferences: [
        { apiVersion: "v1", kind: "Service", name: "kubernetes", uid: kubernetes.metadata.uid ?? "" },
      ],
    },
    addressType: "IPv4",
    endpoints: [
      { addresses: [plan.apiAddress], conditions: { ready: true, serving: true, terminating: false } },
    ],
    ports: [{ name: "https", port: plan.apiPort, protocol: "TCP" }],
  });
  api.store.create("daemonsets", agentDaemonSet(payload));
  api.store.create("daemonsets", controlPlaneDaemonSet(payload));
}

function serviceObject(plan: LabAddressPlan): KubeObject {
  return {
    metadata: {
      name: "kubernetes",
      namespace: "default",
      labels: { component: "apiserver", provider: "kubernetes" },
    },
    spec: {
      type: "ClusterIP",
      clusterIP: plan.serviceCIDR.replace(/\.0\/24$/, ".1"),
      clusterIPs: [plan.serviceCIDR.replace(/\.0\/24$/, ".1")],
      ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: plan.apiPort }],
    },
  };
}

function agentDaemonSet(payload: LabPayload): KubeObject {
  return networkDaemonSet({
    name: AGENT_DAEMONSET,
    payload,
    updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
    container: {
      name: "ovnkube-controller",
      image: payload.agentImage,
      command: ["ovnkube"],
      ports: [{ name: "health", containerPort: AGENT_HEALTH_PORT }],
      // Ready once its routes are programmed, so a rollout waits for each node in turn.
      readinessProbe: { httpGet: { path: "/healthz", port: AGENT_HEALTH_PORT }, periodSeconds: 2 },
    },
  });
}

/** The control plane: a pod on each of the first two nodes, one of them leader (Lease ovn-kubernetes-master). */
function controlPlaneDaemonSet(payload: LabPayload): KubeObject {
  return networkDaemonSet({
    name: CONTROL_PLANE_DAEMONSET,
    payload,
    nodeSelector: { [CONTROL_PLANE_LABEL]: "" },
    container: {
      name: "ovnkube-cluster-manager",
      image: payload.agentImage,
      command: ["ovnkube-control-plane"],
    },
  });
}

/** A host-network DaemonSet of the payload's ovn-kubernetes image, named and labelled as the operator does. */
function networkDaemonSet(options: {
  name: string;
  payload: LabPayload;
  updateStrategy?: Record<string, unknown>;
  nodeSelector?: Record<string, string>;
  container: Record<string, unknown>;
}): KubeObject {
  const labels = { app: options.name, component: "network" };
  return {
    metadata: {
      name: options.name,
      namespace: AGENT_NAMESPACE,
      labels,
      annotations: {
        "release.openshift.io/payload-tag": "ovn-kubernetes",
        "io.openshift.build.commit.id": options.payload.commit,
      },
    },
    spec: {
      selector: { matchLabels: { app: options.name } },
      ...(options.updateStrategy ? { updateStrategy: options.updateStrategy } : {}),
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          hostNetwork: true,
          ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
          terminationGracePeriodSeconds: 10,
          containers: [options.container],
        },
      },
    },
  };
}

/** Puts the network plugin's DaemonSets on `image` and resolves once every pod of them runs it, Ready. */
async function rollAgents(api: FakeKubeApi, image: string): Promise<void> {
  const target = Object.values(LAB_PAYLOADS).find((p) => p.agentImage === image);
  const roll = async (name: string) => {
    const updated = api.store.update("daemonsets", AGENT_NAMESPACE, name, (ds) => {
      const spec = ds.spec as { template: { spec: { containers: { image: string }[] } } };
      spec.template.spec.containers = spec.template.spec.containers.map((c) => ({ ...c, image }));
      ds.metadata.generation = Number(ds.metadata.generation ?? 1) + 1;
      if (target)
        ds.metadata.annotations = {
          ...ds.metadata.annotations,
          "io.openshift.build.commit.id": target.commit,
        };
    });
    const generation = Number(updated?.metadata.generation ?? 0);
    for (;;) {
      const ds = api.store.get("daemonsets", AGENT_NAMESPACE, name);
      const status = (ds?.status ?? {}) as Record<string, number>;
      if (
        !ds ||
        (status.observedGeneration === generation &&
          status.updatedNumberScheduled === status.desiredNumberScheduled &&
          status.numberReady === status.desiredNumberScheduled)
      )
        return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  // The control plane first, then the nodes, as the network operator rolls them.
  await roll(CONTROL_PLANE_DAEMONSET);
  await roll(AGENT_DAEMONSET);
}

/** Waits until a control-plane pod holds the leader Lease. */
async function waitForLeader(api: FakeKubeApi, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!api.store.get("leases", AGENT_NAMESPACE, LEADER_LEASE)?.spec?.holderIdentity) {
    if (Date.now() > deadline) {
      throw new LabError(
        `no ${CONTROL_PLANE_DAEMONSET} pod took the Lease ${AGENT_NAMESPACE}/${LEADER_LEASE} in ${Math.round(timeoutMs / 1000)} s; see its pods' logs`,
        { code: "LabNotReady" },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until every node has the agent's routes to every other node's pods. */
async function waitForRoutes(plan: LabAddressPlan, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(
      plan.nodes.map(
        async (node) =>
          (await runIp(["route", "show", "proto", AGENT_ROUTE_PROTOCOL], { netns: node.netns }))
            .split("\n")
            .filter(Boolean).length,
      ),
    );
    if (counts.every((c) => c >= plan.nodes.length - 1)) return;
    if (Date.now() > deadline) {
      throw new LabError(
        `the node agents did not program the routes between nodes in ${Math.round(timeoutMs / 1000)} s (routes per node: ${counts.join(", ")}); see the ${AGENT_DAEMONSET} pods' logs`,
        { code: "LabNotReady" },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
