import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { Conclusion, RunPayloads, RunRecord } from "./run-record.ts";

/** What plan resolution found for a run. */
export type PlanResolution =
  | { kind: "ready"; plan: ExecutionPlan; payloads?: RunPayloads }
  /** The PR's images are not published yet: try again later. */
  | { kind: "images-pending"; missing: string[] }
  /** The run cannot go ahead; the check run concludes with this conclusion and reason. */
  | { kind: "unavailable"; conclusion: Extract<Conclusion, "failure" | "action_required">; reason: string };

/** Turns a run's payload and PR images into the binaries to execute (the payload port). */
export type ResolveRunPlan = (input: { run: RunRecord; signal: AbortSignal }) => Promise<PlanResolution>;
