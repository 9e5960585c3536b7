import type { Logger } from "pino";
import type { TestBinaryRegistry } from "../payload/test-binary-registry.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import type { ClusterLease } from "../runs/clusters-under-test.ts";
import { buildIterationJob, RUNNER_CONTAINER } from "./build-iteration-job.ts";
import { chooseClusters } from "./choose-clusters.ts";
import { buildJobSecret, jobSecretName, type JobSecretOptions } from "./build-job-secret.ts";
import type { Lease } from "./capacity-ledger.ts";
import type { ClusterRuntime } from "./cluster-runtime.ts";
import type { StreamKeyScope } from "./derive-stream-key.ts";
import type { ClusterConfig, FarmConfig } from "./farm-config.ts";
import { FarmError } from "./farm-error.ts";
import { createFreshSecret } from "./create-fresh-secret.ts";
import { retryTransient } from "./retry-transient.ts";
import type { iterationFiles } from "./iteration-files.ts";
import { jobName, type IterationKey } from "./job-identity.ts";
import { runKey } from "@netstress/core/kube/netstress-labels.ts";
import { judgeIteration, type IterationState } from "./judge-iteration.ts";
import type { LeaseKeeper } from "@netstress/core/kube/lease-keeper.ts";
import type { PlacementAnswer, PlacementWish } from "./placer.ts";
import { parseRecordStream, type ParsedRecordStream } from "./record-stream.ts";
import type { Shard } from "../runs/shard-executor.ts";

/** Attempt names looked for when adopting (the configuration allows at most 5 retries). */
const MAX_ATTEMPTS = 6;

export interface IterationContext {
  config: () => FarmConfig;
  runtimeFor(cluster: ClusterConfig): ClusterRuntime;
  runtimes(): ClusterRuntime[];
  leases: LeaseKeeper<Lease>;
  testBinaries: TestBinaryRegistry;
  logger: Logger;
  /** How often to look again for capacity that other replicas freed. */
  pollMs: number;
  /** The bot deployment (its Redis prefix), labelled on every Job. */
  instance: string;
  /** True once the bot is stopping: aborted iterations leave their Jobs to be adopted. */
  detached: () => boolean;
  /** Chooses a cluster and takes a lease there (see createPlacer). */
  place: (wish: PlacementWish) => Promise<PlacementAnswer>;
  /** The key a Job's runner signs its record stream with (see deriveStreamKey). */
  streamKey: (scope: StreamKeyScope) => Buffer;
}

export type IterationOutcome =
  | { kind: "done"; records: ResultRecord[] }
  /** Lost to the infrastructure more often than retries allow: this iteration only. */
  | { kind: "lost"; reason: string }
  /** Cannot run, and no other iteration of the shard could either (an image, the runner). */
  | { kind: "failed"; reason: string }
  | { kind: "cancelled" };

interface Placed {
  runtime: ClusterRuntime;
  lease: Lease;
  /** The Job's Secret (its stream key, and its clusters' kubeconfigs against leased clusters). */
  secret: string;
  /** The leased clusters this attempt runs against, one per arm. */
  clusters?: ClusterLease[];
}

/**
 * Runs one iteration of a shard to its end, or picks it up where an earlier life of the bot left
 * it: a saved result means done; a Job of this iteration on any cluster is adopted (its newest
 * attempt); otherwise a Job is placed and created. An iteration lost to the infrastructure runs
 * again as the next attempt (a new Job, created before the lost one is deleted, so the newest
 * attempt is always visible) up to the configured retries. Results are saved before the Job is
 * deleted, so a crash in between costs a deletion, never a result.
 */
