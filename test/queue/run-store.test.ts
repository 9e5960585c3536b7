import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";

let env: Awaited<ReturnType<typeof testRunDeps>>;
beforeEach(async () => {
  env = await testRunDeps();
});
afterEach(async () => env.close());

describe("the run store", () => {
  it("returns the active run for the same dedupe key, and a new one once it concluded", async () => {
    const { store } = env.deps;
    const first = runRecord({ dedupeKey: "same" });
    expect(await store.create(first)).toMatchObject({ created: true, run: { id: first.id } });
    const twin = await store.create(runRecord({ dedupeKey: "same" }));
    expect(twin).toMatchObject({ created: false, run: { id: first.id } });
    expect(await store.get(twin.run.id)).toBeDefined();

    await store.apply(first.id, { type: "concluded", conclusion: "failure", reason: "x" });
    const next = runRecord({ dedupeKey: "same" });
    expect(await store.create(next)).toMatchObject({ created: true, run: { id: next.id } });
    expect(
      (await store.listForPullRequest("openshift", "ovn-kubernetes", 7)).map((r) => r.id).sort(),
    ).toEqual([first.id, next.id].sort());
  });

  it("holds identical requests back while a run's check run is still being published", async () => {
    const { store } = env.deps;
    const unpublished = runRecord({
      dedupeKey: "k",
      createdAt: new Date(Date.now() - 60 * 60_000).toISOString(),
    });
    await store.create(unpublished);
    expect(await store.create(runRecord({ dedupeKey: "k" }))).toMatchObject({
      created: false,
      run: { id: unpublished.id },
    });
  });

  it("lets one of many concurrent creators of the same request win", async () => {
    const runs = Array.from({ length: 10 }, () => runRecord({ dedupeKey: "race" }));
    const results = await Promise.all(runs.map((run) => env.deps.store.create(run)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.run.id)).size).toBe(1);
    expect(await env.deps.store.listForPullRequest("openshift", "ovn-kubernetes", 7)).toHaveLength(1);
  });

  it("loses no update when many processes change one run at once", async () => {
    const { store } = env.deps;
    const run = runRecord();
    await store.create(run);
    await store.apply(run.id, { type: "started" });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.apply(run.id, {
          type: "results-finished",
          results: { id: `s${i}`, resultsPath: "/r", first: i, count: 1 },
        }),
      ),
    );
    const stored = await store.get(run.id);
    expect(stored!.results).toHaveLength(20);
    expect(stored!.revision).toBe(21);
  });

  it("treats a record it cannot read (an older run model) as gone, so listing active runs goes on", async () => {
    const { store } = env.deps;
    const run = runRecord();
    await store.create(run);
    const { subject, ...flat } = run;
    const old = runRecord();
    await env.redis.set(
      `${env.prefix}:store:run:${old.id}`,
      JSON.stringify({ ...flat, ...subject, id: old.id, shards: [] }),
    );
    await env.redis.set(`${env.prefix}:store:active:${old.dedupeKey}`, old.id);
    expect(await store.get(old.id)).toBeUndefined();
    expect((await store.listActive()).map((r) => r.id)).toEqual([run.id]);
  });

  it("remembers which deliveries were handled", async () => {
    const { store } = env.deps;
    expect(await store.isDeliveryHandled("d-1")).toBe(false);
    await store.markDeliveryHandled("d-1");
    expect(await store.isDeliveryHandled("d-1")).toBe(true);
    expect(await store.isDeliveryHandled("d-2")).toBe(false);
  });
});
