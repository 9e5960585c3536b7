import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/server/load-settings.ts";
import { freePort } from "../helpers/free-port.ts";
import { waitForPort } from "../helpers/wait-for-port.ts";
import { deployDir, renderKustomization } from "../deploy/render-kustomization.ts";

const PASSWORD = "p@ss:w/rd%20 with spaces";
let work: string;
let child: ChildProcess;
let port: number;
const clients: Redis[] = [];

/** The Redis of deploy/overlays/example as it runs in its pod, but on a loopback port of its own. */
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-redis-auth-"));
  const manifests = renderKustomization(join(deployDir, "overlays/example"));
  const config = (
    manifests.find((m) => m.kind === "ConfigMap" && m.metadata.name === "netstress-redis") as unknown as {
      data: Record<string, string>;
    }
  ).data["redis.conf"]!;
  const statefulSet = manifests.find(
    (m) => m.kind === "StatefulSet" && m.metadata.name === "netstress-redis",
  ) as unknown as {
    spec: { template: { spec: { containers: { args: string[] }[] } } };
  };
  port = await freePort();
  // Only where it listens and keeps its files differ from the pod's.
  const local = config
    .split("\n")
    .map((line) =>
      line.startsWith("bind ")
        ? "bind 127.0.0.1"
        : line.startsWith("port ")
          ? `port ${port}`
          : line.startsWith("dir ")
            ? `dir ${work}`
            : line,
    )
    .join("\n");
  await writeFile(join(work, "redis.conf"), local);
  const [, ...args] = statefulSet.spec.template.spec.containers[0]!.args.map((arg) =>
    arg === "$(REDIS_PASSWORD)" ? PASSWORD : arg,
  );
  child = spawn("redis-server", [join(work, "redis.conf"), ...args], { stdio: "ignore" });
  await waitForPort(port);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await rm(work, { recursive: true, force: true });
});

const connect = (url: string, options: { readyCheck?: boolean } = {}) => {
  const client = new Redis(url, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    retryStrategy: () => null,
    enableReadyCheck: options.readyCheck ?? true,
  });
  client.on("error", () => {}); // Refusals are asserted on the commands themselves.
  clients.push(client);
  return client;
};

const botEnv = {
  APP_ID: "1",
  PRIVATE_KEY: "PEM",
  WEBHOOK_SECRET: "s",
  NETSTRESS_REDIS_URL: "redis://127.0.0.1:0",
};

describe("Redis as deployed", () => {
  it("refuses clients that do not authenticate, and wrong passwords", async () => {
    const anonymous = connect(`redis://127.0.0.1:${port}`, { readyCheck: false });
    await anonymous.connect();
    await expect(anonymous.get("netstress:any")).rejects.toThrow(/NOAUTH/);
    await expect(anonymous.auth("wrong")).rejects.toThrow(/WRONGPASS/);
    await expect(anonymous.get("netstress:any")).rejects.toThrow(/NOAUTH/);
  });

  it("serves the bot's queues with the password from NETSTRESS_REDIS_PASSWORD", async () => {
    const { bot } = loadSettings({
      ...botEnv,
      NETSTRESS_REDIS_URL: `redis://127.0.0.1:${port}`,
      NETSTRESS_REDIS_PASSWORD: PASSWORD,
    });
    const connection = connect(bot.redisUrl);
    await connection.connect();
    expect(await connection.ping()).toBe("PONG");
    // A job goes through BullMQ, whose blocking connections are made from the bot's connection.
    const queue = new Queue("auth-check", { connection, prefix: "netstress-test" });
    const done = new Promise<unknown>((resolve) => {
      const worker = new Worker("auth-check", async (job) => job.data, {
        connection,
        prefix: "netstress-test",
      });
      worker.on("completed", (job) => {
        resolve(job.returnvalue);
        void worker.close();
      });
    });
    await queue.add("one", { ok: true });
    expect(await done).toEqual({ ok: true });
    await queue.close();
  });

  it("is refused by the bot's settings when it is not on loopback and no password is set", () => {
    expect(() => loadSettings({ ...botEnv, NETSTRESS_REDIS_URL: "redis://netstress-redis:6379" })).toThrow(
      /NETSTRESS_REDIS_PASSWORD: a Redis that is not on loopback needs a password/,
    );
    const { bot } = loadSettings({
      ...botEnv,
      NETSTRESS_REDIS_URL: "rediss://netstress-redis:6379",
      NETSTRESS_REDIS_USERNAME: "netstress",
      NETSTRESS_REDIS_PASSWORD: PASSWORD,
    });
    expect(new URL(bot.redisUrl)).toMatchObject({ protocol: "rediss:", username: "netstress" });
    expect(decodeURIComponent(new URL(bot.redisUrl).password)).toBe(PASSWORD);
  });
});