export async function runIteration(
  ctx: IterationContext,
  input: {
    shard: Shard;
    iteration: number;
    pr?: number;
    files: ReturnType<typeof iterationFiles>;
    signal: AbortSignal;
    /** The run's clusters under test per arm (see ExecuteShardInput.clusters). */
    clusters?: Partial<Record<Arm, ClusterLease[]>>;
  },
): Promise<IterationOutcome> {
  const { shard, iteration, files, signal } = input;
  const base = { runId: shard.runId, arch: shard.arch, arms: shard.arms, iteration };
  const found = findAttempts(ctx, base);
  const saved = await files.read(iteration);
  if (saved) {
    await Promise.all(found.map((f) => removeJob(ctx, f)));
    return { kind: "done", records: saved };
  }
  const newest = found.at(-1);
  for (const leftover of found.slice(0, -1)) await removeJob(ctx, leftover);
  let attempt = newest?.attempt ?? 0;
  let current: Placed | undefined;
  if (newest) {
    current = newest;
    await whenRedisAnswers(() => ctx.leases.adopt(newest.lease), signal);
  }
  const losses: string[] = [];
  /** Clusters that could not schedule an attempt of this iteration. */
  const avoid: string[] = [];
  let previous: Placed | undefined;
  for (;;) {
    if (!current) {
      try {
        current = await dispatch(ctx, {
          shard,
          key: { ...base, attempt },
          pr: input.pr,
          avoid,
          signal,
          ...(input.clusters ? { clusters: input.clusters } : {}),
        });
      } catch (error) {
        if (signal.aborted) return { kind: "cancelled" };
        throw error;
      } finally {
        if (previous) await removeJob(ctx, previous);
      }
    }
    const state = await waitForOutcome(current.runtime, current.lease.id, {
      pendingMs: ctx.config().jobs.pendingSeconds * 1000,
      signal,
      ...(current.clusters ? { clusters: current.clusters } : {}),
    });
    if (state === "aborted") {
      // A stopping bot leaves its Jobs running for whoever resumes the run; an abort ends them.
      if (!ctx.detached()) await removeJob(ctx, current);
      return { kind: "cancelled" };
    }
    const verdict = await collect(current, state, {
      key: ctx.streamKey(streamKeyScope(current)),
      maxFileBytes: files.limits.iterationBytes,
      arms: shard.arms,
    });
    if (verdict.kind === "records") {
      // Before the results: a saved result means done, and the pod's log is gone with its Job.
      // Artifacts only inform: a disk that refuses them costs them, not the iteration's results.
      await files
        .saveArtifacts({ iteration, ...verdict.artifacts })
        .catch((error: unknown) =>
          ctx.logger.warn({ runId: shard.runId, iteration, err: error }, "artifacts not saved"),
        );
      await files.save(iteration, verdict.records);
      await removeJob(ctx, current);
      return { kind: "done", records: verdict.records };
    }
    losses.push(`iteration ${iteration} attempt ${attempt} on ${current.runtime.name}: ${verdict.reason}`);
    ctx.logger.warn({ runId: shard.runId, job: current.lease.id, reason: verdict.reason }, "iteration lost");
    if (verdict.elsewhere) avoid.push(current.runtime.name);
    if (!verdict.retry || attempt >= ctx.config().jobs.infraRetries) {
      await removeJob(ctx, current);
      const earlier = losses.slice(0, -1);
      return {
        kind: verdict.retry ? "lost" : "failed",
        reason: `${losses.at(-1)}${earlier.length > 0 ? ` (after ${losses.length} attempts: ${earlier.join("; ")})` : ""}`,
      };
    }
    // The next attempt is created before this one is deleted, so the newest attempt is always
    // visible; its capacity is free already (its pod is gone), or lost attempts could fill a
    // cluster and wait on each other forever.
    await whenRedisAnswers(() => ctx.leases.release(current!.lease), signal).catch(() => undefined);
    previous = current;
    current = undefined;
    attempt += 1;
  }
}

/** Jobs of this iteration that exist on any cluster, oldest attempt first. */
function findAttempts(ctx: IterationContext, base: Omit<IterationKey, "attempt">) {
  const found: (Placed & { attempt: number })[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const name = jobName({ ...base, attempt });
    const runtime = ctx.runtimes().find((r) => r.job(name));
    if (runtime)
      found.push({
        attempt,
        runtime,
        lease: { cluster: runtime.name, runKey: runKey(base.runId), id: name },
        secret: jobSecretName(name),
      });
  }
  return found;
}

