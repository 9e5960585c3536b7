import type { Logger } from "pino";
import type { ProbotOctokit } from "probot";
import type { ClusterTiming } from "../clusters/cluster-source.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { PlanRunPower } from "../queue/power-planner.ts";
import type { AnalyzeRunResults } from "../runs/analyze-port.ts";
import type { ResolveRunPlan } from "../runs/plan-resolver.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { DeliveryRecoveryTiming } from "./start-delivery-recovery.ts";

/**
 * What a test (or a benchmark) puts in place of a part of the bot; `netstress serve` passes none.
 * Settings are not here: they come whole from loadSettings.
 */
export interface BotSeams {
  log?: Logger;
  /** Probot's Octokit class; tests pass one with throttling off. */
  Octokit?: typeof ProbotOctokit;
  metrics?: Metrics;
  /** Where runs execute (default: the build farm when configured, else the embedded local executor). */
  executor?: ShardExecutor;
  resolvePlan?: ResolveRunPlan;
  /** What a run's design can see (default: the seeded planner, cached in Redis). */
  planPower?: PlanRunPower;
  analyze?: AnalyzeRunResults;
  progressIntervalMs?: number;
  imageWaitStepMs?: number;
  /** How missed webhook deliveries are recovered (default: DEFAULT_DELIVERY_RECOVERY). */
  deliveryRecovery?: Partial<DeliveryRecoveryTiming>;
  /** How often the clusterSources' hubs and clusters are polled (default: every 10 s, health every 30 s). */
  clusterTiming?: Partial<ClusterTiming>;
}
