import type { RunPower } from "../analysis/run-design-power.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { RunProgress } from "../runner/run-plan.ts";
import type { RunAnalysis } from "./analyze-port.ts";
import type { ProvisionProgress } from "./clusters-under-test.ts";
import type {
  AdaptiveBatch,
  AdaptiveState,
  Conclusion,
  HeldCluster,
  RunPayloads,
  RunRecord,
  RunState,
  ResultSet,
} from "./run-record.ts";

/** What can happen to a run. */
export type RunEvent =
  /** `since`: when the wait began (default now; the first look's is kept). */
  | { type: "images-pending"; missing: string[]; since?: Date; next: Date }
  | { type: "planned"; plan: ExecutionPlan; payloads?: RunPayloads; power?: RunPower }
  | { type: "started" }
  | { type: "progress"; progress: RunProgress }
  /** An arm's clusters under test are queued, installing, upgrading or ready. */
  | { type: "provisioning"; progress: ProvisionProgress }
  | { type: "clusters-acquired"; clusters: HeldCluster[] }
  /** The run gave these clusters back (ids); `at` ends their cluster-hours. */
  | { type: "clusters-released"; ids: string[] }
  | { type: "results-finished"; results: ResultSet }
  /** An adaptive run's next batch, saved before it runs (a batch already planned is kept). */
  | {
      type: "batch-planned";
      design: AdaptiveState["design"];
      batch: AdaptiveBatch;
      /** With a crossover's first batch: the stream's history read for it, kept for the whole run. */
      history?: AdaptiveState["history"];
    }
  /** A crossover batch's PR half is about to wait for these clusters (ids) to move to the PR payload. */
  | { type: "upgrades-started"; batch: number; clusters: string[] }
  /** A crossover's cluster moved to the PR payload, or given back when that failed (`failed`: why). */
  | { type: "cluster-upgraded"; upgrade: NonNullable<AdaptiveState["upgrades"]>[number] }
  /** The batch's upgrades are over: its halves run. */
  | { type: "upgrades-ended" }
  /** An adaptive run's decision after its last finished batch, and its budget once known. */
  | { type: "batch-decided"; budget: number; decision: NonNullable<AdaptiveState["decision"]> }
  | { type: "analyzing" }
  /** Without an analysis: the run stopped (reason); with one: what the analysis concluded. */
  | { type: "concluded"; conclusion: Conclusion; reason: string }
  | ({ type: "analyzed" } & RunAnalysis);

const ALLOWED: Record<RunEvent["type"], readonly RunState[]> = {
  "images-pending": ["queued", "waiting-for-images"],
  planned: ["queued", "waiting-for-images"],
  // A run whose worker died is started again by the next worker.
  started: ["queued", "running", "analyzing"],
  progress: ["running"],
  provisioning: ["running"],
  "clusters-acquired": ["running"],
  // Clusters are given back on every way a run ends, an abort's conclusion coming first: recording
  // when changes no conclusion.
  "clusters-released": ["running", "analyzing", "completed"],
  "results-finished": ["running"],
  "batch-planned": ["running"],
  "batch-decided": ["running"],
  "upgrades-started": ["running"],
  "cluster-upgraded": ["running"],
  "upgrades-ended": ["running"],
  analyzing: ["running"],
  concluded: ["queued", "waiting-for-images", "running", "analyzing"],
  analyzed: ["analyzing"],
};

/**
 * The stress-run state machine:
 *
 *   queued ─► waiting-for-images ─► queued (planned) ─► running ─► analyzing ─► completed (analyzed)
 *      └──────────────┴─────────────────────────┴────────────┴─────────► completed (any conclusion)
 *
 * Returns the next record, or undefined when the event does not apply in the current state (a
 * late progress report after an abort, a second conclusion): completed is final, so whoever
 * concludes first wins and every check run gets exactly one conclusion.
 */
