import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadSlots, sendArtifact } from "../../src/http/send-artifact.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let server: Server;
let base: string;
const BIG = 16 * 1024 * 1024;

beforeAll(async () => {
  dir = await tempDir();
  const root = join(dir.path, "artifacts");
  await mkdir(root);
  await writeFile(join(root, "big.bin"), randomBytes(BIG));
  // Text up front, a binary tail: the first KiB decides.
  await writeFile(
    join(root, "log.txt"),
    Buffer.concat([Buffer.from("ok\n".repeat(400)), Buffer.from([0, 1, 2])]),
  );
  await writeFile(
    join(root, "capture.pcap"),
    Buffer.concat([Buffer.from([0xd4, 0xc3, 0xb2, 0xa1, 0]), Buffer.from("text")]),
  );
  await writeFile(join(dir.path, "secret"), "outside\n");
  await symlink(join(dir.path, "secret"), join(root, "link"));
  const slots = downloadSlots(4);
  server = createServer((req, res) => {
    void sendArtifact(res, { root, file: join(root, req.url!.slice(1)) }, slots).then((sent) => {
      if (!sent) res.writeHead(404).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await dir.remove();
});

/** A GET whose body is not read until `drain` (a slow reader). */
function get(path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request(`${base}${path}`, resolve).on("error", reject).end());
}

describe("artifact downloads on the public port", () => {
  it("are served to at most the configured number of readers at once; the others are told to retry", async () => {
    const responses = await Promise.all(Array.from({ length: 12 }, () => get("/big.bin")));
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 503)).toHaveLength(8);
    expect(responses.find((r) => r.statusCode === 503)!.headers["retry-after"]).toBe("5");
    // The slow readers get the whole file, in full, once they read.
    const sizes = await Promise.all(
      responses
        .filter((r) => r.statusCode === 200)
        .map(async (r) => {
          expect(r.headers["content-length"]).toBe(String(BIG));
          let bytes = 0;
          for await (const chunk of r) bytes += (chunk as Buffer).length;
          return bytes;
        }),
    );
    expect(sizes).toEqual([BIG, BIG, BIG, BIG]);
    for (const r of responses) r.resume();
    // Finished downloads give their slot back.
    const again = await get("/big.bin");
    expect(again.statusCode).toBe(200);
    again.resume();
    await once(again, "end");
  });

  it("say text from the first KiB alone, always as an attachment the browser may not sniff", async () => {
    const text = await get("/log.txt");
    expect(text.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(text.headers["content-disposition"]).toMatch(/^attachment; filename="log.txt"/);
    expect(text.headers["x-content-type-options"]).toBe("nosniff");
    text.resume();
    const binary = await get("/capture.pcap");
    expect(binary.headers["content-type"]).toBe("application/octet-stream");
    binary.resume();
  });

  it("never follow a link out of the artifacts", async () => {
    const response = await get("/link");
    expect(response.statusCode).toBe(404);
    response.resume();
  });
});