/** Places the iteration, takes a capacity lease there and creates its Job and the Job's Secret. */
async function dispatch(
  ctx: IterationContext,
  input: {
    shard: Shard;
    key: IterationKey;
    pr?: number;
    avoid: readonly string[];
    signal: AbortSignal;
    /** The run's clusters under test per arm: this attempt's are chosen once it has farm capacity. */
    clusters?: Partial<Record<Arm, ClusterLease[]>>;
  },
): Promise<Placed> {
  const { shard, key, signal } = input;
  const lease = { runKey: runKey(key.runId), id: jobName(key) };
  for (;;) {
    signal.throwIfAborted();
    const config = ctx.config();
    // A Job on a cluster not listed yet would be invisible: wait until every cluster that could
    // hold one is known, or a restarted bot could create a twin.
    await abortable(
      Promise.all(
        config.clusters.filter((c) => c.arches.includes(key.arch)).map((c) => ctx.runtimeFor(c).ready),
      ),
      signal,
    );
    const answer = await whenRedisAnswers(
      () =>
        ctx.place({
          arch: key.arch,
          capabilities: shard.capabilities ?? [],
          avoid: input.avoid,
          runKey: lease.runKey,
          id: lease.id,
        }),
      signal,
    );
    if (answer.kind === "wait") {
      await ctx.leases.released(ctx.pollMs, signal);
      continue;
    }
    const { cluster } = answer;
    let leased: ClusterLease[] | undefined;
    try {
      // Chosen now, not before the wait for capacity: a cluster must outlive the Job's deadline.
      leased =
        input.clusters &&
        chooseClusters(input.clusters, shard.arms, key.iteration, config.jobs.activeDeadlineSeconds * 1000);
    } catch (error) {
      await ctx.leases.release(answer.lease);
      throw error;
    }
    const placed: Placed = {
      runtime: ctx.runtimeFor(cluster),
      lease: answer.lease,
      secret: jobSecretName(lease.id),
      ...(leased ? { clusters: leased } : {}),
    };
    const client = placed.runtime.client;
    let created = false;
    let secretMade = false;
    try {
      const job = buildIterationJob({
        config,
        cluster,
        shard,
        key,
        instance: ctx.instance,
        ...(input.pr !== undefined ? { pr: input.pr } : {}),
        testBinaries: ctx.testBinaries,
        ...(leased
          ? {
              clustersUnderTest: leased.map((l, i) => ({
                arm: shard.arms[i]!,
                id: l.cluster.id,
                payload: l.cluster.payload,
              })),
            }
          : {}),
      });
      // Read before anything exists: a source that cannot say leaves nothing behind.
      const secret: JobSecretOptions = {
        jobName: lease.id,
        namespace: cluster.namespace,
        labels: job.metadata!.labels!,
        streamKey: ctx.streamKey(streamKeyScope(placed)),
        ...(leased
          ? {
              kubeconfigs: Object.fromEntries(
                await Promise.all(
                  leased.map(async (l, i) => [shard.arms[i]!, await l.cluster.kubeconfig()] as const),
                ),
              ),
            }
          : {}),
      };
      // Before its Job: a bot stopped in between leaves a Secret that the next attempt of this
      // name replaces, never a pod waiting for ever on a Secret nobody creates.
      await createFreshSecret(client, buildJobSecret(secret), signal);
      secretMade = true;
      const made = await retryTransient(() => client.createJob(job), signal);
      created = true;
      await ownSecret(ctx, client, { ...secret, uid: made === "exists" ? undefined : made.uid }, signal);
    } catch (error) {
      if (created) await removeJob(ctx, placed);
      else {
        if (secretMade) await deleteSecret(ctx, placed);
        await ctx.leases.release(placed.lease);
      }
      throw error;
    }
    return placed;
  }
}

/**
 * Makes the Job its Secret's owner, so that the garbage collector deletes the Secret with it
 * however the Job goes (TTL, reconciliation, a lost bot). Best effort: the bot deletes the Secret
 * with the Job itself too.
 */
