import type { Arch } from "@netstress/core/arch/arch.ts";

/**
 * Every Redis key and channel the bot uses, under the deployment's prefix (BullMQ's queues use the
 * same prefix for their own keys). Built here and only here, so that a reader sees the whole data
 * layout at once and two modules never collide.
 */
export function redisKeys(prefix: string) {
  return {
    /** A run record (JSON), by run id. */
    run: (id: string) => `${prefix}:store:run:${id}`,
    /** The run holding a dedupe key while it is active. */
    activeRun: (dedupeKey: string) => `${prefix}:store:active:${dedupeKey}`,
    /** An installation's active PR runs (a set of run ids), kept by save-run.lua. */
    installationActiveRuns: (installationId: number) =>
      `${prefix}:store:installation-active:${installationId}`,
    /**
     * Set once the installations' active sets were built from the dedupe keys, which name every
     * active run, including those saved by a version that kept no sets.
     */
    activeRunSetsBuilt: `${prefix}:store:installation-active-built`,
    /** Runs whose subject has not been told their latest state (GitHub was down), by when. */
    unpublishedRuns: `${prefix}:store:unpublished`,
    /** Webhook deliveries the intake acted on. */
    delivery: (deliveryId: string) => `${prefix}:store:delivery:${deliveryId}`,
    /** Held while a missed delivery's redelivery is on its way (no other sweep asks again). */
    deliveryRedelivery: (deliveryId: string) => `${prefix}:store:redelivery:${deliveryId}`,
    /** The PR runs of one commit (the index a fork's check suite is answered from). */
    commitRuns: (owner: string, repo: string, sha: string) =>
      `${prefix}:store:commit:${owner}/${repo}@${sha}`,
    /** A PR's runs, scored by creation time. */
    pullRequestRuns: (owner: string, repo: string, pr: number) => `${prefix}:store:pr:${owner}/${repo}#${pr}`,
    /** Set once a PR got its one reply of a kind (the polite refusal of untrusted users). */
    pullRequestReplied: (owner: string, repo: string, pr: number, kind: string) =>
      `${prefix}:store:replied:${kind}:${owner}/${repo}#${pr}`,
    /** Who approved an outside author's PR with /ok-to-test, and which head they approved. */
    approval: (owner: string, repo: string, pr: number) => `${prefix}:store:approval:${owner}/${repo}#${pr}`,
    /** Held while an installation's new runs are counted against its quotas and accepted. */
    admissionLock: (installationId: number) => `${prefix}:store:admission:${installationId}`,
    /** A release gate (hash, field `gate`: the request), written with its runs by create-gate.lua. */
    gate: (id: string) => `${prefix}:gate:${id}`,
    /** The gate an identical request joins while it is active. */
    activeGate: (requestKey: string) => `${prefix}:gate-active:${requestKey}`,
    /** A release stream's history pool on one arch (the history store appends its own suffixes). */
    historyPool: (stream: string, arch: Arch) => `${prefix}:history:${stream}:${arch}`,
    /** The pool's payload entries, scored by when their first run was recorded. */
    historyPayloads: (stream: string, arch: Arch) => `${prefix}:history:${stream}:${arch}:payloads`,
    /** One payload's entry (hash: merged per-test counts, runs, first and last time, claimed run ids). */
    historyPayload: (stream: string, arch: Arch, entryId: string) =>
      `${prefix}:history:${stream}:${arch}:payload:${entryId}`,
    /** Active run id → state (runs-by-state gauge). */
    activeRunStates: `${prefix}:activity:active`,
    /** The newest run ids (the /runs index). */
    recentRuns: `${prefix}:activity:recent`,
    /** Pub/sub channel of run aborts, heard by every worker. */
    abortChannel: `${prefix}:abort`,
    /** An installation's GitHub content writes in the last window, shared by every process. */
    githubWrites: (installationId: number) => `${prefix}:github:${installationId}:writes`,
    /** Set once a check run's annotations were sent (GitHub appends them on every update). */
    checkRunAnnotated: (checkRunId: string) => `${prefix}:github:check-run:${checkRunId}:annotated`,
    /** Until when GitHub asked every process to stop writing for an installation. */
    githubPausedUntil: (installationId: number) => `${prefix}:github:${installationId}:paused-until`,
    /** The permission an installation lacks: its writes are paused while the key lives. */
    githubMissingPermission: (installationId: number) =>
      `${prefix}:github:${installationId}:missing-permission`,
    /** The permission to ask an installation's owner for in the bot's next reply there. */
    githubPermissionAdvice: (installationId: number) =>
      `${prefix}:github:${installationId}:permission-advice`,
    /** Capacity leases held on a farm cluster. */
    farmLeases: (cluster: string) => `${prefix}:farm:leases:${cluster}`,
    /** The leases one run holds, for release. */
    farmRunLeases: (runKey: string) => `${prefix}:farm:run-leases:${runKey}`,
    /** What changed between two payloads on an arch (JSON), or why that could not be read. */
    payloadChanges: (arch: Arch, from: string, to: string) =>
      `${prefix}:payload-changes:${arch}:${from}:${to}`,
    /** A stream's trend view on an arch and the history fingerprint it was computed from (JSON). */
    trendView: (stream: string, arch: Arch) => `${prefix}:trends:${stream}:${arch}:view`,
    /** A farm cluster that drains (takes no new work) until the key expires. */
    farmDrain: (cluster: string) => `${prefix}:farm:drain:${cluster}`,
    /** Leases on a cluster under test (`<source>/<cluster>`) or on a source's quota (`<source>`). */
    clusterLeases: (pool: string) => `${prefix}:clusters:leases:${pool}`,
    /** Runs waiting for a source's quota, in the order they are served (priority band, then arrival). */
    clusterQuotaQueue: (source: string) => `${prefix}:clusters:quota-queue:${source}`,
    /** When each waiting run's ticket lapses unless it asks again. */
    clusterQuotaTickets: (source: string) => `${prefix}:clusters:quota-tickets:${source}`,
    /** A static cluster a PR arm had: the sha256 of its kubeconfig then, and that run. */
    clusterFence: (pool: string) => `${prefix}:clusters:fence:${pool}`,
    /** The cluster leases one run holds (resume after a restart, reconciliation). */
    clusterRunLeases: (runKey: string) => `${prefix}:clusters:run-leases:${runKey}`,
    /** What a run design can see (the power planner's answer, JSON), by a digest of the design and target. */
    powerPlan: (designKey: string) => `${prefix}:power-plan:${designKey}`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
