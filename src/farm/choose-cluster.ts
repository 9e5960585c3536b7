import type { Arch } from "@netstress/core/arch/arch.ts";
import type { ClusterConfig } from "./farm-config.ts";

export interface PlacementRequest {
  arch: Arch;
  /** Capabilities beyond the arch that the shard needs. */
  capabilities: readonly string[];
  /** Clusters that could not place an earlier attempt: left out while any other could take it. */
  avoid?: readonly string[];
}

export interface FarmState {
  clusters: readonly ClusterConfig[];
  /** Shards running per cluster, across all bot replicas. */
  load: ReadonlyMap<string, number>;
  /** Clusters whose API keeps failing: no new shards for a while. */
  draining: ReadonlySet<string>;
  /** This run's shards per cluster, so that a run spreads. */
  runLoad: ReadonlyMap<string, number>;
}

export type Placement =
  | { kind: "placed"; cluster: ClusterConfig }
  /** Eligible clusters exist but are all full or draining: try again later. */
  | { kind: "wait"; reason: string }
  /** No cluster can ever take it under this configuration. */
  | { kind: "impossible"; reason: string };

/**
 * Where the next shard goes: among clusters with the arch and every capability, not blocked and
 * not draining, the one with the lowest load/capacity; ties go to the cluster holding fewer of
 * this run's shards (a run spreads, so one sick cluster does not decide its verdict), then by name.
 * Clusters to avoid are left out while another open cluster exists (the shard waits for its room).
 */
export function chooseCluster(request: PlacementRequest, state: FarmState): Placement {
  const capable = state.clusters.filter(
    (c) =>
      c.arches.includes(request.arch) && request.capabilities.every((cap) => c.capabilities.includes(cap)),
  );
  const open = capable.filter((c) => c.blocked === false);
  const avoided = new Set(request.avoid);
  const preferred = open.filter((c) => !avoided.has(c.name));
  const load = (c: ClusterConfig) => state.load.get(c.name) ?? 0;
  const candidates = (preferred.length > 0 ? preferred : open).filter(
    (c) => !state.draining.has(c.name) && load(c) < c.capacity,
  );
  if (candidates.length > 0) {
    const ratio = (c: ClusterConfig) => load(c) / c.capacity;
    const runLoad = (c: ClusterConfig) => state.runLoad.get(c.name) ?? 0;
    const [best] = [...candidates].sort(
      (a, b) => ratio(a) - ratio(b) || runLoad(a) - runLoad(b) || a.name.localeCompare(b.name),
    );
    return { kind: "placed", cluster: best! };
  }
  const wanted = [request.arch, ...request.capabilities].join(" + ");
  const explanation = describeFarm(state, capable);
  if (open.length === 0) {
    return { kind: "impossible", reason: `no build-farm cluster can run ${wanted} shards. ${explanation}` };
  }
  return { kind: "wait", reason: `every build-farm cluster for ${wanted} is busy. ${explanation}` };
}

function describeFarm(state: FarmState, capable: readonly ClusterConfig[]): string {
  const byArch = new Map<string, string[]>();
  for (const cluster of state.clusters) {
    for (const arch of cluster.arches) byArch.set(arch, [...(byArch.get(arch) ?? []), cluster.name]);
  }
  const arches = [...byArch].map(([arch, names]) => `${arch} (${names.join(", ")})`).join(", ");
  const parts = [`Arches offered: ${arches || "none"}.`];
  const blocked = state.clusters.filter((c) => c.blocked !== false);
  if (blocked.length > 0) {
    parts.push(
      `Blocked: ${blocked.map((c) => (typeof c.blocked === "string" ? `${c.name} (${c.blocked})` : c.name)).join(", ")}.`,
    );
  }
  const full = capable.filter((c) => c.blocked === false && (state.load.get(c.name) ?? 0) >= c.capacity);
  if (full.length > 0) {
    parts.push(`Full: ${full.map((c) => `${c.name} (${state.load.get(c.name)}/${c.capacity})`).join(", ")}.`);
  }
  const draining = capable.filter((c) => c.blocked === false && state.draining.has(c.name));
  if (draining.length > 0)
    parts.push(`Draining after API failures: ${draining.map((c) => c.name).join(", ")}.`);
  const missing = state.clusters.filter((c) => !capable.includes(c) && c.capabilities.length > 0);
  if (missing.length > 0 && capable.length === 0) {
    parts.push(
      `Capabilities offered: ${missing.map((c) => `${c.name} [${c.capabilities.join(", ")}]`).join("; ")}.`,
    );
  }
  return parts.join(" ");
}
