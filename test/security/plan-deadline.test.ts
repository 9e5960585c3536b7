import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

let work: string;
let registryServer: RegistryServer;
let payload: string;
let trickler: Server;
let tricklerHost: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-plan-deadline-"));
  registryServer = await startRegistry();
  ({ payload } = await pushPayload({
    url: registryServer.url,
    host: registryServer.host,
    repository: "ocp/release",
    name: "4.20.0-0.nightly",
    arches: ["amd64"],
    components: [
      { tag: "ovn-kubernetes", binary: randomBytes(32 * 1024) },
      { tag: "sdn", binary: randomBytes(32 * 1024) },
    ],
  }));
  // A registry that answers every request, then sends one byte every 100 ms forever: no idle
  // timeout ever fires, so only an overall deadline ends the plan.
  trickler = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/vnd.oci.image.manifest.v1+json" });
    const timer = setInterval(() => res.write(" "), 100);
    res.once("close", () => clearInterval(timer));
  });
  trickler.on("connection", (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => trickler.listen(0, "127.0.0.1", resolve));
  tricklerHost = `127.0.0.1:${(trickler.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => trickler.close(resolve));
  await registryServer.stop();
  await rm(work, { recursive: true, force: true });
});

const registryFor = async (options: { taskBudget?: { maxBytes?: number; timeoutMs?: number } } = {}) =>
  createRegistry({
    cacheDir: await mkdtemp(join(work, "cache-")),
    client: createDistributionClient({ timeoutMs: 5000, retry: { retries: 2, backoffMs: 1 } }),
    ...options,
  });

describe("plan resolution is bounded", () => {
  it("stops a registry that trickles bytes when the caller's signal aborts", async () => {
    const registry = await registryFor();
    const started = Date.now();
    await expect(
      resolvePlan({
        payload: `${tricklerHost}/ocp/release:x`,
        arch: "amd64",
        registry,
        signal: AbortSignal.timeout(800),
      }),
    ).rejects.toMatchObject({ name: "RegistryError", code: "deadline-exceeded" });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("stops at the registry's own time budget when the caller gives no signal", async () => {
    const registry = await registryFor({ taskBudget: { timeoutMs: 800 } });
    const started = Date.now();
    await expect(
      resolvePlan({ payload: `${tricklerHost}/ocp/release:x`, arch: "amd64", registry }),
    ).rejects.toMatchObject({ code: "deadline-exceeded", message: /deadline passed/ });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("fails the whole plan, not one component, when it reads more bytes than its budget", async () => {
    const within = await resolvePlan({ payload, arch: "amd64", registry: await registryFor() });
    expect(within.components.filter((c) => c.available).map((c) => c.tag)).toEqual(["ovn-kubernetes", "sdn"]);

    const registry = await registryFor({ taskBudget: { maxBytes: 16 * 1024 } });
    await expect(resolvePlan({ payload, arch: "amd64", registry })).rejects.toMatchObject({
      code: "budget-exceeded",
      message: /more than the 16384 bytes it may read/,
    });
  });

  it("gives every plan a budget of its own: a spent plan does not spend the next", async () => {
    const registry = await registryFor({ taskBudget: { maxBytes: 64 * 1024 * 1024 } });
    for (let n = 0; n < 3; n++) {
      const plan = await resolvePlan({ payload, arch: "amd64", registry });
      expect(plan.components.every((c) => c.available)).toBe(true);
    }
  });
});
