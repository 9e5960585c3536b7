import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Every metric of the bot, and the functions other modules call to record. */
export interface Metrics {
  readonly registry: Registry;
  /** A webhook delivery answered (any status) at the webhook path. */
  webhookReceived(input: { event: string; status: number }): void;
  /** GitHub was asked to deliver again an event the bot had missed. */
  deliveryRecovered(input: { event: string }): void;
  /** GitHub refused an installation's write for a missing permission (once per pause). */
  githubMissingPermission(input: { installation: number; permission: string }): void;
  /** A run reached a state; completed runs carry their conclusion. */
  runTransition(input: { state: string; conclusion?: string }): void;
  shardFinished(input: { arch: string; executor: string; status: string; seconds: number }): void;
  /** `status` undefined: the call got no answer. */
  kubernetesApiError(input: { cluster: string; status: number | undefined }): void;
  githubRateLimit(input: { installation: number; resource: string; remaining: number }): void;
  /** Gauges read at scrape time (queue depth, runs by state): the callback sets them. */
  onCollect(collect: (gauges: CollectedGauges) => Promise<void>): void;
}

export interface CollectedGauges {
  queueJobs(queue: string, state: string, count: number): void;
  queueOldestWaitingSeconds(queue: string, seconds: number): void;
  activeRuns(state: string, count: number): void;
}

/**
 * The bot's Prometheus registry (prefix netstress_) plus Node's default process metrics. Counters
 * are per process (Prometheus sums the pods); gauges of shared state (queues, active runs) are read
 * from Redis when scraped, so every replica reports the same truth.
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: "netstress_" });
  const registers = [registry];
  const webhooks = new Counter({
    name: "netstress_webhooks_received_total",
    help: "Webhook deliveries answered, by event and HTTP status",
    labelNames: ["event", "status"],
    registers,
  });
  const rejected = new Counter({
    name: "netstress_webhooks_rejected_total",
    help: "Webhook deliveries refused (bad signature or payload: HTTP 4xx), by event and status",
    labelNames: ["event", "status"],
    registers,
  });
  const recovered = new Counter({
    name: "netstress_webhook_deliveries_recovered_total",
    help: "Missed webhook deliveries GitHub was asked to deliver again, by event",
    labelNames: ["event"],
    registers,
  });
  const missingPermissions = new Counter({
    name: "netstress_github_missing_permission_total",
    help: "Installations whose writes were paused because GitHub refused one for a missing permission",
    labelNames: ["installation", "permission"],
    registers,
  });
  const transitions = new Counter({
    name: "netstress_run_transitions_total",
    help: "Stress runs entering a state; completed ones by conclusion",
    labelNames: ["state", "conclusion"],
    registers,
  });
  const shards = new Histogram({
    name: "netstress_shard_duration_seconds",
    help: "How long shards took on their executor, by arch, executor and outcome",
    labelNames: ["arch", "executor", "status"],
    buckets: [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400],
    registers,
  });
  const kubeErrors = new Counter({
    name: "netstress_kubernetes_api_errors_total",
    help: "Failed Kubernetes API calls per build-farm cluster, by HTTP status (none: no answer)",
    labelNames: ["cluster", "status"],
    registers,
  });
  const rateLimit = new Gauge({
    name: "netstress_github_rate_limit_remaining",
    help: "GitHub API requests left in the current window, per installation and resource, as last seen",
    labelNames: ["installation", "resource"],
    registers,
  });
  const collectors: ((gauges: CollectedGauges) => Promise<void>)[] = [];
  // Three gauges, one collection: a scrape reads them concurrently, so they share the one in flight.
  let collecting: Promise<void> | undefined;
  const collect = () => {
    collecting ??= (async () => {
      queueJobs.reset();
      queueAge.reset();
      activeRuns.reset();
      const gauges: CollectedGauges = {
        queueJobs: (queue, state, count) => queueJobs.set({ queue, state }, count),
        queueOldestWaitingSeconds: (queue, seconds) => queueAge.set({ queue }, seconds),
        activeRuns: (state, count) => activeRuns.set({ state }, count),
      };
      await Promise.all(collectors.map((collector) => collector(gauges)));
    })().finally(() => {
      collecting = undefined;
    });
    return collecting;
  };
  const queueJobs = new Gauge({
    name: "netstress_queue_jobs",
    help: "Jobs in each queue by state (waiting, delayed, active)",
    labelNames: ["queue", "state"],
    registers,
    collect,
  });
  const queueAge = new Gauge({
    name: "netstress_queue_oldest_waiting_seconds",
    help: "Age of the oldest job waiting in each queue (0 when none waits)",
    labelNames: ["queue"],
    registers,
    collect,
  });
  const activeRuns = new Gauge({
    name: "netstress_runs_active",
    help: "Stress runs not yet completed, by state",
    labelNames: ["state"],
    registers,
    collect,
  });

  return {
    registry,
    webhookReceived({ event, status }) {
      const labels = { event, status: String(status) };
      webhooks.inc(labels);
      if (status >= 400 && status < 500) rejected.inc(labels);
    },
    deliveryRecovered({ event }) {
      recovered.inc({ event });
    },
    githubMissingPermission({ installation, permission }) {
      missingPermissions.inc({ installation: String(installation), permission });
    },
    runTransition({ state, conclusion }) {
      transitions.inc({ state, conclusion: conclusion ?? "" });
    },
    shardFinished({ arch, executor, status, seconds }) {
      shards.observe({ arch, executor, status }, seconds);
    },
    kubernetesApiError({ cluster, status }) {
      kubeErrors.inc({ cluster, status: status === undefined ? "none" : String(status) });
    },
    githubRateLimit({ installation, resource, remaining }) {
      rateLimit.set({ installation: String(installation), resource }, remaining);
    },
    onCollect(collect) {
      collectors.push(collect);
    },
  };
}
