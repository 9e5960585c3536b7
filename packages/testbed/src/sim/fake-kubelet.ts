import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, constants, openSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { EventEmitter } from "node:events";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KubeObject, ObjectStore, StoreEvent } from "./object-store.ts";
import type { PodNetwork, PodNetworkAttachment, PodNetworkRequest, PodProbe } from "./pod-network.ts";

/** What the fake kubelet can "pull": an image is a host directory and the commands it provides. */
export interface FakeImage {
  /** Stands in for the image's root file system: absolute paths that match no mount resolve here. */
  rootfs?: string;
  /** Commands the image provides: name → host argv prefix (e.g. netstress → [node, bin/netstress.js]). */
  commands?: Record<string, string[]>;
  /**
   * Why the image does not run this command line (undefined: it does). The command runs as whoever
   * runs the kubelet (root in the lab), so an image whose command takes any arguments says which.
   */
  refuse?: (command: string, args: readonly string[]) => string | undefined;
  /** Instead of a process, produce the output in-process (benchmarks of thousands of pods). */
  simulate?: (container: {
    /** The container's name: an image may play several parts (a pod's runner and its tests). */
    container: string;
    args: string[];
    env: Record<string, string>;
    pod: { name: string; labels: Record<string, string> };
  }) => Promise<{ stdout: string; exitCode: number }>;
}

export interface FakeNode {
  name: string;
  labels: Record<string, string>;
  /** The node's InternalIP (default 127.0.0.1). */
  internalIP?: string;
  /** `spec.podCIDR`: the range its pods' addresses come from. */
  podCIDR?: string;
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
  }[];
  volumeMounts?: { name: string; mountPath: string }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: {
    httpGet?: { path?: string; port: number | string };
    tcpSocket?: { port: number | string };
    initialDelaySeconds?: number;
    periodSeconds?: number;
    timeoutSeconds?: number;
    failureThreshold?: number;
  };
}

interface PodSpec {
  nodeSelector?: Record<string, string>;
  nodeName?: string;
  hostNetwork?: boolean;
  terminationGracePeriodSeconds?: number;
  initContainers?: Container[];
  containers: Container[];
  volumes?: {
    name: string;
    emptyDir?: object;
    downwardAPI?: { items: { path: string; fieldRef: { fieldPath: string } }[] };
    secret?: {
      secretName: string;
      defaultMode?: number;
      items?: { key: string; path: string; mode?: number }[];
    };
  }[];
}

interface RunningPod {
  /** Each container's process, by container name, once started. */
  processes: Map<string, ChildProcess>;
  /** Set when a fault injection ended the pod; the process exit is then not the pod's outcome. */
  ended?: boolean;
  logs: Map<string, string>;
  /** The pod's network once attached, and what it was attached for. */
  network?: { request: PodNetworkRequest; attachment: PodNetworkAttachment };
}

const MAX_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Runs pods as local processes. A pod is scheduled to a node whose labels match its node selector
 * (kubernetes.io/arch above all), its volumes become temporary directories (downward API files and
 * Secrets written out), its init containers one after the other and then all its containers at
 * once, each a process of its own with its own environment and with paths under one of its own
 * mounts translated to that mount's directory (a path under another container's mount only
 * resolves nowhere); each container's stdout and stderr — line by line, as a container runtime
 * records them — become its log. The pod Succeeded when every container exited 0, else Failed.
 * Fault injection: eviction, OOM kill, a lost node (each ends every process of the pod).
 *
 * Limits: there are no PID, mount or user namespaces. Every container's process runs as the
 * kubelet's user and can see every other process on the host (a real pod's containers see only
 * their own, without shareProcessNamespace) and open any host path it learns of; only the paths a
 * container is given are translated.
 */
/** How long a pod waits for a Secret volume that is not there yet before it stays ContainerCreating. */
const SECRET_WAIT_MS = 30_000;

