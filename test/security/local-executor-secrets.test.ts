// Item: with no farm (the default and the "try it" set-up) the PR's binaries inherited the bot's
// whole environment (WEBHOOK_SECRET, PRIVATE_KEY, the Redis URL) and user. They now get an
// allow-listed environment, a private working directory, and — when the bot runs as root — an
// unprivileged user.
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { createLocalExecutor } from "../../src/farm/local-executor.ts";
import { UNPRIVILEGED } from "../../src/farm/local-sandbox.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { localImages } from "../helpers/local-images.ts";

const TEST = "[sig-network] reports what it can see";
// An OTE binary whose one test reports its environment, user and working directory as its output.
const SPY = `#!/usr/bin/env node
const verb = process.argv[2];
if (verb === "list") {
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, labels: {}, lifecycle: "blocking" }));
} else if (verb === "info") {
  console.log(JSON.stringify({ apiVersion: "v1.1", source: {}, component: { product: "p", type: "t", name: "spy" }, suites: [] }));
} else if (verb === "run-test") {
  const seen = { env: process.env, uid: process.getuid(), cwd: process.cwd() };
  const now = new Date().toISOString().replace("T", " ").replace("Z", "000 UTC");
  console.log(JSON.stringify({ name: ${JSON.stringify(TEST)}, lifecycle: "blocking", duration: 1, startTime: now, endTime: now, result: "passed", output: JSON.stringify(seen) }));
}
`;

let dir: Awaited<ReturnType<typeof tempDir>>;
const secrets = {
  WEBHOOK_SECRET: "webhook-secret-value",
  PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----",
  NETSTRESS_REDIS_URL: "redis://:hunter2@10.0.0.1:6379",
  GITHUB_TOKEN: "ghs_secret",
};
beforeAll(async () => {
  dir = await tempDir();
  Object.assign(process.env, secrets);
});
afterAll(async () => {
  for (const name of Object.keys(secrets)) delete process.env[name];
  await dir.remove();
});

describe("the local executor", () => {
  it("runs a PR's binary without the bot's secrets, in a private directory, as an unprivileged user when root", async () => {
    const binary = join(dir.path, "spy-tests-ext");
    await writeFile(binary, SPY);
    await chmod(binary, 0o755);
    const executor = createLocalExecutor({
      arches: [hostArch()],
      cacheDir: join(dir.path, "cache"),
      images: await localImages(join(dir.path, "images")),
    });
    const outcome = await executor.execute({
      shard: {
        runId: "r".repeat(32),
        id: `${hostArch()}-0-0`,
        arch: hostArch(),
        arms: ["pr"],
        iterations: { first: 0, count: 1 },
        plan: { arch: hostArch(), arms: [{ arm: "pr", components: [{ component: "spy", binary }] }] },
        seed: "seed",
        parallel: 1,
        testTimeoutMs: 30_000,
        retries: 0,
      },
      outDir: join(dir.path, "out"),
      signal: new AbortController().signal,
    });
    expect(outcome.status).toBe("completed");
    if (outcome.status !== "completed") return;
    const [record] = (await readFile(outcome.resultsPath, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ResultRecord);
    expect(record!.result).toBe("passed");
    const seen = JSON.parse(record!.output) as { env: Record<string, string>; uid: number; cwd: string };
    const everything = JSON.stringify(seen.env);
    for (const value of Object.values(secrets)) expect(everything).not.toContain(value);
    expect(
      Object.keys(seen.env).filter(
        (name) =>
          name.startsWith("NETSTRESS_") &&
          !["NETSTRESS_ARM", "NETSTRESS_ITERATION", "NETSTRESS_ATTEMPT"].includes(name),
      ),
    ).toEqual([]);
    expect(seen.env.PATH).toBe(process.env.PATH);
    expect(seen.cwd).toBe(seen.env.HOME);
    expect(seen.cwd).not.toBe(process.cwd());
    expect(seen.uid).toBe(process.getuid!() === 0 ? UNPRIVILEGED.uid : process.getuid!());
  });
});
