import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acceptRun } from "../../src/queue/accept-run.ts";
import { runRecord, testRunDeps } from "../helpers/github-run-deps.ts";

let env: Awaited<ReturnType<typeof testRunDeps>>;
beforeEach(async () => {
  env = await testRunDeps();
});
afterEach(async () => env.close());

const checkRunsCreated = () =>
  env.github.writes.filter((w) => w.method === "POST" && w.path.endsWith("/check-runs"));

describe("accepting a run", () => {
  it("says it created the run only the first time: accepted again, the run is found, not created, nor shown twice", async () => {
    const record = runRecord();
    expect(await acceptRun(env.deps, record)).toMatchObject({
      run: { id: record.id },
      created: true,
      twin: false,
    });

    // A retried intake (or a redelivery) builds the same record and accepts it again.
    const again = await acceptRun(env.deps, record);

    expect(again).toMatchObject({ run: { id: record.id }, created: false, twin: false });
    expect(checkRunsCreated()).toHaveLength(1);
  });

  it("names the active twin of another request instead of creating a run", async () => {
    const first = runRecord({ dedupeKey: "same request" });
    await acceptRun(env.deps, first);

    const twin = await acceptRun(env.deps, runRecord({ dedupeKey: "same request" }));

    expect(twin).toMatchObject({ run: { id: first.id }, created: false, twin: true });
    expect(checkRunsCreated()).toHaveLength(1);
  });
});
