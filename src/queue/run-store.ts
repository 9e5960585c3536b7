import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { redisKeys } from "../redis/redis-keys.ts";
import { redisScripts } from "../redis/redis-scripts.ts";
import { applyRunEvent, type RunEvent } from "../runs/run-events.ts";
import { isPrRun, runRecordSchema, type PrRun, type RunRecord } from "../runs/run-record.ts";
import { approvalSchema, type Approval } from "../trust/approval.ts";

/** How long a finished run stays readable (its check run links to its page). */
export const RUN_TTL_SECONDS = 90 * 24 * 3600;
/** How long one admission may hold its installation's lock, and how long others wait for it. */
const ADMISSION_LOCK_MS = 15_000;
const ADMISSION_WAIT_MS = 30_000;
/** Delivery ids are remembered for longer than GitHub redelivers. */
const DELIVERY_TTL_SECONDS = 7 * 24 * 3600;

export interface RunStore {
  /**
   * Stores a new run unless an active run has the same dedupe key; returns the run that stands
   * (`created` false: the existing one).
   */
  create(run: RunRecord): Promise<{ run: RunRecord; created: boolean }>;
  get(id: string): Promise<RunRecord | undefined>;
  /**
   * Applies an event: the run before and after it, from the one read the compare-and-set needs
   * (whoever observes the change reads nothing more); undefined when it does not apply (see
   * applyRunEvent).
   */
  transition(id: string, event: RunEvent): Promise<RunTransition | undefined>;
  /** Applies an event; the run after it (see `transition`). */
  apply(id: string, event: RunEvent): Promise<RunRecord | undefined>;
  /** Stores a field the state machine does not own (a PR run's check run id). */
  setCheckRunId(id: string, checkRunId: number): Promise<RunRecord | undefined>;
  /** Every run of a PR, newest first. */
  listForPullRequest(owner: string, repo: string, pr: number): Promise<PrRun[]>;
  /** Every PR run of a commit, newest first. */
  listForCommit(owner: string, repo: string, sha: string): Promise<PrRun[]>;
  /** Every run not completed yet (start-up reconciliation re-queues them): a scan of every key. */
  listActive(): Promise<RunRecord[]>;
  /**
   * The active PR runs of one installation (admission counts them against its quotas), from the
   * set the save script keeps: two round trips, whatever runs other installations have.
   */
  listActiveOfInstallation(installationId: number): Promise<PrRun[]>;
  /**
   * Publishing is state of its own: a run whose subject could not be told its latest state is
   * marked until a publish succeeds, so that a retry (and every start-up) tells it.
   */
  markUnpublished(id: string): Promise<void>;
  /**
   * Unmarks a run its subject was just told about, in one round trip, unless it changed since:
   * then the newer record comes back, to be told too (the marker stays until it is).
   */
  markPublished(run: Pick<RunRecord, "id" | "revision">): Promise<RunRecord | undefined>;
  listUnpublished(): Promise<string[]>;
  /**
   * True the first time it is asked for a PR and kind: replies that anyone can provoke (an
   * untrusted user's /test) cost the installation one comment per PR, not one per comment.
   */
  claimPullRequestReply(input: {
    owner: string;
    repo: string;
    pr: number;
    kind: "untrusted";
  }): Promise<boolean>;
  /**
   * Runs `admit` while no other process admits runs of the same installation, so that quotas are
   * counted and runs accepted as one step (concurrent deliveries cannot all pass a quota).
   */
  withAdmission<T>(installationId: number, admit: () => Promise<T>): Promise<T>;
  /** Records that a trusted user approved a PR's author to run tests (on the head they saw). */
  recordApproval(input: { owner: string; repo: string; pr: number; approval: Approval }): Promise<void>;
  approvalOf(input: { owner: string; repo: string; pr: number }): Promise<Approval | undefined>;
  /** Whether the intake already acted on a webhook delivery (GitHub may deliver it again). */
  isDeliveryHandled(deliveryId: string): Promise<boolean>;
  markDeliveryHandled(deliveryId: string): Promise<void>;
}

/** A change the store accepted: the run as it was read and as it was saved. */
export interface RunTransition {
  before: RunRecord;
  after: RunRecord;
}

