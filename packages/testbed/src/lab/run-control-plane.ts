import { setTimeout as sleep } from "node:timers/promises";
import { LabApiStatusError, type LabApiGet } from "./lab-api-client.ts";

export const LEADER_LEASE = "ovn-kubernetes-master";
const LEASE_SECONDS = 4;

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/**
 * The lab's `ovnkube-control-plane`: leader election through the Lease `ovn-kubernetes-master`
 * (holder: the pod's name, 4 s lease, renewed every second), as client-go's leader election does
 * it — take the lease when it is free or expired, renew it while leading, give it up on SIGTERM
 * (release on cancel), so that deleting the leader's pod hands leadership to another pod within
 * about a second. It models who leads, nothing more.
 */
export async function runControlPlane(options: {
  api: LabApiGet;
  namespace: string;
  identity: string;
  signal: AbortSignal;
  log: (message: string, fields?: Record<string, unknown>) => void;
}): Promise<void> {
  const { api, namespace, identity, signal, log } = options;
  const path = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  let leading = false;
  const now = () => new Date().toISOString();
  log("ready", { identity });
  while (!signal.aborted) {
    try {
      const lease = await api<Lease>(`${path}/${LEADER_LEASE}`).catch((error: unknown) => {
        if (error instanceof LabApiStatusError && error.status === 404) return undefined;
        throw error;
      });
      const spec = lease?.spec ?? {};
      const mine = spec.holderIdentity === identity;
      const expired =
        !spec.holderIdentity ||
        Date.parse(spec.renewTime ?? "") + (spec.leaseDurationSeconds ?? LEASE_SECONDS) * 1000 < Date.now();
      if (!lease) {
        await api(path, {
          method: "POST",
          body: {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: LEADER_LEASE, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: LEASE_SECONDS,
              acquireTime: now(),
              renewTime: now(),
              leaseTransitions: 0,
            },
          },
        });
      } else if (mine || expired) {
        await api(`${path}/${LEADER_LEASE}`, {
          method: "PUT",
          body: {
            ...lease,
            spec: {
              ...spec,
              holderIdentity: identity,
              leaseDurationSeconds: LEASE_SECONDS,
              renewTime: now(),
              ...(mine ? {} : { acquireTime: now(), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
            },
          },
        });
      }
      // Reached only when the write above (if any) went through: a conflict throws.
      const holds = !lease || mine || expired;
      if (holds && !leading) log("became leader", { identity });
      if (!holds && leading) log("lost leadership", { leader: spec.holderIdentity });
      leading = holds;
    } catch (error) {
      // A conflict means another pod wrote first: read again.
      if (!(error instanceof LabApiStatusError && error.status === 409)) {
        log("leader election failed, retrying", { error: String(error) });
      }
    }
    await sleep(leading ? 1000 : 500, undefined, { signal }).catch(() => undefined);
  }
  if (leading) {
    const lease = await api<Lease>(`${path}/${LEADER_LEASE}`).catch(() => undefined);
    if (lease?.spec?.holderIdentity === identity) {
      await api(`${path}/${LEADER_LEASE}`, {
        method: "PUT",
        body: { ...lease, spec: { ...lease.spec, holderIdentity: "", renewTime: now() } },
      }).catch(() => undefined);
      log("released leadership");
    }
  }
}
