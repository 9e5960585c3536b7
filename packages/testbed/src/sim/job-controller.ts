import type { KubeObject, ObjectStore, StoreEvent } from "./object-store.ts";

interface JobSpec {
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  ttlSecondsAfterFinished?: number;
  template: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: object;
  };
}

interface JobStatus {
  active?: number;
  succeeded?: number;
  failed?: number;
  startTime?: string;
  completionTime?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

const TERMINAL = new Set(["Succeeded", "Failed"]);

/**
 * The Job controller, as far as one-pod Jobs need it: a pod per Job, a new one after a failure
 * until backoffLimit, Complete / Failed conditions (BackoffLimitExceeded, DeadlineExceeded), the
 * TTL after finishing, and the garbage collector's cascade on delete. Durations are multiplied by
 * `timeScale`, so tests can see a deadline pass in milliseconds.
 */
export class JobController {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly timeScale: number,
  ) {
    // Reacting after the current change is delivered keeps every watch stream in order.
    this.unsubscribe = store.subscribe((event) => setImmediate(() => this.react(event)));
  }

  stop(): void {
    this.unsubscribe();
    for (const timer of this.timers) clearTimeout(timer);
  }

  /** The garbage collector: dependents of a deleted Job go with it unless orphaned. */
  cascade(resource: string, object: KubeObject, policy: string | undefined): void {
    if (resource !== "jobs") return;
    for (const pod of this.podsOf(object)) {
      if (policy === "Background" || policy === "Foreground") {
        try {
          this.store.delete("pods", pod.metadata.namespace, pod.metadata.name);
        } catch {
          // already gone
        }
      } else {
        this.store.update("pods", pod.metadata.namespace, pod.metadata.name, (p) => {
          p.metadata.ownerReferences = [];
        });
      }
    }
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms * this.timeScale);
    this.timers.add(timer);
  }

  private react(event: StoreEvent): void {
    if (event.resource === "jobs" && event.type === "ADDED") return this.started(event.object);
    if (event.resource !== "pods") return;
    const owner = event.object.metadata.ownerReferences?.find((o) => o.kind === "Job");
    if (!owner) return;
    const job = this.store.get("jobs", event.object.metadata.namespace, owner.name);
    if (!job || job.metadata.uid !== owner.uid || finished(job)) return;
    const phase = (event.object.status as { phase?: string } | undefined)?.phase ?? "Pending";
    if (event.type === "DELETED" && !TERMINAL.has(phase)) return this.podFailed(job);
    if (event.type !== "MODIFIED" || !TERMINAL.has(phase)) return;
    if (phase === "Succeeded") {
      this.finish(job, { type: "Complete", status: "True" }, { succeeded: 1 });
    } else {
      this.podFailed(job);
    }
  }

  private started(job: KubeObject): void {
    const spec = job.spec as unknown as JobSpec;
    this.store.update("jobs", job.metadata.namespace, job.metadata.name, (j) => {
      j.status = { ...j.status, startTime: new Date().toISOString(), active: 0 };
    });
    this.createPod(job);
    if (spec.activeDeadlineSeconds) {
      this.later(spec.activeDeadlineSeconds * 1000, () => {
        const current = this.store.get("jobs", job.metadata.namespace, job.metadata.name);
        if (!current || current.metadata.uid !== job.metadata.uid || finished(current)) return;
        this.finish(current, {
          type: "Failed",
          status: "True",
          reason: "DeadlineExceeded",
          message: "Job was active longer than specified deadline",
        });
        for (const pod of this.podsOf(current)) {
          try {
            this.store.delete("pods", pod.metadata.namespace, pod.metadata.name);
          } catch {
            // already gone
          }
        }
      });
    }
  }

  private podFailed(job: KubeObject): void {
    const spec = job.spec as unknown as JobSpec;
    const status = (job.status ?? {}) as JobStatus;
    const failed = (status.failed ?? 0) + 1;
    if (failed > (spec.backoffLimit ?? 6)) {
      this.finish(
        job,
        {
          type: "Failed",
          status: "True",
          reason: "BackoffLimitExceeded",
          message: "Job has reached the specified backoff limit",
        },
        { failed },
      );
      return;
    }
    this.store.update("jobs", job.metadata.namespace, job.metadata.name, (j) => {
      j.status = { ...j.status, failed };
    });
    this.createPod(job);
  }

  private finish(
    job: KubeObject,
    condition: NonNullable<JobStatus["conditions"]>[number],
    counts: JobStatus = {},
  ): void {
    const updated = this.store.update("jobs", job.metadata.namespace, job.metadata.name, (j) => {
      const status = (j.status ?? {}) as JobStatus;
      j.status = {
        ...status,
        ...counts,
        active: 0,
        ...(condition.type === "Complete" ? { completionTime: new Date().toISOString() } : {}),
        conditions: [
          ...(status.conditions ?? []),
          { ...condition, lastTransitionTime: new Date().toISOString() },
        ],
      };
    });
    const ttl = (job.spec as unknown as JobSpec).ttlSecondsAfterFinished;
    if (updated && ttl !== undefined) {
      this.later(ttl * 1000, () => {
        const current = this.store.get("jobs", job.metadata.namespace, job.metadata.name);
        if (!current || current.metadata.uid !== job.metadata.uid) return;
        const gone = this.store.delete("jobs", job.metadata.namespace, job.metadata.name);
        this.cascade("jobs", gone, "Background");
      });
    }
  }

  private createPod(job: KubeObject): void {
    const spec = job.spec as unknown as JobSpec;
    const suffix = Math.random().toString(36).slice(2, 7).padEnd(5, "x");
    this.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `${job.metadata.name}-${suffix}`,
        namespace: job.metadata.namespace,
        labels: {
          ...spec.template.metadata?.labels,
          "batch.kubernetes.io/job-name": job.metadata.name,
          "job-name": job.metadata.name,
          "batch.kubernetes.io/controller-uid": job.metadata.uid!,
        },
        annotations: { ...spec.template.metadata?.annotations },
        ownerReferences: [
          {
            apiVersion: "batch/v1",
            kind: "Job",
            name: job.metadata.name,
            uid: job.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: structuredClone(spec.template.spec) as Record<string, unknown>,
      status: { phase: "Pending" },
    });
    this.store.update("jobs", job.metadata.namespace, job.metadata.name, (j) => {
      j.status = { ...j.status, active: 1 };
    });
  }

  private podsOf(job: KubeObject): KubeObject[] {
    return this.store
      .list("pods", job.metadata.namespace, () => true)
      .items.filter((p) => p.metadata.ownerReferences?.some((o) => o.uid === job.metadata.uid));
  }
}

function finished(job: KubeObject): boolean {
  const conditions = ((job.status ?? {}) as JobStatus).conditions ?? [];
  return conditions.some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
}
