import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A release of a stream: its name, and the repository its payload is tagged in. */
export interface FakeRelease {
  /** e.g. 4.22.0-0.nightly-2026-11-30-123456: also the payload's tag. */
  name: string;
  /** e.g. registry.ci.openshift.org/ocp/release. */
  repository: string;
  phase?: "Accepted" | "Rejected" | "Ready";
}

export interface FakeReleaseController {
  /** Its base URL (http, loopback). */
  url: string;
  /** Makes `release` the stream's latest (a stream appears with its first release). */
  publish(stream: string, release: FakeRelease): void;
  /** How often each stream's latest was asked for. */
  asked(stream: string): number;
  stop(): Promise<void>;
}

/**
 * The release-controller's `/api/v1/releasestream/<stream>/latest`, answering as the real one does:
 * `{name, phase, pullSpec, downloadURL}` with `pullSpec` in TAG form, the release's name as the tag
 * (`registry.ci.openshift.org/ocp/release:4.22.0-0.nightly-…`) — never a digest, which is what the
 * bot must resolve for itself. An unknown stream is 404 with the real controller's text.
 */
export async function startFakeReleaseController(): Promise<FakeReleaseController> {
  const latest = new Map<string, FakeRelease>();
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://release-controller").pathname;
    const match = /^\/api\/v1\/releasestream\/([^/]+)\/latest$/.exec(path);
    const stream = match ? decodeURIComponent(match[1]!) : undefined;
    const release = stream === undefined ? undefined : latest.get(stream);
    if (stream !== undefined) counts.set(stream, (counts.get(stream) ?? 0) + 1);
    if (req.method !== "GET" || !release) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Release stream not found\n");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        name: release.name,
        phase: release.phase ?? "Accepted",
        pullSpec: `${release.repository}:${release.name}`,
        downloadURL: `https://openshift-release-artifacts.example/${release.name}`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    publish: (stream, release) => void latest.set(stream, release),
    asked: (stream) => counts.get(stream) ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
