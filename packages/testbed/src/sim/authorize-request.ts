import type { KubeObject, ObjectStore } from "./object-store.ts";

/** Who a bearer token is: a user name (a service account's is system:serviceaccount:<ns>:<name>) and groups. */
export interface Identity {
  user: string;
  groups: string[];
}

/** What a request asks to do, in RBAC's terms. */
export interface RequestAttributes {
  verb: string;
  group: string;
  /** The resource, with "/<subresource>" when it names one. */
  resource: string;
  /** "" for a cluster-scoped resource or a request across namespaces. */
  namespace: string;
  name?: string;
}

export type Authorization =
  | {
      allowed: true;
      /** The binding that allowed it, "RoleBinding <ns>/<name>" or "ClusterRoleBinding <name>". */ by: string;
    }
  | { allowed: false; message: string };

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}
interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

const has = (list: string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

function names(subject: Subject, identity: Identity): boolean {
  if (subject.kind === "User") return subject.name === identity.user;
  if (subject.kind === "Group") return identity.groups.includes(subject.name);
  return (
    subject.kind === "ServiceAccount" &&
    identity.user === `system:serviceaccount:${subject.namespace ?? ""}:${subject.name}`
  );
}

function allows(rule: Rule, request: RequestAttributes): boolean {
  if (!has(rule.apiGroups, request.group) || !has(rule.resources, request.resource)) return false;
  if (!has(rule.verbs, request.verb)) return false;
  // resourceNames narrow a rule to named objects: a list or a create names none, so they never match.
  if (rule.resourceNames?.length)
    return request.name !== undefined && rule.resourceNames.includes(request.name);
  return true;
}

/**
 * Kubernetes RBAC over the objects in the store: the request is allowed when a ClusterRoleBinding,
 * or a RoleBinding in the request's namespace, binds one of the identity's subjects to a role with
 * a rule covering its verb, API group, resource and (when the rule names some) object name — and
 * refused with the real API server's message otherwise.
 */
export function authorizeRequest(
  store: ObjectStore,
  identity: Identity,
  request: RequestAttributes,
): Authorization {
  const rulesOf = (ref: { kind?: string; name?: string } | undefined, namespace: string): Rule[] => {
    const role =
      ref?.kind === "Role"
        ? store.get("roles", namespace, ref.name ?? "")
        : store.get("clusterroles", "", ref?.name ?? "");
    return ((role as (KubeObject & { rules?: Rule[] }) | undefined)?.rules ?? []) as Rule[];
  };
  const bindings = [
    ...store
      .list("clusterrolebindings", undefined, () => true)
      .items.map((b) => ({
        binding: b,
        by: `ClusterRoleBinding ${b.metadata.name}`,
        namespace: "",
      })),
    ...(request.namespace
      ? store
          .list("rolebindings", request.namespace, () => true)
          .items.map((b) => ({
            binding: b,
            by: `RoleBinding ${request.namespace}/${b.metadata.name}`,
            namespace: request.namespace,
          }))
      : []),
  ];
  for (const { binding, by, namespace } of bindings) {
    const subjects = (binding.subjects ?? []) as Subject[];
    if (!subjects.some((s) => names(s, identity))) continue;
    const ref = binding.roleRef as { kind?: string; name?: string } | undefined;
    if (rulesOf(ref, namespace).some((rule) => allows(rule, request))) return { allowed: true, by };
  }
  const [resource] = request.resource.split("/");
  const what = `${resource}${request.group ? `.${request.group}` : ""}${request.name ? ` "${request.name}"` : ""}`;
  const where = request.namespace ? `in the namespace "${request.namespace}"` : "at the cluster scope";
  return {
    allowed: false,
    message: `${what} is forbidden: User "${identity.user}" cannot ${request.verb} resource "${request.resource}" in API group "${request.group}" ${where}`,
  };
}