async function ownSecret(
  ctx: IterationContext,
  client: ClusterRuntime["client"],
  { uid: created, ...secret }: JobSecretOptions & { uid: string | undefined },
  signal: AbortSignal,
): Promise<void> {
  try {
    // The create call's answer names the uid; a Job an earlier, unanswered create made is read.
    const uid =
      created ?? (await retryTransient(() => client.readJob(secret.jobName), signal))?.metadata?.uid;
    if (!uid) return;
    const owned = buildJobSecret({ ...secret, owner: { name: secret.jobName, uid } });
    await retryTransient(() => client.replaceSecret(owned), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    ctx.logger.warn({ job: secret.jobName, err: error }, "its secret has no owner");
  }
}

async function deleteSecret(ctx: IterationContext, placed: Placed): Promise<void> {
  try {
    await retryTransient(
      () => placed.runtime.client.deleteSecret(placed.secret),
      AbortSignal.timeout(60_000),
    );
  } catch (error) {
    // Owned by its Job, the garbage collector takes it with the Job.
    ctx.logger.warn(
      { secret: placed.secret, cluster: placed.runtime.name, err: error },
      "secret not deleted",
    );
  }
}

/**
 * Resolves when the iteration's Job and pods say something other than "pending": on each change,
 * and now and then without one (a pod stuck in Pending changes nothing while it waits). A leased
 * cluster under test lost meanwhile loses the attempt (it reruns on another cluster).
 */
function waitForOutcome(
  runtime: ClusterRuntime,
  name: string,
  options: { pendingMs: number; signal: AbortSignal; clusters?: ClusterLease[] },
): Promise<IterationState | "aborted"> {
  const { pendingMs, signal } = options;
  const clusters = options.clusters ?? [];
  return new Promise((resolve) => {
    let seen = false;
    const finish = (state: IterationState | "aborted") => {
      off();
      clearInterval(recheck);
      signal.removeEventListener("abort", onAbort);
      for (const c of clusters) c.lost.removeEventListener("abort", check);
      resolve(state);
    };
    const check = () => {
      const gone = clusters.find((c) => c.lost.aborted);
      if (gone) {
        return finish({
          kind: "lost",
          retry: true,
          reason: `its cluster under test ${gone.cluster.id} was lost (${String(gone.lost.reason)})`,
        });
      }
      const job = runtime.job(name);
      seen ||= job !== undefined;
      const state = judgeIteration({ job, pods: runtime.pods(name), now: Date.now(), pendingMs });
      if (state.kind !== "pending") return finish(state);
      if (seen && !job)
        finish({ kind: "lost", retry: true, reason: "the Job was deleted before it finished" });
    };
    const onAbort = () => finish("aborted");
    const off = runtime.onChange(name, check);
    const recheck = setInterval(check, Math.min(30_000, Math.max(250, pendingMs / 4)));
    signal.addEventListener("abort", onAbort, { once: true });
    for (const c of clusters) c.lost.addEventListener("abort", check, { once: true });
    if (signal.aborted) return finish("aborted");
    check();
  });
}

type Collected =
  | {
      kind: "records";
      records: ResultRecord[];
      artifacts: Pick<ParsedRecordStream, "files" | "omitted">;
    }
  | Extract<IterationState, { kind: "lost" }>;

async function collect(
  placed: Placed,
  state: IterationState,
  expected: { key: Buffer; maxFileBytes: number; arms: readonly Arm[] },
): Promise<Collected> {
  if (state.kind === "lost") return state;
  if (state.kind === "pending") throw new Error("collect() needs a decided iteration");
  let log: string;
  try {
    log = await retryTransient(() => placed.runtime.client.readPodLog(state.pod, RUNNER_CONTAINER));
  } catch (error) {
    return { kind: "lost", retry: true, reason: `its log could not be read: ${(error as Error).message}` };
  }
  if (state.kind === "runner-failed") {
    const said = log
      .split("\n")
      .filter((line) => line.startsWith("netstress:"))
      .at(-1);
    return {
      kind: "lost",
      retry: false,
      reason: `the runner failed (exit ${state.exitCode})${said ? `: ${said}` : ""}`,
    };
  }
  const stream = parseRecordStream(log, { key: expected.key, maxFileBytes: expected.maxFileBytes });
  if ("forged" in stream) {
    // Lines beside the runner's own: its pod's code did it, and would again. None verifying is
    // also what a changed stream secret looks like (docs/operations.md): that attempt runs again.
    return {
      kind: "lost",
      retry: stream.forged === "unsigned",
      reason: `its record stream was tampered with: ${stream.problem}`,
    };
  }
  if (!stream.complete) {
    const tests = state.kind === "succeeded" && state.testsFailed ? `${state.testsFailed}; ` : "";
    return {
      kind: "lost",
      retry: true,
      reason: `${tests}its record stream is incomplete: ${stream.problem}`,
    };
  }
  // A pod runs its own arms only: results or files of another arm were written by its tests.
  const foreign = [...stream.records, ...stream.files].find((r) => !expected.arms.includes(r.arm));
  if (foreign) {
    return {
      kind: "lost",
      retry: false,
      reason: `its record stream was tampered with: it holds results of the ${foreign.arm} arm, which its pod does not run`,
    };
  }
  return {
    kind: "records",
    records: stream.records,
    artifacts: { files: stream.files, omitted: stream.omitted },
  };
}

/** What a Job's stream key is bound to: where the bot's client finds the Job, and its name. */
function streamKeyScope(placed: Placed): StreamKeyScope {
  const { client } = placed.runtime;
  return { cluster: client.cluster, namespace: client.namespace, job: placed.lease.id };
}

/** Deletes the Job (its pods go in the background) and gives its capacity back; best effort. */
async function removeJob(ctx: IterationContext, placed: Placed): Promise<void> {
  try {
    await retryTransient(() => placed.runtime.client.deleteJob(placed.lease.id), AbortSignal.timeout(60_000));
  } catch (error) {
    // ttlSecondsAfterFinished and the start-up reconciliation clean up what is left.
    ctx.logger.warn({ job: placed.lease.id, cluster: placed.runtime.name, err: error }, "job not deleted");
  }
  await deleteSecret(ctx, placed);
  await ctx.leases
    .release(placed.lease)
    .catch((error: unknown) => ctx.logger.warn({ err: error }, "lease not released"));
}

/** Redis may be restarting: an iteration waits for it rather than fail. */
async function whenRedisAnswers<T>(action: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await action();
    } catch (error) {
      if (signal.aborted || error instanceof FarmError) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** failures)));
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
