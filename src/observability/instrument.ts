import type { GateStore } from "../gate/gate-store.ts";
import type { RunStore } from "../queue/run-store.ts";
import type { RunRecord } from "../runs/run-record.ts";
import type { ShardExecutor } from "../runs/shard-executor.ts";
import type { GitHubClient } from "../trust/github-client.ts";
import type { Metrics } from "./metrics.ts";
import type { RunActivity } from "./run-activity.ts";

interface RunObservers {
  metrics: Metrics;
  activity: RunActivity;
}

/** Records the state a run entered: the transition counter, runs by state, recent runs. */
async function observeRun(
  { metrics, activity }: RunObservers,
  run: RunRecord | undefined,
  previousState?: RunRecord["state"],
): Promise<void> {
  if (!run || run.state === previousState) return;
  metrics.runTransition({ state: run.state, ...(run.conclusion ? { conclusion: run.conclusion } : {}) });
  await activity.record(run);
}

/**
 * A store method that may store new runs, recording each run it stored as entering its state:
 * the run store's create and the gate store's createOrJoin (a gate is stored with its runs, as the
 * run store stores them) count alike. Nothing is recorded when the method stored nothing.
 */
function recordingCreated<A extends unknown[], R extends { created: boolean }>(
  observers: RunObservers,
  store: (...args: A) => Promise<R>,
  stored: (result: R, ...args: A) => readonly RunRecord[],
): (...args: A) => Promise<R> {
  return async (...args) => {
    const result = await store(...args);
    if (result.created) for (const run of stored(result, ...args)) await observeRun(observers, run);
    return result;
  };
}

/** The run store, recording every state a run enters (transition counter, runs by state, recent runs). */
export function instrumentRunStore(store: RunStore, observers: RunObservers): RunStore {
  const transition: RunStore["transition"] = async (id, event) => {
    const change = await store.transition(id, event);
    if (change) await observeRun(observers, change.after, change.before.state);
    return change;
  };
  return {
    ...store,
    create: recordingCreated(observers, store.create, (result) => [result.run]),
    transition,
    apply: async (id, event) => (await transition(id, event))?.after,
  };
}

/** The gate store, recording the runs a new gate is stored with as the run store records a new run. */
export function instrumentGateStore(gates: GateStore, observers: RunObservers): GateStore {
  return {
    ...gates,
    createOrJoin: recordingCreated(observers, gates.createOrJoin, (_result, _gate, runs) => runs),
  };
}

/** The executor, timing every shard by arch, executor and outcome. */
export function instrumentExecutor(
  executor: ShardExecutor,
  metrics: Metrics,
  now: () => number = performance.now.bind(performance),
): ShardExecutor {
  return {
    name: executor.name,
    arches: () => executor.arches(),
    async execute(input) {
      const started = now();
      const record = (status: string) =>
        metrics.shardFinished({
          arch: input.shard.arch,
          executor: executor.name,
          status,
          seconds: (now() - started) / 1000,
        });
      try {
        const outcome = await executor.execute(input);
        record(outcome.status);
        return outcome;
      } catch (error) {
        record("error");
        throw error;
      }
    },
  };
}

/** An installation's Octokit, reporting the rate limit left after every response (successful or not). */
export function instrumentOctokit<T extends GitHubClient>(
  octokit: T,
  metrics: Metrics,
  installation: number,
): T {
  const observe = (headers: Record<string, unknown> | undefined) => {
    const remaining = Number(headers?.["x-ratelimit-remaining"]);
    if (Number.isFinite(remaining)) {
      metrics.githubRateLimit({
        installation,
        resource: String(headers?.["x-ratelimit-resource"] ?? "core"),
        remaining,
      });
    }
  };
  octokit.hook.after("request", (response) => observe(response.headers));
  octokit.hook.error("request", (error) => {
    observe((error as { response?: { headers?: Record<string, unknown> } }).response?.headers);
    throw error;
  });
  return octokit;
}
