import type { RunPower } from "../analysis/run-design-power.ts";
import { DEFAULT_TARGET, parseTarget } from "../config/parse-target.ts";
import type { ResolveRunPlan } from "../runs/plan-resolver.ts";
import type { RunRecord } from "../runs/run-record.ts";
import { runWording } from "../runs/run-wording.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { ClusterSourceTraits } from "./adaptive-design.ts";
import type { PlanRunPower } from "./power-planner.ts";
import { runPowerDesign } from "./run-power-design.ts";
import { applyAndPublish, runScoped, type RunDeps } from "./run-deps.ts";

export interface ResolveStageOptions {
  resolvePlan: ResolveRunPlan;
  executor: ShardExecutor;
  /** First wait for the PR's images; doubles each time up to maxImageWaitStepMs. */
  imageWaitStepMs?: number;
  maxImageWaitStepMs?: number;
  now?: () => Date;
  /**
   * What a planned run's design can see (its check run and gate say it): the planner, and what the
   * bot's cluster source can do (undefined while none is configured: the clusters a run's
   * iterations meet are unknown).
   */
  power?: { plan: PlanRunPower; clusterSource: () => ClusterSourceTraits | undefined };
}

/** What the planned run's design can see, when the planner can say; a planner failure costs only the line. */
async function plannedPower(
  deps: RunDeps,
  options: ResolveStageOptions,
  run: RunRecord,
): Promise<RunPower | undefined> {
  if (!options.power) return undefined;
  const design = runPowerDesign(run, options.power.clusterSource());
  if (!design) return undefined;
  try {
    return await options.power.plan({ design, target: run.source.target ?? parseTarget(DEFAULT_TARGET) });
  } catch (error) {
    deps.log.warn({ err: error }, "the power planner failed: the run goes on without saying what it can see");
    return undefined;
  }
}

/**
 * The resolve stage of a run: checks that it can run at all (an executor for its arch, a baseline
 * this bot has), resolves its plan, waits with backoff while the PR's images are missing, and hands
 * it to the execute stage. Every way out that is not "planned" concludes the run with a reason.
 */
export async function processResolve(
  stageDeps: RunDeps,
  options: ResolveStageOptions,
  runId: string,
): Promise<void> {
  const { imageWaitStepMs = 30_000, maxImageWaitStepMs = 10 * 60_000, now = () => new Date() } = options;
  const run = await stageDeps.store.get(runId);
  if (!run || run.state === "completed") return;
  const deps = runScoped(stageDeps, run);
  const conclude = (conclusion: "failure" | "action_required", reason: string) =>
    applyAndPublish(deps, runId, { type: "concluded", conclusion, reason });

  // `more` reuses its parent's plan (the resolver restores swept binaries); a retried job finds
  // its plan already made.
  if (run.plan && run.state !== "queued") return;
  if (!run.plan && run.options.baseline === "history" && !run.source.releaseStream) {
    await conclude(
      "action_required",
      "baseline=history compares with the pooled history of a release stream: set release_stream in .github/network-stress.yml",
    );
    return;
  }
  const arches = await options.executor.arches();
  if (!arches.includes(run.arch)) {
    await conclude(
      "action_required",
      `no ${options.executor.name} executor runs ${run.arch} (available: ${arches.join(", ") || "none"})`,
    );
    return;
  }

  let resolution;
  try {
    resolution = await options.resolvePlan({ run, signal: AbortSignal.timeout(10 * 60_000) });
  } catch (error) {
    deps.log.error({ err: error }, "plan resolution failed");
    await conclude(
      "failure",
      runWording.planFailed(run, error instanceof Error ? error.message : String(error)),
    );
    return;
  }
  switch (resolution.kind) {
    case "ready": {
      if (run.plan) {
        await deps.queues.enqueueExecute(runId);
        return;
      }
      const payloads = resolution.payloads ? { payloads: resolution.payloads } : {};
      const power = await plannedPower(deps, options, { ...run, plan: resolution.plan, ...payloads });
      const planned = await applyAndPublish(deps, runId, {
        type: "planned",
        plan: resolution.plan,
        ...payloads,
        ...(power ? { power } : {}),
      });
      if (planned) await deps.queues.enqueueExecute(runId);
      return;
    }
    case "unavailable":
      await conclude(resolution.conclusion, resolution.reason);
      return;
    case "images-pending": {
      const since = Date.parse(run.imageWait?.since ?? now().toISOString());
      const deadline = since + run.source.imageWaitMinutes * 60_000;
      const attempts = run.imageWait?.attempts ?? 0;
      if (now().getTime() >= deadline) {
        await conclude(
          "action_required",
          `the PR's images did not appear within ${run.source.imageWaitMinutes} minutes: ` +
            `${resolution.missing.join(", ")}; publish them, then press Re-run`,
        );
        return;
      }
      const delayMs = Math.min(
        imageWaitStepMs * 2 ** attempts,
        maxImageWaitStepMs,
        deadline - now().getTime(),
      );
      const next = new Date(now().getTime() + delayMs);
      const event = {
        type: "images-pending" as const,
        missing: resolution.missing,
        since: new Date(since),
        next,
      };
      if (await applyAndPublish(deps, runId, event)) {
        await deps.queues.enqueueResolve(runId, { attempt: attempts + 1, delayMs });
      }
      return;
    }
  }
}