export class FakeKubelet extends EventEmitter {
  private readonly pods = new Map<string, RunningPod>();
  /** Deleted pods whose process has its termination grace still. */
  private readonly terminating = new Set<RunningPod>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly options: {
      nodes: FakeNode[];
      images: Record<string, FakeImage>;
      /** Containers running at once; further pods wait, as on a full node. */
      maxRunning: number;
      sandboxDir: string;
      /** Host environment every container gets (PATH and the like). */
      baseEnv: Record<string, string>;
      imagePullBackOffMs: number;
      /** Puts each pod in a network of its own before its containers start (default: the host's). */
      podNetwork?: PodNetwork;
      /**
       * Deleting a pod sends its process SIGTERM and SIGKILL only after
       * `terminationGracePeriodSeconds` (default 30), as a real kubelet does; without it the
       * process is killed at once (what short-lived test Jobs want).
       */
      gracefulTermination?: boolean;
    },
  ) {
    super();
    this.unsubscribe = store.subscribe((event) => setImmediate(() => this.react(event)));
  }

  stop(): void {
    this.unsubscribe();
    for (const pod of [...this.pods.values(), ...this.terminating]) {
      pod.ended = true;
      killAll(pod, "SIGKILL");
    }
  }

  podLog(namespace: string, name: string, container: string | undefined): string | undefined {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return undefined;
    return container ? pod.logs.get(container) : [...pod.logs.values()].at(-1);
  }

  /** Pods with a container running now. */
  runningPods(): string[] {
    return [...this.pods.entries()]
      .filter(([, p]) => !p.ended && [...p.processes.values()].some(isRunning))
      .map(([k]) => k);
  }

  /** The node ran out of memory and evicted the pod. */
  evict(namespace: string, name: string): void {
    this.terminate(namespace, name, (status) => ({
      ...status,
      phase: "Failed",
      reason: "Evicted",
      message: "The node was low on resource: memory.",
      conditions: [
        ...conditions(status),
        { type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet" },
      ],
    }));
  }

  /** The container exceeded its memory limit. */
  oomKill(namespace: string, name: string): void {
    this.terminate(namespace, name, (status) => ({
      ...status,
      phase: "Failed",
      containerStatuses: (status.containerStatuses as object[] | undefined)?.map((c) => ({
        ...c,
        state: { terminated: { exitCode: 137, reason: "OOMKilled", finishedAt: new Date().toISOString() } },
      })),
    }));
  }

  /** The node stopped answering: its pods are marked for disruption and deleted, as the node lifecycle controller does. */
  loseNode(nodeName: string): void {
    for (const pod of this.store.list("pods", undefined, () => true).items) {
      if ((pod.spec as unknown as PodSpec).nodeName !== nodeName) continue;
      const { namespace, name } = pod.metadata;
      const running = this.pods.get(`${namespace}/${name}`);
      if (running) {
        running.ended = true;
        killAll(running, "SIGKILL");
      }
      this.store.update("pods", namespace, name, (p) => {
        p.status = {
          ...p.status,
          conditions: [
            ...conditions(p.status ?? {}),
            { type: "DisruptionTarget", status: "True", reason: "DeletionByTaintManager" },
          ],
        };
      });
      try {
        this.store.delete("pods", namespace, name);
      } catch {
        // already gone
      }
    }
  }

  private terminate(
    namespace: string,
    name: string,
    change: (status: Record<string, unknown>) => Record<string, unknown>,
  ): void {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (pod) {
      pod.ended = true;
      killAll(pod, "SIGKILL");
    }
    this.store.update("pods", namespace, name, (p) => {
      p.status = change(p.status ?? {});
    });
  }

  private react(event: StoreEvent): void {
    if (event.resource !== "pods") return;
    const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
    if (event.type === "ADDED") {
      this.pods.set(key, { processes: new Map(), logs: new Map() });
      this.runPod(event.object).catch((error: unknown) => this.emit("error", error));
    } else if (event.type === "DELETED") {
      const pod = this.pods.get(key);
      this.pods.delete(key);
      if (pod) {
        pod.ended = true;
        const grace = (event.object.spec as unknown as PodSpec).terminationGracePeriodSeconds ?? 30;
        this.terminating.add(pod);
        this.kill(pod, this.options.gracefulTermination ? grace : 0)
          .then(() => {
            this.terminating.delete(pod);
            return this.detach(pod);
          })
          .catch((error: unknown) => this.emit("error", error));
      }
      void rm(this.sandboxOf(key), { recursive: true, force: true });
    }
  }

  /**
   * A pod's directory: short, so that a Unix socket in one of its volumes stays within the 107
   * bytes a socket path may have.
   */
  private sandboxOf(key: string): string {
    return join(this.options.sandboxDir, createHash("sha256").update(key).digest("hex").slice(0, 16));
  }

  /** SIGTERM, then SIGKILL after the grace (at once with none); resolves once every process is gone. */
  private async kill(pod: RunningPod, graceSeconds: number): Promise<void> {
    await Promise.all(
      [...pod.processes.values()].filter(isRunning).map(
        (child) =>
          new Promise<void>((resolve) => {
            const timer =
              graceSeconds > 0 ? setTimeout(() => child.kill("SIGKILL"), graceSeconds * 1000) : undefined;
            child.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill(graceSeconds > 0 ? "SIGTERM" : "SIGKILL");
          }),
      ),
    );
  }

  private async detach(pod: RunningPod): Promise<void> {
    const network = pod.network;
    pod.network = undefined;
    if (network) await this.options.podNetwork?.detach(network.request);
  }

  private async runPod(pod: KubeObject): Promise<void> {
    const { namespace, name } = pod.metadata;
    const key = `${namespace}/${name}`;
    const spec = pod.spec as unknown as PodSpec;
    const selector = spec.nodeSelector ?? {};
    // A pod bound to a node (spec.nodeName) needs no scheduler; others go to the first node that matches.
    const node = spec.nodeName
      ? this.options.nodes.find((n) => n.name === spec.nodeName)
      : this.options.nodes.find((n) => Object.entries(selector).every(([k, v]) => n.labels[k] === v));
    if (!node) {
      this.setStatus(pod, (s) => ({
        ...s,
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            lastTransitionTime: new Date().toISOString(),
            message: `0/${this.options.nodes.length} nodes are available: node(s) didn't match Pod's node affinity/selector.`,
          },
        ],
      }));
      return;
    }
    this.store.update("pods", namespace, name, (p) => {
      (p.spec as unknown as PodSpec).nodeName = node.name;
      p.status = {
        ...p.status,
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: new Date().toISOString() }],
      };
    });
    await this.slot();
    try {
      if (!this.pods.has(key)) return;
      if (!(await this.attach(pod, node.name))) return;
      const sandbox = this.sandboxOf(key);
      const mounts = await this.prepareVolumes(pod, sandbox);
      if (!mounts) return;
      const init = spec.initContainers ?? [];
      for (const [index, container] of init.entries()) {
        const result = await this.runContainer(
          pod,
          container,
          mounts,
          sandbox,
          "initContainerStatuses",
          index,
        );
        if (result === undefined) return;
        if (result !== 0) {
          this.setStatus(pod, (s) => ({ ...s, phase: "Failed" }));
          return;
        }
      }
      const exitCodes = await Promise.all(
        spec.containers.map((container, index) =>
          this.runContainer(pod, container, mounts, sandbox, "containerStatuses", index),
        ),
      );
      if (exitCodes.includes(undefined)) return;
      const succeeded = exitCodes.every((code) => code === 0);
      this.setStatus(pod, (s) => ({ ...s, phase: succeeded ? "Succeeded" : "Failed" }));
    } finally {
      this.release();
    }
  }

  /** Sets up the pod's network and records its addresses; false when the pod went away meanwhile. */
  private async attach(pod: KubeObject, nodeName: string): Promise<boolean> {
    const network = this.options.podNetwork;
    if (!network) return true;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const request: PodNetworkRequest = {
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid ?? "",
      nodeName,
      hostNetwork: (pod.spec as unknown as PodSpec).hostNetwork === true,
    };
    const attachment = await network.attach(request);
    const running = this.pods.get(key);
    if (!running) {
      await network.detach(request);
      return false;
    }
    running.network = { request, attachment };
    this.setStatus(pod, (s) => ({
      ...s,
      podIP: attachment.podIP,
      podIPs: [{ ip: attachment.podIP }],
      hostIP: attachment.hostIP,
      hostIPs: [{ ip: attachment.hostIP }],
    }));
    return true;
  }

  /**
   * The readiness probe, from the pod's node: Ready once a check passes (checked every 200 ms until
   * then, the start of a pod matters to whoever waits for it), then every periodSeconds, NotReady
   * after failureThreshold failures in a row. Stops when the process does.
   */
  private probeReadiness(
    pod: KubeObject,
    container: Container,
    network: NonNullable<RunningPod["network"]>,
    running: RunningPod,
  ): void {
    const spec = container.readinessProbe!;
    const named = (port: number | string) =>
      typeof port === "number" ? port : (container.ports?.find((p) => p.name === port)?.containerPort ?? 0);
    const check: PodProbe = {
      nodeName: network.request.nodeName,
      kind: spec.httpGet ? "http" : "tcp",
      host: network.attachment.podIP,
      port: named((spec.httpGet ?? spec.tcpSocket)!.port),
      ...(spec.httpGet ? { path: spec.httpGet.path ?? "/" } : {}),
      timeoutMs: (spec.timeoutSeconds ?? 1) * 1000,
    };
    const periodMs = (spec.periodSeconds ?? 10) * 1000;
    const threshold = spec.failureThreshold ?? 3;
    let ready = false;
    let failures = 0;
    const alive = () =>
      !running.ended && this.pods.get(`${pod.metadata.namespace}/${pod.metadata.name}`) === running;
    const setReady = (value: boolean) => {
      ready = value;
      const status = value ? "True" : "False";
      const now = new Date().toISOString();
      this.setStatus(pod, (s) => ({
        ...s,
        containerStatuses: ((s.containerStatuses as object[] | undefined) ?? []).map((c, i) =>
          i === 0 ? { ...c, ready: value } : c,
        ),
        conditions: [
          ...conditions(s).filter(
            (c) => !["Ready", "ContainersReady"].includes((c as { type: string }).type),
          ),
          { type: "ContainersReady", status, lastTransitionTime: now },
          { type: "Ready", status, lastTransitionTime: now },
        ],
      }));
    };
    const tick = async () => {
      const child = running.processes.get(container.name);
      if (!alive() || (child && (child.exitCode !== null || child.signalCode !== null))) return;
      const ok = child ? await this.options.podNetwork!.probe!(check).catch(() => false) : false;
      if (!alive()) return;
      if (ok) {
        failures = 0;
        if (!ready) setReady(true);
      } else if (ready && (failures += 1) >= threshold) setReady(false);
      setTimeout(() => void tick(), ready ? periodMs : 200);
    };
    setTimeout(() => void tick(), (spec.initialDelaySeconds ?? 0) * 1000);
  }

  /** Returns the exit code, or undefined when the pod cannot go on (image pull, deletion, fault). */
  private async runContainer(
    pod: KubeObject,
    container: Container,
    mounts: { mountPath: string; dir: string; name: string }[],
    sandbox: string,
    statusField: "initContainerStatuses" | "containerStatuses",
    index: number,
  ): Promise<number | undefined> {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const probed =
      statusField === "containerStatuses" &&
      this.options.podNetwork?.probe !== undefined &&
      (container.readinessProbe?.httpGet ?? container.readinessProbe?.tcpSocket) !== undefined;
    const state = (value: object) =>
      this.setStatus(pod, (s) => {
        const list = [...((s[statusField] as object[] | undefined) ?? [])];
        list[index] = {
          name: container.name,
          image: container.image,
          state: value,
          ready: "running" in value,
        };
        if (statusField !== "containerStatuses") return { ...s, [statusField]: list };
        // Without a readiness probe (or a network to run it from), a pod is Ready while all its containers run.
        const containers = (pod.spec as unknown as PodSpec).containers;
        const allRunning = containers.every((_, i) => {
          const entry = list[i] as { state?: object } | undefined;
          return entry?.state !== undefined && "running" in entry.state;
        });
        const ready = allRunning && !probed ? "True" : "False";
        const now = new Date().toISOString();
        return {
          ...s,
          [statusField]: list,
          ...("running" in value ? { phase: "Running" } : {}),
          conditions: [
            ...conditions(s).filter(
              (c) => !["Ready", "ContainersReady"].includes((c as { type: string }).type),
            ),
            { type: "ContainersReady", status: ready, lastTransitionTime: now },
            { type: "Ready", status: ready, lastTransitionTime: now },
          ],
        };
      });
    const image = this.options.images[container.image];
    if (!image) {
      state({
        waiting: {
          reason: "ErrImagePull",
          message: `failed to pull and unpack image "${container.image}": not found`,
        },
      });
      setTimeout(
        () =>
          this.pods.has(key) &&
          state({
            waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${container.image}"` },
          }),
        this.options.imagePullBackOffMs,
      );
      return undefined;
    }
    const ownMounts = mounts.filter((m) =>
      container.volumeMounts?.some((v) => v.name === m.name && v.mountPath === m.mountPath),
    );
    const under = (value: string, list: typeof mounts) =>
      list
        .filter((m) => value === m.mountPath || value.startsWith(`${m.mountPath}/`))
        .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
    const translate = (value: string) => {
      const mount = under(value, ownMounts);
      if (mount) return mount.dir + value.slice(mount.mountPath.length);
      // Mounted in another container of the pod only: not there in this one.
      if (under(value, mounts)) return join(sandbox, "not-mounted", container.name, value);
      return image.rootfs && value.startsWith("/") ? join(image.rootfs, value) : value;
    };
    const network = this.pods.get(key)?.network;
    const current = this.store.get("pods", pod.metadata.namespace, pod.metadata.name) ?? pod;
    const field = (path: string): string | undefined =>
      ({
        "metadata.name": current.metadata.name,
        "metadata.namespace": current.metadata.namespace,
        "metadata.uid": current.metadata.uid,
        "spec.nodeName": (current.spec as unknown as PodSpec).nodeName,
        "spec.serviceAccountName": String(current.spec?.serviceAccountName ?? "default"),
        "status.podIP": current.status?.podIP as string | undefined,
        "status.hostIP": current.status?.hostIP as string | undefined,
      })[path];
    const env: Record<string, string> = {
      ...this.options.baseEnv,
      ...(network
        ? {
            ...network.attachment.env,
            POD_NAME: current.metadata.name,
            POD_NAMESPACE: current.metadata.namespace,
            POD_IP: network.attachment.podIP,
            HOST_IP: network.attachment.hostIP,
            NODE_NAME: network.request.nodeName,
          }
        : {}),
    };
    for (const variable of container.env ?? []) {
      const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
      if (fieldPath !== undefined) {
        env[variable.name] = field(fieldPath) ?? "";
        continue;
      }
      const ref = variable.valueFrom?.secretKeyRef;
      const secret = ref && this.store.get("secrets", pod.metadata.namespace, ref.name)?.data?.[ref.key];
      if (ref && secret === undefined) {
        state({
          waiting: { reason: "CreateContainerConfigError", message: `secret "${ref.name}" not found` },
        });
        return undefined;
      }
      env[variable.name] = ref ? Buffer.from(secret!, "base64").toString() : translate(variable.value ?? "");
    }
    const [command, ...rest] = container.command ?? [];
    const args = [...rest, ...(container.args ?? [])].map(translate);
    const running = this.pods.get(key);
    if (!running || running.ended) return undefined;
    state({ running: { startedAt: new Date().toISOString() } });
    this.emit("started", {
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      container: container.name,
    });
    let exitCode: number;
    if (image.simulate) {
      const result = await image.simulate({
        container: container.name,
        args,
        env,
        pod: { name: pod.metadata.name, labels: pod.metadata.labels ?? {} },
      });
      running.logs.set(container.name, result.stdout);
      exitCode = result.exitCode;
    } else {
      const argv = command ? image.commands?.[command] : undefined;
      if (!argv) {
        state({
          terminated: {
            exitCode: 127,
            reason: "StartError",
            message: `exec: "${command}": executable file not found in $PATH`,
          },
        });
        return 127;
      }
      const refusal = image.refuse?.(command!, args);
      if (refusal !== undefined) {
        state({ terminated: { exitCode: 126, reason: "CommandNotAllowed", message: refusal } });
        return 126;
      }
      const cwd = container.workingDir ? translate(container.workingDir) : sandbox;
      const full = [...argv, ...args];
      if (probed && network) this.probeReadiness(pod, container, network, running);
      exitCode = await this.spawnProcess(
        running,
        container.name,
        network ? network.attachment.wrap(full) : full,
        env,
        cwd,
        sandbox,
      );
    }
    if (running.ended || !this.pods.has(key)) return undefined;
    state({
      terminated: {
        exitCode,
        reason: exitCode === 0 ? "Completed" : "Error",
        finishedAt: new Date().toISOString(),
      },
    });
    return exitCode;
  }

  /**
   * Starts the container's process with stdout and stderr on pipes the runtime reads, as a real
   * container runtime's are (FIFOs, not the socket pairs Node's spawn makes): a process of the same
   * user in the container can open `/proc/<main pid>/fd/1` and write into the container's log.
   */
  private spawnProcess(
    running: RunningPod,
    container: string,
    argv: string[],
    env: Record<string, string>,
    cwd: string,
    sandbox: string,
  ): Promise<number> {
    const [stdout, stderr] = ["stdout", "stderr"].map((name) =>
      runtimePipe(join(sandbox, `${container}.${name}`)),
    );
    return new Promise((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        env,
        stdio: ["ignore", stdout!.writeFd, stderr!.writeFd],
      });
      // The container holds the write ends now; the runtime reads until every writer is gone.
      for (const pipe of [stdout!, stderr!]) closeSync(pipe.writeFd);
      running.processes.set(container, child);
      let log = "";
      const append = (line: string) => {
        if (log.length < MAX_LOG_BYTES) log += line;
        running.logs.set(container, log);
      };
      // A container runtime records each stream line by line, so lines of stdout and stderr never mix.
      for (const stream of [stdout!.reader, stderr!.reader]) {
        let partial = "";
        stream.setEncoding("utf8");
        stream.on("data", (chunk: string) => {
          const text = partial + chunk;
          const cut = text.lastIndexOf("\n");
          if (cut < 0) return void (partial = text);
          append(text.slice(0, cut + 1));
          partial = text.slice(cut + 1);
        });
        stream.on("end", () => partial && append(`${partial}\n`));
      }
      running.logs.set(container, "");
      child.on("error", () => resolve(127));
      // Once the process is gone and both pipes ended (whatever it left running holds them open).
      const ended = Promise.all(
        [stdout!.reader, stderr!.reader].map((r) => new Promise((done) => r.once("close", done))),
      );
      child.on("exit", (code, signal) => {
        void ended.then(() => resolve(code ?? (signal ? 137 : 1)));
      });
    });
  }

  private async prepareVolumes(
    pod: KubeObject,
    sandbox: string,
  ): Promise<{ mountPath: string; dir: string; name: string }[] | undefined> {
    const spec = pod.spec as unknown as PodSpec;
    await mkdir(sandbox, { recursive: true });
    const dirs = new Map<string, string>();
    for (const volume of spec.volumes ?? []) {
      const dir = join(sandbox, "volumes", volume.name);
      await mkdir(dir, { recursive: true });
      dirs.set(volume.name, dir);
      for (const item of volume.downwardAPI?.items ?? []) {
        const annotation = /^metadata\.annotations\['(.+)'\]$/.exec(item.fieldRef.fieldPath)?.[1];
        const value = annotation ? (pod.metadata.annotations?.[annotation] ?? "") : pod.metadata.name;
        await writeFile(join(dir, item.path), value);
      }
      if (volume.secret) {
        let secret = this.store.get("secrets", pod.metadata.namespace, volume.secret.secretName);
        // As the real kubelet, wait for a Secret that is not there yet (created after its pod's Job).
        const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
        for (let waited = 0; !secret && waited < SECRET_WAIT_MS && this.pods.has(key); waited += 50) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          secret = this.store.get("secrets", pod.metadata.namespace, volume.secret.secretName);
        }
        // The pod stays ContainerCreating, saying why, as the real kubelet's would.
        const unmountable = (message: string) =>
          this.setStatus(pod, (s) => ({
            ...s,
            containerStatuses: spec.containers.map((c) => ({
              name: c.name,
              state: { waiting: { reason: "ContainerCreating", message } },
            })),
          }));
        if (!secret) {
          unmountable(`secret "${volume.secret.secretName}" not found`);
          return undefined;
        }
        // As the real kubelet: only the listed keys when there are items (a missing one fails the
        // mount), each file root's with its item's mode, else defaultMode, else 0644.
        const data = secret.data ?? {};
        const items =
          volume.secret.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
        for (const item of items) {
          const value = data[item.key];
          if (value === undefined) {
            unmountable(`secret "${volume.secret.secretName}" has no key "${item.key}"`);
            return undefined;
          }
          const mode = item.mode ?? volume.secret.defaultMode ?? 0o644;
          await writeFile(join(dir, item.path), Buffer.from(value, "base64"), { mode });
          await chmod(join(dir, item.path), mode);
        }
      }
    }
    const all = [...(spec.initContainers ?? []), ...spec.containers].flatMap((c) => c.volumeMounts ?? []);
    return all.map((m) => ({ name: m.name, mountPath: m.mountPath, dir: dirs.get(m.name)! }));
  }

  private setStatus(
    pod: KubeObject,
    change: (status: Record<string, unknown>) => Record<string, unknown>,
  ): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (this.pods.get(key)?.ended) return;
    this.store.update("pods", pod.metadata.namespace, pod.metadata.name, (p) => {
      p.status = change(p.status ?? {});
    });
  }

  private slot(): Promise<void> {
    if (this.running < this.options.maxRunning) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}

/** A named pipe whose read end the runtime holds (non-blocking, as a socket) and whose write end goes to the container. */
function runtimePipe(path: string): { reader: Socket; writeFd: number } {
  rmSync(path, { force: true });
  execFileSync("mkfifo", ["-m", "600", path]);
  // The reader first: opening a FIFO to write fails while nobody reads it.
  const reader = new Socket({
    fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK),
    readable: true,
  });
  return { reader, writeFd: openSync(path, constants.O_WRONLY) };
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function killAll(pod: RunningPod, signal: NodeJS.Signals): void {
  for (const child of pod.processes.values()) child.kill(signal);
}

function conditions(status: Record<string, unknown>): object[] {
  return (status.conditions as object[] | undefined) ?? [];
}
