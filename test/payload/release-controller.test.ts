import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createReleaseController } from "../../src/payload/release-controller.ts";
import { startFakeReleaseController } from "@netstress/testbed/sim/start-fake-release-controller.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the release-controller client", () => {
  it("reads the stream's latest release as the real controller answers it: a tag pullspec", async () => {
    const fake = await startFakeReleaseController();
    try {
      fake.publish("4.22.0-0.nightly", {
        name: "4.22.0-0.nightly-2026-11-30-123456",
        repository: "registry.ci.openshift.org/ocp/release",
      });
      expect(await createReleaseController({ baseUrl: fake.url }).latest("4.22.0-0.nightly")).toEqual({
        name: "4.22.0-0.nightly-2026-11-30-123456",
        pullSpec: "registry.ci.openshift.org/ocp/release:4.22.0-0.nightly-2026-11-30-123456",
        phase: "Accepted",
      });
    } finally {
      await fake.stop();
    }
  });

  it("refuses a redirect to another host, and follows one on its own", async () => {
    const elsewhere = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: "4.22.0-0.nightly-1", pullSpec: "evil.example/payload:1" }));
    });
    const url = await serve((req, res) => {
      if (req.url?.startsWith("/moved/")) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(
          JSON.stringify({ name: "4.22.0-0.nightly-1", pullSpec: "quay.io/ocp/release:1" }),
        );
      }
      const to = req.url?.includes("/own/") ? `/moved${req.url}` : `${elsewhere}/latest`;
      res.writeHead(302, { location: to }).end();
    });
    const client = createReleaseController({ baseUrl: url });
    await expect(client.latest("other")).rejects.toThrow(
      /redirected stream "other" to http:\/\/127\.0\.0\.1:\d+, another host: not followed/,
    );
    // The same host on another port is another origin; a redirect on its own origin is followed.
    expect((await client.latest("own")).pullSpec).toBe("quay.io/ocp/release:1");
  });

  it("stops reading an answer larger than its cap", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"name":"x","pullSpec":"quay.io/ocp/release:x","padding":"`);
      const chunk = "a".repeat(64 * 1024);
      // An answer that never ends: only the cap stops it.
      const timer = setInterval(() => res.write(chunk), 1);
      res.on("close", () => clearInterval(timer));
    });
    await expect(
      createReleaseController({ baseUrl: url, maxBodyBytes: 256 * 1024 }).latest("4.22.0-0.nightly"),
    ).rejects.toThrow("the release-controller's answer is larger than 262144 bytes");
  });
});
