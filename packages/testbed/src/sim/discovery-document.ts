import { RESOURCE_TYPES, type ResourceType } from "./resource-types.ts";

/** The Kubernetes release the simulated clusters claim to be (OpenShift 4.20's). */
export const KUBERNETES_VERSION = { major: "1", minor: "33", gitVersion: "v1.33.2" };

const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

function groupVersion(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

function resourceList(types: ResourceType[], gv: string) {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: gv,
    resources: types.flatMap((t) => [
      {
        name: t.resource,
        singularName: t.kind.toLowerCase(),
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: VERBS,
        ...(t.shortNames ? { shortNames: t.shortNames } : {}),
      },
      ...(t.statusSubresource
        ? [
            {
              name: `${t.resource}/status`,
              singularName: "",
              namespaced: t.namespaced,
              kind: t.kind,
              verbs: ["get", "patch", "update"],
            },
          ]
        : []),
      ...(t.resource === "pods"
        ? [{ name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] }]
        : []),
    ]),
  };
}

/**
 * The legacy discovery documents (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/<group>[/<version>]`)
 * for the types this server serves, so that kubectl finds every kind; undefined for any other path.
 */
export function discoveryDocument(options: { path: string; serverAddress: string }): object | undefined {
  const path = options.path.replace(/\/+$/, "") || "/";
  if (path === "/version") {
    return {
      ...KUBERNETES_VERSION,
      gitTreeState: "clean",
      goVersion: "go1.24.4",
      compiler: "gc",
      platform: "linux/amd64",
    };
  }
  if (path === "/api") {
    return {
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: options.serverAddress }],
    };
  }
  if (path === "/api/v1")
    return resourceList(
      RESOURCE_TYPES.filter((t) => t.group === ""),
      "v1",
    );
  const groups = [...new Set(RESOURCE_TYPES.filter((t) => t.group).map((t) => t.group))].map((name) => {
    const versions = [...new Set(RESOURCE_TYPES.filter((t) => t.group === name).map((t) => t.version))].map(
      (version) => ({ groupVersion: `${name}/${version}`, version }),
    );
    return { kind: "APIGroup", apiVersion: "v1", name, versions, preferredVersion: versions[0] };
  });
  if (path === "/apis") {
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: groups.map(({ kind: _k, apiVersion: _a, ...g }) => g),
    };
  }
  const match = /^\/apis\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (!match) return undefined;
  const [, group, version] = match;
  if (!version) return groups.find((g) => g.name === group);
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  return types.length > 0 ? resourceList(types, groupVersion(types[0]!)) : undefined;
}
