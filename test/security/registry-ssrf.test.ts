import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildComponentImage,
  buildLabels,
  buildReleaseImage,
} from "@netstress/testbed/sample-payload/build-release-image.ts";
import { writeOciLayout } from "@netstress/testbed/sample-payload/oci-image-builder.ts";
import { DEFAULT_REGISTRY_SETTINGS } from "../../src/config/registry-settings.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import { createDistributionClient } from "../../src/registry/distribution-client.ts";
import { createEgressGuard } from "../../src/registry/egress-guard.ts";
import { parseImageReference, type RegistryImageReference } from "../../src/registry/image-reference.ts";
import { operatorRegistryOptions } from "../../src/registry/operator-registry-options.ts";
import { pushImage } from "../helpers/oci-push-image.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let work: string;
let registry: RegistryServer;
const servers: Server[] = [];
const sockets = new Set<Socket>();

/** A loopback HTTP server that records what reaches it. */
async function serve(handler: Handler = (_req, res) => res.end()) {
  const requests: Array<{ url: string; authorization?: string }> = [];
  const server = createServer((req, res) => {
    requests.push({
      url: req.url ?? "",
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    handler(req, res);
  });
  server.on("connection", (socket) => sockets.add(socket));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return { host, requests };
}

const ref = (text: string) => parseImageReference(text) as RegistryImageReference;
const fast = { timeoutMs: 5000, retry: { retries: 0, backoffMs: 1 } };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "netstress-ssrf-"));
  registry = await startRegistry();
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await registry.stop();
  await rm(work, { recursive: true, force: true });
});

