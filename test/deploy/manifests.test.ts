import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { botEnvSchema } from "../../src/config/bot-settings.ts";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import { gateEnvSchema } from "../../src/config/gate-settings.ts";
import { historyEnvSchema } from "../../src/config/history-settings.ts";
import { diskEnvSchema } from "../../src/config/disk-settings.ts";
import { registryEnvSchema } from "../../src/config/registry-settings.ts";
import { loadSettings } from "../../src/server/load-settings.ts";
import { createMetrics } from "../../src/observability/metrics.ts";
import { deployDir, readManifests, renderKustomization, type Manifest } from "./render-kustomization.ts";

/** Kubernetes' own schemas (the upstream OpenAPI definitions, compiled by kubernetes-models), by apiVersion/kind. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "rbac.authorization.k8s.io/v1/ClusterRole": ClusterRole,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": ClusterRoleBinding,
  "rbac.authorization.k8s.io/v1/Role": Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": RoleBinding,
  "v1/ConfigMap": ConfigMap,
  "v1/Namespace": Namespace,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
};

function validate(manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!Model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}: add its model`);
  new Model(manifest as never).validate();
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? yamlFiles(path) : name.endsWith(".yaml") ? [path] : [];
  });
}

const overlay = renderKustomization(join(deployDir, "overlays/example"));
const farm = renderKustomization(join(deployDir, "farm"));
const exampleSecrets = readManifests(join(deployDir, "examples/secrets.example.yaml"));
const find = (manifests: Manifest[], kind: string, name: string) => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found as Manifest & { spec: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
};

interface Container {
  name: string;
  image: string;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string } };
  }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}
interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: {
    name: string;
    secret?: { secretName: string; items?: { key: string }[] };
    configMap?: { name: string };
    hostPath?: unknown;
    persistentVolumeClaim?: { claimName: string };
  }[];
}
const workloads = (manifests: Manifest[]) =>
  manifests
    .filter((m) => m.kind === "Deployment" || m.kind === "StatefulSet")
    .map((m) => ({
      manifest: m,
      pod: (
        m as unknown as {
          spec: { template: { spec: PodSpec; metadata: { labels: Record<string, string> } } };
        }
      ).spec.template,
    }));

describe("deploy/ manifests", () => {
  it("every file is valid against Kubernetes' and the Prometheus Operator's schemas", () => {
    const files = yamlFiles(deployDir).filter((file) => !file.endsWith("kustomization.yaml"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      for (const manifest of readManifests(file)) {
        // Patches are partial by nature; they are validated as part of the rendered overlay.
        if (
          (relative(deployDir, file).startsWith("overlays/example/") &&
            ["settings.yaml", "workers.yaml"].some((p) => file.endsWith(p))) ||
          relative(deployDir, file) === "overlays/redis-tls/redis-tls.yaml"
        )
          continue;
        expect(
          () => validate(manifest),
          `${relative(deployDir, file)}: ${manifest.kind} ${manifest.metadata.name}`,
        ).not.toThrow();
      }
    }
  });

  it("the example overlay renders to valid objects, in its namespace, with its image and patches", () => {
    for (const manifest of [...overlay, ...farm])
      expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    expect(new Set(overlay.map((m) => m.metadata.namespace))).toEqual(new Set(["netstress"]));
    expect(new Set(farm.filter((m) => m.kind !== "Namespace").map((m) => m.metadata.namespace))).toEqual(
      new Set(["netstress-farm"]),
    );
    const worker = find(overlay, "Deployment", "netstress-worker");
    expect(worker.spec.replicas).toBe(4);
    const [container] = worker.spec.template.spec.containers as Container[];
    expect(container!.image).toBe("registry.example.com/netstress/network-stress-bot:v0.1.0");
    // The patch raised the limits and kept the rest of the container.
    expect(container!.resources).toEqual({
      requests: { cpu: "500m", memory: "1Gi" },
      limits: { cpu: "4", memory: "6Gi" },
    });
    expect(container!.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(
      (find(overlay, "Deployment", "netstress-bot").spec.template.spec.containers as Container[])[0]!.image,
    ).toBe(container!.image);
    const settings = find(overlay, "ConfigMap", "netstress-settings") as unknown as {
      data: Record<string, string>;
    };
    expect(settings.data).toMatchObject({
      APP_ID: "123456",
      NETSTRESS_REDIS_URL: "redis://netstress-redis:6379",
    });
  });

  it("the settings, farm configuration and example secrets are what the bot accepts", () => {
    const settings = (
      find(overlay, "ConfigMap", "netstress-settings") as unknown as { data: Record<string, string> }
    ).data;
    for (const name of ["netstress-bot", "netstress-worker"]) {
      const [container] = find(overlay, "Deployment", name).spec.template.spec.containers as Container[];
      const own = Object.fromEntries(
        (container!.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
      );
      const fromSecrets = { WEBHOOK_SECRET: "from-the-secret", NETSTRESS_REDIS_PASSWORD: "from-the-secret" };
      const env = { ...settings, ...own, ...fromSecrets };
      for (const schema of [botEnvSchema, gateEnvSchema, historyEnvSchema, registryEnvSchema, diskEnvSchema])
        expect(schema.safeParse(env).error, name).toBeUndefined();
      // Without the Redis password the settings are refused, naming the setting to set.
      expect(() => loadSettings({ ...env, NETSTRESS_REDIS_PASSWORD: undefined }, () => "PEM")).toThrow(
        /NETSTRESS_REDIS_PASSWORD: a Redis that is not on loopback needs a password/,
      );
      // Only the web tier answers the gate API; both run gates (the release-controller is set).
      // The whole environment loads as `netstress serve` reads it (the key file is mounted).
      const { gate } = loadSettings(env, () => "PEM");
      expect(gate.tokensPath !== undefined, name).toBe(name === "netstress-bot");
      expect(gate.releaseControllerUrl, name).toBe("https://release-controller.example.com");
      expect(loadSettings(env, () => "PEM").disk, name).toMatchObject({
        retentionDays: 14,
        binaryRetentionHours: 48,
      });
    }
    const farmConfig = (
      find(overlay, "ConfigMap", "netstress-farm") as unknown as { data: Record<string, string> }
    ).data["farm.yaml"]!;
    const parsed = farmConfigSchema.parse(parse(farmConfig));
    // Every kubeconfig is a key of the kubeconfigs Secret, mounted where the configuration says.
    const kubeconfigs = exampleSecrets.find(
      (s) => s.metadata.name === "netstress-farm-kubeconfigs",
    ) as unknown as { stringData: Record<string, string> };
    for (const cluster of parsed.clusters) {
      expect(cluster.kubeconfig).toMatch(/^\/var\/run\/secrets\/netstress\/kubeconfigs\//);
      expect(parsed.runner.serviceAccountName).toBe("netstress-runner");
      expect(find(farm, "ServiceAccount", "netstress-runner").automountServiceAccountToken).toBe(false);
      if (cluster.name === "build01") expect(Object.keys(kubeconfigs.stringData)).toContain("build01");
    }
  });

  it("runs every container as non-root, without privilege escalation, with limits", () => {
    const all = workloads(overlay);
    expect(all.map((w) => w.manifest.metadata.name).sort()).toEqual([
      "netstress-bot",
      "netstress-redis",
      "netstress-worker",
    ]);
    for (const { manifest, pod } of all) {
      const where = `${manifest.kind} ${manifest.metadata.name}`;
      expect(pod.spec.securityContext, where).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect((pod.spec.securityContext!.runAsUser as number) > 0, where).toBe(true);
      // Only the workers hold a token: secretsFrom: in-cluster reads with it (in-cluster-secrets.test.ts).
      expect(pod.spec.automountServiceAccountToken, where).toBe(
        manifest.metadata.name === "netstress-worker",
      );
      expect([pod.spec.hostNetwork, pod.spec.hostPID, pod.spec.hostIPC].some(Boolean), where).toBe(false);
      expect(pod.spec.volumes?.some((v) => v.hostPath) ?? false, where).toBe(false);
      for (const container of pod.spec.containers) {
        expect(container.securityContext, where).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        for (const kind of ["requests", "limits"] as const) {
          expect(Object.keys(container.resources?.[kind] ?? {}).sort(), `${where} ${kind}`).toEqual([
            "cpu",
            "memory",
          ]);
        }
        expect(container.readinessProbe, where).toBeDefined();
        expect(container.livenessProbe, where).toBeDefined();
      }
    }
  });

  it("probes the bot and workers at /readyz and /healthz and keeps them available through disruptions", () => {
    for (const name of ["netstress-bot", "netstress-worker"]) {
      const [container] = find(overlay, "Deployment", name).spec.template.spec.containers as Container[];
      expect(container!.readinessProbe?.httpGet?.path).toBe("/readyz");
      expect(container!.livenessProbe?.httpGet?.path).toBe("/healthz");
      const budget = find(overlay, "PodDisruptionBudget", name);
      const labels = find(overlay, "Deployment", name).spec.template.metadata.labels as Record<
        string,
        string
      >;
      expect(labels).toMatchObject(budget.spec.selector.matchLabels);
    }
    expect(find(overlay, "Deployment", "netstress-bot").spec.template.spec.containers[0].args).toEqual([
      "serve",
      "--no-workers",
    ]);
  });

  it("persists Redis with an append-only file on a volume of its own, and never evicts queue keys", () => {
    const redis = find(overlay, "StatefulSet", "netstress-redis");
    expect(redis.spec.volumeClaimTemplates[0].metadata.name).toBe("data");
    expect(redis.spec.template.spec.containers[0].volumeMounts).toContainEqual({
      name: "data",
      mountPath: "/data",
    });
    const config = (
      find(overlay, "ConfigMap", "netstress-redis") as unknown as { data: Record<string, string> }
    ).data["redis.conf"]!;
    expect(config.split("\n")).toEqual(
      expect.arrayContaining([
        "appendonly yes",
        "appendfsync everysec",
        "dir /data",
        "maxmemory-policy noeviction",
      ]),
    );
  });

  it("refers only to Secrets and ConfigMaps that exist, and the example Secrets carry no values", () => {
    const configMaps = new Set(overlay.filter((m) => m.kind === "ConfigMap").map((m) => m.metadata.name));
    const secretKeys = new Map(
      exampleSecrets.map((s) => [
        s.metadata.name,
        Object.keys((s as unknown as { stringData: object }).stringData),
      ]),
    );
    for (const { manifest, pod } of workloads(overlay)) {
      for (const volume of pod.spec.volumes ?? []) {
        if (volume.configMap)
          expect(configMaps, `${manifest.metadata.name} volume ${volume.name}`).toContain(
            volume.configMap.name,
          );
        if (volume.secret) {
          expect(secretKeys.has(volume.secret.secretName), volume.secret.secretName).toBe(true);
          for (const item of volume.secret.items ?? [])
            expect(secretKeys.get(volume.secret.secretName)).toContain(item.key);
        }
      }
      for (const container of pod.spec.containers) {
        for (const from of container.envFrom ?? []) expect(configMaps).toContain(from.configMapRef?.name);
        for (const { valueFrom } of container.env ?? []) {
          if (valueFrom?.secretKeyRef)
            expect(secretKeys.get(valueFrom.secretKeyRef.name)).toContain(valueFrom.secretKeyRef.key);
        }
      }
    }
    for (const secret of [...exampleSecrets, ...overlay, ...farm].filter((m) => m.kind === "Secret")) {
      const { data, stringData } = secret as unknown as {
        data?: Record<string, string>;
        stringData?: Record<string, string>;
      };
      expect(data, secret.metadata.name).toBeUndefined();
      for (const value of Object.values(stringData ?? {})) expect(value, secret.metadata.name).toBe("");
    }
    // The bot's own manifests never carry a Secret; the operator creates them.
    expect(overlay.filter((m) => m.kind === "Secret")).toEqual([]);
    for (const file of yamlFiles(deployDir))
      expect(readFileSync(file, "utf8")).not.toMatch(
        /BEGIN [A-Z ]*PRIVATE KEY|ghp_[A-Za-z0-9]{20}|ghs_[A-Za-z0-9]{20}/,
      );
  });

  it("lets the farm client touch only Jobs, Pods, pod logs and the Jobs' Secrets of the farm namespace", () => {
    expect(
      [...overlay, ...farm].filter((m) => m.kind === "ClusterRole" || m.kind === "ClusterRoleBinding"),
    ).toEqual([]);
    const role = find(farm, "Role", "netstress-farm-client") as unknown as {
      metadata: { namespace: string };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(role.metadata.namespace).toBe("netstress-farm");
    expect(
      role.rules
        .flatMap((rule) =>
          rule.resources.map((resource) => `${rule.apiGroups.join(",") || "core"}/${resource}`),
        )
        .sort(),
    ).toEqual(["batch/jobs", "core/pods", "core/pods/log", "core/secrets"]);
    for (const rule of role.rules) {
      expect(rule.verbs).not.toContain("*");
      expect(
        rule.verbs.filter((verb) => ["escalate", "bind", "impersonate", "patch"].includes(verb)),
      ).toEqual([]);
      // A kubeconfig Secret is made before its Job and then updated to be owned by it (the Job's uid
      // exists only once it does); nothing else is ever changed in place.
      if (!rule.resources.includes("secrets")) expect(rule.verbs).not.toContain("update");
    }
    expect(role.rules.find((rule) => rule.resources.includes("pods/log"))!.verbs).toEqual(["get"]);
    const binding = find(farm, "RoleBinding", "netstress-farm-client") as unknown as {
      subjects: object[];
      roleRef: object;
    };
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "netstress-farm-client", namespace: "netstress-farm" },
    ]);
    expect(binding.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "netstress-farm-client",
    });
  });

  it("denies ingress by default and lets only the bot's pods reach Redis", () => {
    const deny = find(overlay, "NetworkPolicy", "netstress-default-deny");
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    const redis = find(overlay, "NetworkPolicy", "netstress-redis");
    expect(redis.spec.egress).toEqual([]);
    expect(redis.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { "netstress.io/redis-client": "true" } } }],
        ports: [{ port: 6379, protocol: "TCP" }],
      },
    ]);
    const clients = workloads(overlay).filter(
      ({ pod }) => pod.metadata.labels["netstress.io/redis-client"] === "true",
    );
    expect(clients.map((c) => c.manifest.metadata.name).sort()).toEqual([
      "netstress-bot",
      "netstress-worker",
    ]);
  });

  it("lets the bot, workers and runners reach neither cloud metadata nor cluster-internal addresses", () => {
    const internal = ["10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16"];
    interface Peer {
      ipBlock?: { cidr: string; except?: string[] };
      podSelector?: { matchLabels?: Record<string, string> };
      namespaceSelector?: object;
    }
    interface Rule {
      to?: Peer[];
      ports?: { port: number; protocol: string }[];
    }
    const policies = [...overlay, ...farm].filter((m) => m.kind === "NetworkPolicy");
    const egressOf = (pod: { namespace: string; labels: Record<string, string> }) =>
      policies
        .filter((p) => p.metadata.namespace === pod.namespace)
        .filter((p) =>
          (p as unknown as { spec: { policyTypes: string[] } }).spec.policyTypes.includes("Egress"),
        )
        .filter((p) => {
          const selector = (
            p as unknown as { spec: { podSelector: { matchLabels?: Record<string, string> } } }
          ).spec.podSelector.matchLabels;
          return Object.entries(selector ?? {}).every(([k, v]) => pod.labels[k] === v);
        })
        .flatMap((p) => ((p as unknown as { spec: { egress?: Rule[] } }).spec.egress ?? []) as Rule[]);
    const pods = [
      ...workloads(overlay).map(({ manifest, pod }) => ({
        name: manifest.metadata.name,
        namespace: "netstress",
        labels: pod.metadata.labels,
      })),
      {
        name: "runner",
        namespace: "netstress-farm",
        labels: { "app.kubernetes.io/managed-by": "netstress" },
      },
    ];
    for (const pod of pods) {
      const rules = egressOf(pod);
      // Every namespace's pods are under an egress policy (the default deny, or the runners' own).
      expect(
        policies.some(
          (p) =>
            p.metadata.namespace === pod.namespace &&
            (p as unknown as { spec: { policyTypes: string[] } }).spec.policyTypes.includes("Egress"),
        ),
        pod.name,
      ).toBe(true);
      for (const rule of rules) {
        // A rule without `to` would allow every destination.
        expect(rule.to, pod.name).toBeDefined();
        for (const peer of rule.to!) {
          if (!peer.ipBlock) continue;
          if (peer.ipBlock.cidr === "0.0.0.0/0") expect(peer.ipBlock.except, pod.name).toEqual(internal);
          else if (peer.ipBlock.cidr === "::/0")
            expect(peer.ipBlock.except, pod.name).toEqual(["fc00::/7", "fe80::/10"]);
          else throw new Error(`${pod.name}: unexpected ipBlock ${peer.ipBlock.cidr}`);
        }
        // Whatever goes to other namespaces is DNS only.
        if (rule.to!.some((peer) => peer.namespaceSelector))
          expect(new Set(rule.ports!.map((p) => p.port)), pod.name).toEqual(new Set([53, 5353]));
      }
    }
    const ports = (name: string) =>
      egressOf(pods.find((p) => p.name === name)!)
        .filter((rule) => rule.to!.some((peer) => peer.ipBlock))
        .flatMap((rule) => rule.ports!.map((p) => p.port));
    expect(ports("netstress-bot")).toEqual([443]);
    expect(ports("netstress-worker")).toEqual([443, 6443]);
    expect(egressOf(pods.find((p) => p.name === "netstress-redis")!)).toEqual([]);
    for (const name of ["netstress-bot", "netstress-worker"]) {
      expect(egressOf(pods.find((p) => p.name === name)!)).toContainEqual({
        to: [
          {
            podSelector: {
              matchLabels: {
                "app.kubernetes.io/name": "netstress-redis",
                "app.kubernetes.io/component": "redis",
              },
            },
          },
        ],
        ports: [{ port: 6379, protocol: "TCP" }],
      });
    }
  });

  it("makes every Redis client authenticate with the password of the netstress-redis Secret", () => {
    const redis = find(overlay, "StatefulSet", "netstress-redis");
    const [server] = redis.spec.template.spec.containers as (Container & { args: string[] })[];
    expect(server!.args).toEqual(["/etc/redis/redis.conf", "--requirepass", "$(REDIS_PASSWORD)"]);
    const secretEnv = (container: Container, name: string) =>
      container.env?.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
    for (const name of ["REDIS_PASSWORD", "REDISCLI_AUTH"])
      expect(secretEnv(server!, name), name).toEqual({ name: "netstress-redis", key: "password" });
    const config = (
      find(overlay, "ConfigMap", "netstress-redis") as unknown as { data: Record<string, string> }
    ).data["redis.conf"]!;
    expect(config.split("\n")).toContain("protected-mode yes");
    expect(config).not.toMatch(/requirepass|protected-mode no/);
    for (const name of ["netstress-bot", "netstress-worker"]) {
      const [container] = find(overlay, "Deployment", name).spec.template.spec.containers as Container[];
      expect(secretEnv(container!, "NETSTRESS_REDIS_PASSWORD"), name).toEqual({
        name: "netstress-redis",
        key: "password",
      });
    }
  });

  it("speaks TLS to Redis with the redis-tls overlay, trusting the CA of its Secret", () => {
    const tls = renderKustomization(join(deployDir, "overlays/redis-tls"));
    for (const manifest of tls)
      expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    const [server] = find(tls, "StatefulSet", "netstress-redis").spec.template.spec
      .containers as (Container & {
      args: string[];
    })[];
    expect(server!.args.join(" ")).toMatch(
      /--requirepass \$\(REDIS_PASSWORD\) --port 0 --tls-port 6379 --tls-cert-file \S+ --tls-key-file \S+ --tls-ca-cert-file \S+/,
    );
    const settings = (
      find(tls, "ConfigMap", "netstress-settings") as unknown as { data: Record<string, string> }
    ).data;
    expect(settings.NETSTRESS_REDIS_URL).toBe("rediss://netstress-redis:6379");
    const secretKeys = Object.keys(
      (
        exampleSecrets.find((s) => s.metadata.name === "netstress-redis-tls") as unknown as {
          stringData: Record<string, string>;
        }
      ).stringData,
    );
    expect(secretKeys.sort()).toEqual(["ca.crt", "tls.crt", "tls.key"]);
    for (const name of ["netstress-bot", "netstress-worker"]) {
      const { spec } = find(tls, "Deployment", name).spec.template as { spec: PodSpec };
      const [container] = spec.containers;
      const ca = container!.env?.find((e) => e.name === "NODE_EXTRA_CA_CERTS")?.value;
      expect(ca, name).toBe("/var/run/secrets/netstress/redis-tls/ca.crt");
      expect(spec.volumes?.find((v) => v.name === "redis-tls")?.secret?.secretName, name).toBe(
        "netstress-redis-tls",
      );
      // The settings the container gets still load (rediss:// is a Redis URL like any other).
      const own = Object.fromEntries(
        (container!.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]),
      );
      const env = { ...settings, ...own, WEBHOOK_SECRET: "s", NETSTRESS_REDIS_PASSWORD: "p" };
      expect(loadSettings(env, () => "PEM").bot.redisUrl, name).toBe("rediss://:p@netstress-redis:6379");
    }
  });

  it("alerts only on metrics the bot exports", async () => {
    const rule = find(overlay, "PrometheusRule", "netstress") as unknown as {
      spec: { groups: { rules: { alert: string; expr: string }[] }[] };
    };
    const exported = new Set(
      (await createMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name),
    );
    const alerts = rule.spec.groups.flatMap((group) => group.rules);
    expect(alerts.length).toBeGreaterThanOrEqual(5);
    for (const { alert, expr } of alerts) {
      for (const metric of expr.match(/netstress_[a-z_]+/g) ?? [])
        expect(exported, `${alert}: ${metric}`).toContain(metric);
    }
  });

  it("caps each process's heap at no more than half its container's memory limit", () => {
    const mebibytes = (quantity: string) => {
      const [, n, unit] = /^(\d+)(Mi|Gi)$/.exec(quantity) ?? [];
      expect(n, quantity).toBeDefined();
      return Number(n) * (unit === "Gi" ? 1024 : 1);
    };
    for (const name of ["netstress-bot", "netstress-worker"]) {
      const [container] = find(overlay, "Deployment", name).spec.template.spec.containers as Container[];
      const options = container!.env?.find((e) => e.name === "NODE_OPTIONS")?.value ?? "";
      const heap = /--max-old-space-size=(\d+)/.exec(options)?.[1];
      expect(heap, `${name} NODE_OPTIONS`).toBeDefined();
      expect(Number(heap), name).toBeLessThanOrEqual(mebibytes(container!.resources!.limits!.memory!) / 2);
    }
  });

  it("builds a non-root image from multi-arch bases only", () => {
    const containerfile = readFileSync(join(deployDir, "Containerfile"), "utf8");
    const from = [...containerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(from.length).toBeGreaterThan(0);
    for (const image of from) expect(image).toMatch(/^docker\.io\/library\/node:20-bookworm-slim( AS .*)?$/);
    const instructions = containerfile.replace(/^#.*$/gm, "");
    // Nothing pinned to, or downloaded for, one architecture.
    expect(instructions).not.toMatch(/--platform=linux\/|amd64|x86_64|aarch64|arm64/);
    const users = [...containerfile.matchAll(/^USER\s+(\d+)(?::(\d+))?/gm)];
    expect(users.length).toBe(1);
    expect(Number(users[0]![1])).toBeGreaterThan(0);
    // The pods run as the image's user.
    for (const name of ["netstress-bot", "netstress-worker"])
      expect(find(overlay, "Deployment", name).spec.template.spec.securityContext.runAsUser).toBe(
        Number(users[0]![1]),
      );
  });
});