export function applyRunEvent(run: RunRecord, event: RunEvent, now: Date): RunRecord | undefined {
  if (!ALLOWED[event.type].includes(run.state)) return undefined;
  const base = { ...run, revision: run.revision + 1, updatedAt: now.toISOString() };
  switch (event.type) {
    case "images-pending":
      return {
        ...base,
        state: "waiting-for-images",
        imageWait: {
          since: run.imageWait?.since ?? (event.since ?? now).toISOString(),
          attempts: (run.imageWait?.attempts ?? 0) + 1,
          missing: event.missing,
          next: event.next.toISOString(),
        },
      };
    case "planned":
      return {
        ...base,
        state: "queued",
        plan: event.plan,
        ...(event.payloads ? { payloads: event.payloads } : {}),
        ...(event.power ? { power: event.power } : {}),
      };
    case "started":
      // A resumed run's upgrades are the ones its new worker waits for, not the stopped one's.
      return {
        ...base,
        ...withoutUpgrading(run),
        state: "running",
        startedAt: run.startedAt ?? now.toISOString(),
      };
    case "progress":
      return { ...base, progress: event.progress };
    case "provisioning": {
      const others = (run.provisioning ?? []).filter((p) => p.arm !== event.progress.arm);
      const provisioning = [...others, event.progress].filter((p) => p.phase !== "ready");
      const { provisioning: _, ...rest } = base;
      return provisioning.length > 0 ? { ...rest, provisioning } : rest;
    }
    case "clusters-acquired": {
      // A cluster still held (a resumed run adopting its own) keeps its first acquisition.
      const held = new Set((run.clusters ?? []).filter((c) => !c.releasedAt).map((c) => `${c.arm}\0${c.id}`));
      const added = event.clusters.filter((c) => !held.has(`${c.arm}\0${c.id}`));
      // The arms that got their clusters no longer wait for them.
      const arms = new Set(event.clusters.map((c) => c.arm));
      const provisioning = (run.provisioning ?? []).filter((p) => !arms.has(p.arm));
      const { provisioning: _, ...rest } = base;
      return {
        ...rest,
        ...(provisioning.length > 0 ? { provisioning } : {}),
        clusters: [...(run.clusters ?? []), ...added],
      };
    }
    case "clusters-released": {
      const ids = new Set(event.ids);
      const at = now.toISOString();
      return {
        ...base,
        clusters: (run.clusters ?? []).map((c) =>
          ids.has(c.id) && !c.releasedAt ? { ...c, releasedAt: at } : c,
        ),
      };
    }
    case "results-finished":
      // The first results of a shard stand: a second worker racing on the run analyzes those too.
      if (run.results.some((r) => r.id === event.results.id)) return undefined;
      return {
        ...base,
        results: [...run.results, event.results],
      };
    case "batch-planned": {
      const batches = run.adaptive?.batches ?? [];
      if (batches.some((b) => b.shardId === event.batch.shardId)) return undefined;
      // The executions counted so far were the last batch's: the new one has run none yet.
      const { progress: _, ...rest } = base;
      return {
        ...rest,
        adaptive: {
          ...run.adaptive,
          design: event.design,
          batches: [...batches, event.batch],
          ...(event.history && !run.adaptive?.history ? { history: event.history } : {}),
        },
      };
    }
    case "upgrades-started":
      if (!run.adaptive) return undefined;
      return {
        ...base,
        adaptive: {
          ...run.adaptive,
          upgrading: {
            batch: event.batch,
            since: now.toISOString(),
            clusters: event.clusters.map((id) => ({ id, state: "upgrading" })),
          },
        },
      };
    case "cluster-upgraded": {
      if (!run.adaptive) return undefined;
      const { upgrading } = run.adaptive;
      const upgrades = (run.adaptive.upgrades ?? []).filter((u) => u.id !== event.upgrade.id);
      const state = event.upgrade.failed === undefined ? "upgraded" : "failed";
      return {
        ...base,
        adaptive: {
          ...run.adaptive,
          upgrades: [...upgrades, event.upgrade],
          ...(upgrading
            ? {
                upgrading: {
                  ...upgrading,
                  clusters: upgrading.clusters.map((c) => (c.id === event.upgrade.id ? { ...c, state } : c)),
                },
              }
            : {}),
        },
      };
    }
    case "upgrades-ended":
      if (!run.adaptive?.upgrading) return undefined;
      return { ...base, ...withoutUpgrading(run) };
    case "batch-decided":
      if (!run.adaptive) return undefined;
      return { ...base, adaptive: { ...run.adaptive, budget: event.budget, decision: event.decision } };
    case "analyzing":
      return { ...base, state: "analyzing" };
    case "concluded":
      return {
        ...base,
        ...withoutUpgrading(run),
        state: "completed",
        conclusion: event.conclusion,
        reason: event.reason,
        finishedAt: now.toISOString(),
      };
    case "analyzed": {
      const { type: _, ...analysis } = event;
      return { ...base, ...analysis, state: "completed", finishedAt: now.toISOString() };
    }
  }
}

/** The run's adaptive state without upgrades in flight; nothing when it has none. */
function withoutUpgrading(run: RunRecord): Pick<RunRecord, "adaptive"> | Record<string, never> {
  if (!run.adaptive?.upgrading) return {};
  const { upgrading: _, ...adaptive } = run.adaptive;
  return { adaptive };
}
