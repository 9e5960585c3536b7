import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
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
const run = promisify(execFile);
let work: string;
let deployed: Awaited<ReturnType<typeof startDeployedRedis>>;
let port: number;
const clients: Redis[] = [];

/** The Redis of deploy/overlays/example as it runs in its pod, but on a loopback port of its own. */
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-redis-auth-"));
  deployed = await startDeployedRedis({ overlay: "overlays/example", dir: work });
  port = deployed.port;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  await deployed?.stop();
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

/** A redis-server of a rendered overlay, as its pod runs it, on a loopback port; paths mapped. */
async function startDeployedRedis(options: { overlay: string; dir: string; paths?: Record<string, string> }) {
  const manifests = renderKustomization(join(deployDir, options.overlay));
  const config = (
    manifests.find((m) => m.kind === "ConfigMap" && m.metadata.name === "netstress-redis") as unknown as {
      data: Record<string, string>;
    }
  ).data["redis.conf"]!;
  const [container] = (
    manifests.find((m) => m.kind === "StatefulSet" && m.metadata.name === "netstress-redis") as unknown as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    }
  ).spec.template.spec.containers;
  const port = await freePort();
  const local = config
    .split("\n")
    .map((line) =>
      line.startsWith("bind ")
        ? "bind 127.0.0.1"
        : line.startsWith("port ")
          ? `port ${port}`
          : line.startsWith("dir ")
            ? `dir ${options.dir}`
            : line,
    )
    .join("\n");
  await writeFile(join(options.dir, "redis.conf"), local);
  const args = container!.args.slice(1).map((arg, i, all) => {
    if (arg === "$(REDIS_PASSWORD)") return PASSWORD;
    if (all[i - 1] === "--tls-port") return String(port);
    return options.paths?.[arg] ?? arg;
  });
  const server = spawn("redis-server", [join(options.dir, "redis.conf"), ...args], { stdio: "ignore" });
  await waitForPort(port);
  return {
    port,
    stop: async () => {
      if (server.exitCode !== null) return;
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    },
  };
}

describe("Redis over TLS (deploy/overlays/redis-tls)", () => {
  let dir: string;
  let redis: Awaited<ReturnType<typeof startDeployedRedis>>;
  let probe: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "netstress-redis-tls-"));
    const tls = join(dir, "tls");
    await mkdir(tls);
    // A CA and a certificate for the address the bot connects to, as the netstress-redis-tls Secret holds.
    const openssl = (...args: string[]) => run("openssl", args, { cwd: tls });
    await openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "1",
      "-subj",
      "/CN=netstress test CA",
    );
    await openssl(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "tls.key",
      "-out",
      "tls.csr",
      "-subj",
      "/CN=127.0.0.1",
    );
    await writeFile(join(tls, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
    await openssl(
      "x509",
      "-req",
      "-in",
      "tls.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "1",
      "-extfile",
      "san.ext",
    );
    redis = await startDeployedRedis({
      overlay: "overlays/redis-tls",
      dir,
      paths: Object.fromEntries(
        ["tls.crt", "tls.key", "ca.crt"].map((f) => [`/etc/redis/tls/${f}`, join(tls, f)]),
      ),
    });
    // The bot's connection in a process of its own: Node reads NODE_EXTRA_CA_CERTS at start only.
    probe = join(dir, "probe.mts");
    await writeFile(
      probe,
      [
        `import { Redis } from ${JSON.stringify(import.meta.resolve("ioredis"))};`,
        `import { loadSettings } from ${JSON.stringify(join(process.cwd(), "src/server/load-settings.ts"))};`,
        `const { bot } = loadSettings();`,
        `const redis = new Redis(bot.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });`,
        `let first: unknown;`,
        `redis.on("error", (e) => (first ??= e));`,
        `try { await redis.connect(); console.log(await redis.ping()); } catch (e) { console.log(String(first ?? e)); } finally { redis.disconnect(); }`,
      ].join("\n"),
    );
  });

  afterAll(async () => {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const probeWith = async (env: Record<string, string>) =>
    (
      await run(process.execPath, ["--import", "tsx", probe], {
        cwd: process.cwd(),
        env: { PATH: process.env.PATH!, ...botEnv, NETSTRESS_REDIS_PASSWORD: PASSWORD, ...env },
        timeout: 30_000,
      })
    ).stdout.trim();

  it("serves the bot over rediss:// when it trusts the Secret's CA, as the overlay sets up", async () => {
    const url = `rediss://127.0.0.1:${redis.port}`;
    expect(
      await probeWith({ NETSTRESS_REDIS_URL: url, NODE_EXTRA_CA_CERTS: join(dir, "tls", "ca.crt") }),
    ).toBe("PONG");
    // Without the CA the server is not trusted; without TLS it is not spoken to at all.
    expect(await probeWith({ NETSTRESS_REDIS_URL: url })).toMatch(/certificate|self.signed/i);
    expect(await probeWith({ NETSTRESS_REDIS_URL: `redis://127.0.0.1:${redis.port}` })).not.toBe("PONG");
  });
});
