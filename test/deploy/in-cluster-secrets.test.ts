import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import { deployDir, readManifests, renderKustomization, type Manifest } from "./render-kustomization.ts";

const overlay = renderKustomization(join(deployDir, "overlays/example"));
const exampleSecrets = readManifests(join(deployDir, "examples/secrets.example.yaml"));
const one = (kind: string, name: string) => {
  const found = overlay.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the example overlay`);
  return found as Manifest & Record<string, never>;
};

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** May this service account `get` Secret namespace/name, by the Roles bound to it in the manifests? */
function canGetSecret(
  account: { name: string; namespace: string },
  namespace: string,
  name: string,
): boolean {
  return overlay
    .filter((m) => m.kind === "RoleBinding" && m.metadata.namespace === namespace)
    .filter((binding) =>
      (binding.subjects as { kind: string; name: string; namespace?: string }[]).some(
        (s) =>
          s.kind === "ServiceAccount" &&
          s.name === account.name &&
          (s.namespace ?? namespace) === account.namespace,
      ),
    )
    .map((binding) => (binding.roleRef as { kind: string; name: string }).name)
    .flatMap(
      (role) =>
        (overlay.find(
          (m) => m.kind === "Role" && m.metadata.name === role && m.metadata.namespace === namespace,
        )?.rules ?? []) as Rule[],
    )
    .some(
      (rule) =>
        rule.apiGroups.includes("") &&
        rule.resources.includes("secrets") &&
        rule.verbs.includes("get") &&
        (rule.resourceNames === undefined || rule.resourceNames.includes(name)),
    );
}

// `secretsFrom: in-cluster` (the default of a static cluster source) reads its clusters'
// kubeconfigSecrets as the service account the workers run as: it needs that account's token in
// the pod and a Role that lets it read those Secrets. deploy/base gave the workers neither.
describe("secretsFrom: in-cluster with the shipped manifests", () => {
  const worker = one("Deployment", "netstress-worker") as unknown as {
    metadata: { namespace: string };
    spec: { template: { spec: { serviceAccountName: string; automountServiceAccountToken?: boolean } } };
  };
  const pod = worker.spec.template.spec;
  const account = { name: pod.serviceAccountName, namespace: worker.metadata.namespace };

  it("the workers have their service account's token, which the web tier does not", () => {
    const serviceAccount = one("ServiceAccount", account.name) as { automountServiceAccountToken?: boolean };
    expect(pod.automountServiceAccountToken ?? serviceAccount.automountServiceAccountToken ?? true).toBe(
      true,
    );
    const bot = (one("Deployment", "netstress-bot") as unknown as typeof worker).spec.template.spec;
    expect(bot.serviceAccountName).not.toBe(account.name);
    expect(bot.automountServiceAccountToken).toBe(false);
  });

  it("the example farm configuration's in-cluster kubeconfigSecrets are exactly what the workers may read", () => {
    const farmYaml = (one("ConfigMap", "netstress-farm") as unknown as { data: Record<string, string> }).data[
      "farm.yaml"
    ]!;
    const config = farmConfigSchema.parse(parse(farmYaml));
    const inCluster = config.clusterSources.flatMap((source) =>
      source.type === "static" && source.secretsFrom === "in-cluster"
        ? source.clusters.flatMap((c) => (c.kubeconfigSecret ? [c.kubeconfigSecret] : []))
        : [],
    );
    expect(inCluster.length).toBeGreaterThan(0);
    const secrets = new Map(
      exampleSecrets.map((s) => [
        s.metadata.name,
        Object.keys((s as unknown as { stringData: object }).stringData),
      ]),
    );
    for (const secret of inCluster) {
      expect(canGetSecret(account, secret.namespace, secret.name), `${secret.namespace}/${secret.name}`).toBe(
        true,
      );
      expect(secret.namespace).toBe(account.namespace);
      expect(secrets.get(secret.name), secret.name).toContain(secret.key);
    }
    // Nothing else: not the GitHub App's key, not the Redis password.
    for (const other of ["netstress-github-app", "netstress-redis", "netstress-farm-kubeconfigs"])
      expect(canGetSecret(account, account.namespace, other), other).toBe(false);
  });
});
