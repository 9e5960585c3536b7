import type { V1Job, V1Pod } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterSchema } from "../../src/farm/farm-config.ts";
import { createKubeClient, KubeApiError, type KubeClient } from "@netstress/core/kube/kube-client.ts";
import { watchCollection, type CollectionChange } from "@netstress/core/kube/watched-collection.ts";
import { startFakeKubeApi, type FakeKubeApi } from "@netstress/testbed/sim/start-fake-kube-api.ts";

const logger = pino({ level: "silent" });
let api: FakeKubeApi;
let client: KubeClient;
/** A client for the fake API whose requests give up after `timeoutMs`. */
const clientWithin = (timeoutMs: number) =>
  createKubeClient({
    cluster: clusterSchema.parse({
      name: "fake",
      kubeconfig: api.kubeconfigPath,
      namespace: "farm",
      arches: ["amd64"],
      capacity: 1,
    }),
    timeoutMs,
  });

const job = (name: string, message: string, labels: Record<string, string> = { app: "t" }): V1Job => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, labels },
  spec: {
    backoffLimit: 0,
    template: {
      metadata: { labels },
      spec: {
        restartPolicy: "Never",
        nodeSelector: { "kubernetes.io/arch": "amd64" },
        containers: [{ name: "main", image: "tools", command: ["echo"], args: [message] }],
      },
    },
  },
});

beforeAll(async () => {
  api = await startFakeKubeApi({ images: { tools: { commands: { echo: ["/bin/echo"] } } }, bookmarkMs: 100 });
  // Ordinary calls get a timeout a loaded machine does not reach (500 ms aborted creates and
  // deletes); the hang test has a short one of its own.
  client = clientWithin(10_000);
});
afterAll(() => api.stop());

const podOf = async (jobName: string) => {
  await expect
    .poll(async () => (await client.listPods(`job-name=${jobName}`)).items[0]?.status?.phase, {
      timeout: 5000,
    })
    .toBe("Succeeded");
  return (await client.listPods(`job-name=${jobName}`)).items[0]!;
};

describe("the fake Kubernetes API through the real client", () => {
  it("creates a Job once (409 means it is there), runs its pod, serves the log and deletes pods with it", async () => {
    expect(await client.createJob(job("hello", "hello from a pod"))).toEqual({ uid: expect.any(String) });
    expect(await client.createJob(job("hello", "a twin"))).toBe("exists");
    const pod = await podOf("hello");
    expect(pod.spec?.nodeName).toBe("node-amd64");
    expect(await client.readPodLog(pod.metadata!.name!, "main")).toBe("hello from a pod\n");
    expect(api.jobCreations().get("hello")).toBe(1);
    expect(await client.deleteJob("hello")).toBe("deleted");
    expect(await client.deleteJob("hello")).toBe("gone");
    await expect.poll(async () => (await client.listPods("job-name=hello")).items).toHaveLength(0);
  });

  it("leaves a pod that no node of its arch can take Pending and Unschedulable", async () => {
    const arm = job("arm-only", "x");
    arm.spec!.template.spec!.nodeSelector = { "kubernetes.io/arch": "s390x" };
    await client.createJob(arm);
    await expect
      .poll(
        async () => (await client.listPods("job-name=arm-only")).items[0]?.status?.conditions?.[0]?.reason,
      )
      .toBe("Unschedulable");
    await client.deleteJob("arm-only");
  });

  it("answers injected 500s and hangs as errors the executor can tell are transient", async () => {
    api.setFaults({ errorRate: 1 });
    const failed = await client.listJobs("app=t").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(KubeApiError);
    expect((failed as KubeApiError).status).toBe(500);
    expect((failed as KubeApiError).transient).toBe(true);
    expect((failed as KubeApiError).message).toContain("injected fault");
    api.setFaults({ errorRate: 0, timeoutRate: 1 });
    const started = Date.now();
    const hung = await clientWithin(500)
      .listJobs("app=t")
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect((hung as KubeApiError).status).toBeUndefined();
    expect((hung as KubeApiError).transient).toBe(true);
    api.setFaults({ timeoutRate: 0 });
  });
});

describe("a watched collection", () => {
  it("follows changes, survives dropped watches from its resourceVersion, and relists on 410 Gone", async () => {
    const changes: CollectionChange<V1Job>[] = [];
    let bookmarks = 0;
    const jobs = watchCollection<V1Job>({
      client: {
        ...client,
        watch: (resource, params, handlers) =>
          client.watch(resource, params, {
            ...handlers,
            onEvent(type, object) {
              if (type === "BOOKMARK") bookmarks += 1;
              handlers.onEvent(type, object);
            },
          }),
      },
      resource: "jobs",
      labelSelector: "app=watched",
      logger,
      idleMs: 2000,
      keep: (job) => job,
      onChange: (change) => changes.push(change),
    });
    try {
      await jobs.ready;
      await client.createJob(job("w1", "one", { app: "watched" }));
      await expect
        .poll(() => jobs.get("w1")?.status?.conditions?.[0]?.type, { timeout: 5000 })
        .toBe("Complete");

      // Bookmarks keep a quiet watch alive and its resourceVersion current.
      const quietFrom = bookmarks;
      await expect.poll(() => bookmarks, { timeout: 5000 }).toBeGreaterThanOrEqual(quietFrom + 3);
      expect(jobs.counters.watches).toBe(1);

      // A dropped watch resumes where it was: nothing relisted, nothing missed.
      api.dropWatches();
      await client.createJob(job("w2", "two", { app: "watched" }));
      await expect
        .poll(() => jobs.get("w2")?.status?.conditions?.[0]?.type, { timeout: 5000 })
        .toBe("Complete");
      expect(jobs.counters.lists).toBe(1);
      expect(jobs.counters.watches).toBeGreaterThan(1);

      // History compacted while disconnected: the resume gets 410, the relist finds the deletion.
      const deletionsBefore = changes.filter((c) => c.type === "delete").length;
      api.setFaults({ timeoutRate: 0 });
      api.dropWatches();
      await client.deleteJob("w1");
      api.compact();
      await expect.poll(() => jobs.counters.expired, { timeout: 5000 }).toBeGreaterThan(0);
      await expect.poll(() => jobs.get("w1"), { timeout: 5000 }).toBeUndefined();
      expect(jobs.counters.lists).toBe(2);
      expect(changes.filter((c) => c.type === "delete").map((c) => c.object.metadata?.name)).toContain("w1");
      expect(changes.filter((c) => c.type === "delete").length).toBe(deletionsBefore + 1);
      await client.deleteJob("w2");
    } finally {
      jobs.stop();
    }
  });

  it("reopens a watch that went silent (no events, no bookmarks)", async () => {
    const quiet = await startFakeKubeApi({ bookmarkMs: 60_000 });
    const quietClient = createKubeClient({
      cluster: clusterSchema.parse({
        name: "quiet",
        kubeconfig: quiet.kubeconfigPath,
        namespace: "farm",
        arches: ["amd64"],
        capacity: 1,
      }),
      timeoutMs: 500,
    });
    const pods = watchCollection<V1Pod>({
      client: quietClient,
      resource: "pods",
      labelSelector: "",
      logger,
      idleMs: 150,
      keep: (pod) => pod,
      onChange: () => {},
    });
    try {
      await pods.ready;
      await expect.poll(() => pods.counters.watches, { timeout: 3000 }).toBeGreaterThan(2);
      expect(pods.counters.lists).toBe(1);
    } finally {
      pods.stop();
      await quiet.stop();
    }
  });
});