describe("a registry named in repository configuration cannot reach what the bot can", () => {
  it("is not followed when it redirects to plain HTTP", async () => {
    const target = await serve();
    const origin = await serve((_req, res) => {
      res.writeHead(302, { location: `http://${target.host}/internal` });
      res.end();
    });
    // Plain HTTP is spoken to the registry itself only (as to an insecure registry the operator named).
    const client = createDistributionClient({ ...fast, plainHttp: (host) => host === origin.host });
    await expect(client.getManifest(ref(`${origin.host}/ns/app:v1`))).rejects.toMatchObject({
      code: "refused",
      message: /redirected to http:\/\/127\.0\.0\.1:\d+: only https redirects are followed/,
    });
    expect(target.requests).toEqual([]);
  });

  it("is not followed when it redirects to a private, link-local or metadata address", async () => {
    const names: Record<string, string> = {
      "metadata.test": "169.254.169.254",
      "kube-api.test": "10.96.0.1",
      "node.test": "::ffff:192.168.1.10",
    };
    const guard = createEgressGuard({
      allowLoopback: true,
      lookup: async (host) => [names[host] ?? "127.0.0.1"],
    });
    for (const [name, address] of Object.entries(names)) {
      const origin = await serve((_req, res) => {
        res.writeHead(307, { location: `https://${name}/latest/meta-data/` });
        res.end();
      });
      const client = createDistributionClient({ ...fast, guard });
      await expect(client.getManifest(ref(`${origin.host}/ns/app:v1`))).rejects.toMatchObject({
        code: "refused",
        message: new RegExp(
          `${name.replace(".", "\\.")} is ${address.replace(/\./g, "\\.")}, an internal address`,
        ),
      });
    }
  });

  it("reaches loopback registries only when the operator allows loopback", async () => {
    const { payload } = await pushPayload({
      url: registry.url,
      host: registry.host,
      repository: "ocp/release",
      name: "4.20.0-0.nightly",
      arches: ["amd64"],
      components: [{ tag: "ovn-kubernetes", binary: "ovn" }],
    });
    const bot = (allowLoopback: boolean) =>
      operatorRegistryOptions({
        access: { ...DEFAULT_REGISTRY_SETTINGS, allowedRegistries: [registry.host], allowLoopback },
        operatorImages: [],
      });
    const refused = await createRegistry({ cacheDir: join(work, "cache-refused"), ...fast, ...bot(false) });
    await expect(resolvePlan({ payload, arch: "amd64", registry: refused })).rejects.toMatchObject({
      code: "refused",
      message: /127\.0\.0\.1 is 127\.0\.0\.1, an internal address/,
    });
    const allowed = await createRegistry({ cacheDir: join(work, "cache-allowed"), ...fast, ...bot(true) });
    const plan = await resolvePlan({ payload, arch: "amd64", registry: allowed });
    expect(plan.components.map((c) => [c.tag, c.available])).toEqual([["ovn-kubernetes", true]]);
  });

  it("is refused, before any request, when it is not on the bot's allow-list", async () => {
    const elsewhere = await serve();
    const options = operatorRegistryOptions({
      access: { ...DEFAULT_REGISTRY_SETTINGS, allowLoopback: true },
      operatorImages: [
        "quay.io/openshift-release-dev/ocp-release:4.18.0-multi",
        "registry.example.com/pr:{tag}",
      ],
    });
    expect(options.allowRegistry!("quay.io")).toBe(true);
    expect(options.allowRegistry!("registry.build05.ci.openshift.org")).toBe(true);
    expect(options.allowRegistry!("registry.example.com")).toBe(true);
    const client = createDistributionClient({ ...fast, ...options });
    await expect(client.getManifest(ref(`${elsewhere.host}/ns/app:v1`))).rejects.toMatchObject({
      code: "refused",
      message: /is not among the registries this bot reads/,
    });
    expect(elsewhere.requests).toEqual([]);
  });

  it("never sends credentials to a token realm over plain HTTP", async () => {
    const realm = await serve((_req, res) => res.end(JSON.stringify({ token: "t" })));
    const origin = await serve((_req, res) => {
      res.writeHead(401, { "www-authenticate": `Bearer realm="http://${realm.host}/token",service="r"` });
      res.end();
    });
    const client = createDistributionClient({
      ...fast,
      plainHttp: (host) => host === origin.host,
      credentials: () => ({ username: "bot", password: "registry-secret" }),
    });
    await expect(client.getManifest(ref(`${origin.host}/ns/app:v1`))).rejects.toMatchObject({
      code: "refused",
      message: /token server http:\/\/127\.0\.0\.1:\d+; only https token servers are used/,
    });
    expect(realm.requests).toEqual([]);
  });

  it("does not get its response bodies into errors (they reach the PR)", async () => {
    const origin = await serve((_req, res) => {
      res.writeHead(418, { "content-type": "text/html" });
      res.end("<html>internal admin page: db-password=hunter2</html>");
    });
    const error = await createDistributionClient(fast)
      .getManifest(ref(`${origin.host}/ns/app:v1`))
      .then(
        () => new Error("no error"),
        (e: unknown) => e as Error,
      );
    expect(error).toMatchObject({ code: "bad-response", message: /unexpected HTTP 418$/ });
    expect(error.message).not.toContain("hunter2");
  });

  it("cannot make a remote payload read an OCI layout on the bot's disk", async () => {
    // A layout the bot has on disk (the operator's, say), which a payload from a registry names.
    const layoutDir = join(work, "operator-layout");
    const secret = await buildComponentImage({
      arches: ["amd64"],
      labels: buildLabels("c".repeat(40), "https://github.com/openshift/secret"),
      binary: { path: "/usr/bin/ovn-kubernetes-tests-ext.gz", content: Buffer.from("operator's binary") },
    });
    await writeOciLayout({ dir: layoutDir, images: [{ name: "secret", image: secret }] });
    const release = await buildReleaseImage({
      name: "4.20.0-0.evil",
      arches: ["amd64"],
      tags: [
        {
          tag: "ovn-kubernetes",
          pullspec: `oci:${layoutDir}@${secret.manifest.digest}`,
          commit: "c".repeat(40),
          sourceLocation: "https://github.com/openshift/ovn-kubernetes",
        },
      ],
    });
    await pushImage({ url: registry.url, repository: "evil/release", tag: "v1", image: release });
    const payload = `${registry.host}/evil/release:v1`;
    const access = { ...DEFAULT_REGISTRY_SETTINGS, allowedRegistries: [registry.host], allowLoopback: true };

    const bot = await createRegistry({
      cacheDir: join(work, "cache-layout"),
      ...fast,
      ...operatorRegistryOptions({ access, operatorImages: [] }),
    });
    const [ovn] = (await resolvePlan({ payload, arch: "amd64", registry: bot })).components;
    expect(ovn).toMatchObject({
      tag: "ovn-kubernetes",
      available: false,
      reason: expect.stringMatching(
        /OCI layouts are read only from the directories this bot's operator configured/,
      ),
    });

    // The operator's own directory is readable where the operator said so.
    const configured = await createRegistry({
      cacheDir: join(work, "cache-layout-allowed"),
      ...fast,
      ...operatorRegistryOptions({ access: { ...access, layoutDirs: [layoutDir] }, operatorImages: [] }),
    });
    const [allowed] = (await resolvePlan({ payload, arch: "amd64", registry: configured })).components;
    expect(allowed).toMatchObject({ tag: "ovn-kubernetes", available: true });
  });
});
