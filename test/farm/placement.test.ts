import { describe, expect, it } from "vitest";
import { chooseCluster, type FarmState } from "../../src/farm/choose-cluster.ts";
import { clusterSchema, type ClusterConfig } from "../../src/farm/farm-config.ts";

const cluster = (fields: Partial<ClusterConfig> & Pick<ClusterConfig, "name" | "arches" | "capacity">) =>
  clusterSchema.parse({ kubeconfig: "/k", namespace: "ns", ...fields });

const farm = [
  cluster({ name: "amd-a", arches: ["amd64"], capacity: 10 }),
  cluster({ name: "amd-b", arches: ["amd64"], capacity: 20, capabilities: ["ipv6"] }),
  cluster({ name: "multi", arches: ["amd64", "arm64"], capacity: 4 }),
  cluster({ name: "z-blocked", arches: ["s390x"], capacity: 4, blocked: "firmware update" }),
];

const state = (changes: Partial<FarmState> = {}): FarmState => ({
  clusters: farm,
  load: new Map(),
  draining: new Set(),
  runLoad: new Map(),
  ...changes,
});

const placed = (p: ReturnType<typeof chooseCluster>) => (p.kind === "placed" ? p.cluster.name : p.kind);

describe("placement", () => {
  it("takes the capable cluster with the lowest load relative to its capacity", () => {
    const load = new Map([
      ["amd-a", 5],
      ["amd-b", 4],
      ["multi", 1],
    ]);
    expect(placed(chooseCluster({ arch: "amd64", capabilities: [] }, state({ load })))).toBe("amd-b");
  });

  it("only considers clusters with the arch and every required capability", () => {
    expect(
      placed(chooseCluster({ arch: "arm64", capabilities: [] }, state({ load: new Map([["multi", 3]]) }))),
    ).toBe("multi");
    expect(
      placed(
        chooseCluster({ arch: "amd64", capabilities: ["ipv6"] }, state({ load: new Map([["amd-b", 19]]) })),
      ),
    ).toBe("amd-b");
  });

  it("spreads one run's shards over equally loaded clusters", () => {
    const clusters = [farm[0]!, cluster({ name: "amd-c", arches: ["amd64"], capacity: 10 })];
    const load = new Map<string, number>();
    const runLoad = new Map<string, number>();
    const chosen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const p = chooseCluster(
        { arch: "amd64", capabilities: [] },
        { clusters, load, draining: new Set(), runLoad },
      );
      const name = placed(p);
      chosen.push(name);
      load.set(name, (load.get(name) ?? 0) + 1);
      runLoad.set(name, (runLoad.get(name) ?? 0) + 1);
    }
    expect(chosen.filter((c) => c === "amd-a")).toHaveLength(3);
    expect(chosen.filter((c) => c === "amd-c")).toHaveLength(3);
    // With the load equal, a cluster that already holds more of this run loses the tie.
    const tie = chooseCluster(
      { arch: "amd64", capabilities: [] },
      {
        clusters,
        load: new Map([
          ["amd-a", 2],
          ["amd-c", 2],
        ]),
        draining: new Set(),
        runLoad: new Map([["amd-a", 2]]),
      },
    );
    expect(placed(tie)).toBe("amd-c");
  });

  it("leaves out clusters that could not schedule an earlier attempt while another could take it", () => {
    const amd = { arch: "amd64", capabilities: [] } as const;
    // amd-a is the least loaded, but avoided: the next best takes it; a full one is waited for.
    expect(placed(chooseCluster({ ...amd, avoid: ["amd-a"] }, state()))).toBe("amd-b");
    const othersFull = state({
      load: new Map([
        ["amd-b", 20],
        ["multi", 4],
      ]),
    });
    expect(placed(chooseCluster({ ...amd, avoid: ["amd-a"] }, othersFull))).toBe("wait");
    // When every capable cluster is avoided, they are all tried again.
    expect(placed(chooseCluster({ ...amd, avoid: ["amd-a", "amd-b", "multi"] }, state()))).toBe("amd-a");
  });

  it("waits while every capable cluster is full or draining, and says which", () => {
    const p = chooseCluster({ arch: "arm64", capabilities: [] }, state({ load: new Map([["multi", 4]]) }));
    expect(p.kind).toBe("wait");
    expect(p.kind !== "placed" && p.reason).toContain("Full: multi (4/4)");
    const draining = chooseCluster(
      { arch: "arm64", capabilities: [] },
      state({ draining: new Set(["multi"]) }),
    );
    expect(draining.kind !== "placed" && draining.reason).toContain("Draining after API failures: multi");
  });

  it("fails with the arches that exist and the blocked clusters when nothing can ever take the shard", () => {
    for (const arch of ["ppc64le", "s390x"] as const) {
      const p = chooseCluster({ arch, capabilities: [] }, state());
      expect(p.kind).toBe("impossible");
      const reason = p.kind === "impossible" ? p.reason : "";
      expect(reason).toContain(`no build-farm cluster can run ${arch} shards`);
      expect(reason).toContain("amd64 (amd-a, amd-b, multi), arm64 (multi), s390x (z-blocked)");
      expect(reason).toContain("Blocked: z-blocked (firmware update)");
    }
    const p = chooseCluster({ arch: "arm64", capabilities: ["ipv6"] }, state());
    expect(p.kind === "impossible" && p.reason).toContain("arm64 + ipv6");
  });
});