export function createRunStore(options: { redis: Redis; prefix: string; now?: () => Date }): RunStore {
  const { redis, prefix, now = () => new Date() } = options;
  const keys = redisKeys(prefix);
  const scripts = redisScripts(redis);

  // A run without its check run yet still blocks: publishing is durable and creates it (retrying
  // through a GitHub outage), so a second run would only be a twin.
  const blocks = (existing: RunRecord) => existing.state !== "completed";

  // A record this version cannot read (written before the run model changed) is as good as gone:
  // it expires with its TTL and stops nothing that lists runs.
  const parse = (text: string | null): RunRecord | undefined => {
    if (text === null) return undefined;
    const parsed = runRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  };
  const read = async (id: string): Promise<RunRecord | undefined> => parse(await redis.get(keys.run(id)));

  /** Every active run, found by the dedupe key it holds until it concludes (start-up's full scan). */
  const scanActive = async (): Promise<RunRecord[]> => {
    const ids = new Set<string>();
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", keys.activeRun("*"), "COUNT", 500);
      cursor = next;
      if (found.length > 0) for (const id of await redis.mget(...found)) if (id) ids.add(id);
    } while (cursor !== "0");
    const runs = await Promise.all([...ids].map(read));
    return runs.filter((r): r is RunRecord => r !== undefined && r.state !== "completed");
  };

  /**
   * Puts every active PR run in its installation's set, once per deployment: runs saved by a
   * version that kept no sets are counted from then on. A run an older replica saves later joins
   * at its next change by this version; one that concluded meanwhile leaves at its next read.
   */
  const buildActiveRunSets = async (): Promise<void> => {
    const adding = redis.multi();
    for (const run of await scanActive()) {
      if (isPrRun(run)) adding.sadd(keys.installationActiveRuns(run.subject.installationId), run.id);
    }
    adding.set(keys.activeRunSetsBuilt, "1");
    await adding.exec();
  };

  const save = async (next: RunRecord, previousRevision: number): Promise<boolean> => {
    const concluded = next.state === "completed" ? "1" : "0";
    const scope = isPrRun(next) ? [keys.installationActiveRuns(next.subject.installationId)] : [];
    const result = await scripts.saveRun(
      2 + scope.length,
      keys.run(next.id),
      keys.activeRun(next.dedupeKey),
      ...scope,
      String(previousRevision),
      JSON.stringify(next),
      String(RUN_TTL_SECONDS),
      concluded,
      next.id,
    );
    return result === 1;
  };

  /** The PR runs an index (a sorted set of run ids) names, newest first. */
  const listIndexed = async (key: string): Promise<PrRun[]> => {
    const runs = await Promise.all((await redis.zrevrange(key, 0, -1)).map(read));
    return runs.filter((r): r is PrRun => r !== undefined && isPrRun(r));
  };

  const update = async (
    id: string,
    change: (run: RunRecord) => RunRecord | undefined,
  ): Promise<RunTransition | undefined> => {
    for (;;) {
      const before = await read(id);
      if (!before) return undefined;
      const after = change(before);
      if (!after) return undefined;
      if (await save(after, before.revision)) return { before, after };
    }
  };
  const transition = (id: string, event: RunEvent) => update(id, (run) => applyRunEvent(run, event, now()));

  const listActiveOfInstallation = async (installationId: number): Promise<PrRun[]> => {
    const set = keys.installationActiveRuns(installationId);
    const replies = await redis.multi().exists(keys.activeRunSetsBuilt).smembers(set).exec();
    const [[existsError, built], [membersError, members]] = replies as [
      [Error | null, number],
      [Error | null, string[]],
    ];
    if (existsError ?? membersError) throw existsError ?? membersError;
    if (built !== 1) {
      await buildActiveRunSets();
      return listActiveOfInstallation(installationId);
    }
    const runs = members.length > 0 ? (await redis.mget(...members.map(keys.run))).map(parse) : [];
    const isActive = (r: RunRecord | undefined): r is PrRun =>
      r !== undefined && r.state !== "completed" && isPrRun(r);
    // A member whose run is gone or ended (a twin's undone record, a set built while it concluded) leaves.
    const ended = members.filter((_, i) => !isActive(runs[i]));
    if (ended.length > 0) await redis.srem(set, ...ended);
    return runs.filter(isActive);
  };

  return {
    async create(run) {
      // The record is written before the key is claimed, so a claimed key always names a readable run.
      if (!(await save(run, -1))) return { run: (await read(run.id)) ?? run, created: false };
      const claimed = await redis.set(keys.activeRun(run.dedupeKey), run.id, "EX", RUN_TTL_SECONDS, "NX");
      if (claimed !== "OK") {
        const existingId = await redis.get(keys.activeRun(run.dedupeKey));
        const existing = existingId ? await read(existingId) : undefined;
        if (existing && blocks(existing)) {
          const undo = redis.multi().del(keys.run(run.id));
          if (isPrRun(run)) undo.srem(keys.installationActiveRuns(run.subject.installationId), run.id);
          await undo.exec();
          return { run: existing, created: false };
        }
        // The key outlived its run (concluded, expired, or never shown); this run takes it over.
        await redis.set(keys.activeRun(run.dedupeKey), run.id, "EX", RUN_TTL_SECONDS);
      }
      if (isPrRun(run)) {
        const { owner, repo, pr, headSha } = run.subject;
        const at = Date.parse(run.createdAt);
        await redis
          .multi()
          .zadd(keys.pullRequestRuns(owner, repo, pr), at, run.id)
          .expire(keys.pullRequestRuns(owner, repo, pr), RUN_TTL_SECONDS)
          .zadd(keys.commitRuns(owner, repo, headSha), at, run.id)
          .expire(keys.commitRuns(owner, repo, headSha), RUN_TTL_SECONDS)
          .exec();
      }
      return { run, created: true };
    },
    get: read,
    transition,
    apply: async (id, event) => (await transition(id, event))?.after,
    setCheckRunId: async (id, checkRunId) => {
      const changed = await update(id, (run) =>
        isPrRun(run)
          ? {
              ...run,
              subject: { ...run.subject, checkRunId },
              revision: run.revision + 1,
              updatedAt: now().toISOString(),
            }
          : undefined,
      );
      return changed?.after;
    },
    listForPullRequest: (owner, repo, pr) => listIndexed(keys.pullRequestRuns(owner, repo, pr)),
    listForCommit: (owner, repo, sha) => listIndexed(keys.commitRuns(owner, repo, sha)),
    listActive: scanActive,
    listActiveOfInstallation,
    async markUnpublished(id) {
      await redis.zadd(keys.unpublishedRuns, "NX", now().getTime(), id);
    },
    async markPublished({ id, revision }) {
      const newer = await scripts.markPublished(keys.run(id), keys.unpublishedRuns, String(revision), id);
      if (typeof newer !== "string") return undefined;
      const parsed = runRecordSchema.safeParse(JSON.parse(newer));
      return parsed.success ? parsed.data : undefined;
    },
    listUnpublished: () => redis.zrange(keys.unpublishedRuns, 0, -1),
    async claimPullRequestReply({ owner, repo, pr, kind }) {
      const key = keys.pullRequestReplied(owner, repo, pr, kind);
      return (await redis.set(key, "1", "EX", RUN_TTL_SECONDS, "NX")) === "OK";
    },
    async withAdmission(installationId, admit) {
      const key = keys.admissionLock(installationId);
      const token = `${process.pid}:${randomUUID()}`;
      const deadline = Date.now() + ADMISSION_WAIT_MS;
      // The lock expires on its own, so a process that dies holding it delays others a few seconds.
      while ((await redis.set(key, token, "PX", ADMISSION_LOCK_MS, "NX")) !== "OK") {
        if (Date.now() > deadline)
          throw new Error(`runs of installation ${installationId} are being admitted elsewhere; try again`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      try {
        return await admit();
      } finally {
        await scripts.releaseLock(key, token);
      }
    },
    async recordApproval({ owner, repo, pr, approval }) {
      await redis.set(keys.approval(owner, repo, pr), JSON.stringify(approval), "EX", RUN_TTL_SECONDS);
    },
    async approvalOf({ owner, repo, pr }) {
      const text = await redis.get(keys.approval(owner, repo, pr));
      const parsed = text === null ? undefined : approvalSchema.safeParse(JSON.parse(text));
      return parsed?.success ? parsed.data : undefined;
    },
    async isDeliveryHandled(deliveryId) {
      return (await redis.exists(keys.delivery(deliveryId))) === 1;
    },
    async markDeliveryHandled(deliveryId) {
      await redis.set(keys.delivery(deliveryId), "1", "EX", DELIVERY_TTL_SECONDS);
    },
  };
}
