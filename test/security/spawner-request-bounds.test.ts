// Item: the native spawner sized its string lists from the request's counts (`calloc(count + 1)`):
// a count of 2^64 - 1 wrapped to an empty allocation that the strings were then written past, and
// the body length was trusted however large. Counts and lengths are now bounded: a request that
// could never start is refused with a "fail" reply, and the spawner goes on serving the next one.
// The bounds hold the same over the socket a build-farm pod's tests container listens on.
import { spawn } from "node:child_process";
import { createConnection } from "node:net";
import type { Readable, Writable } from "node:stream";
import { constants } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const { E2BIG, EINVAL } = constants.errno;
const { SIGTERM } = constants.signals;
const SIZE_MAX = "18446744073709551615";

let dir: Awaited<ReturnType<typeof tempDir>>;
let executable: string;
beforeAll(async () => {
  dir = await tempDir();
  executable = await buildSpawner(join(dir.path, "netstress-spawner"));
}, 60_000);
afterAll(async () => {
  await dir.remove();
});

type Mode = "stdin" | "socket";

/** The spawner, fed raw requests on stdin or its socket, with its replies' lines (output bodies are not used here). */
async function startRaw(mode: Mode): Promise<{
  requests: Writable;
  stderr: () => string;
  closed: Promise<number | null>;
  reply: (prefix: string) => Promise<string>;
}> {
  const socketPath = join(dir.path, `raw-${Date.now()}.sock`);
  const child = spawn(executable, mode === "socket" ? ["--listen", socketPath] : [], { stdio: "pipe" });
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let channel: { requests: Writable; replies: Readable } = { requests: child.stdin, replies: child.stdout };
  if (mode === "socket") {
    for (;;) {
      const socket = await new Promise<ReturnType<typeof createConnection> | undefined>((resolve) => {
        const s = createConnection(socketPath);
        s.once("connect", () => resolve(s));
        s.once("error", () => resolve(undefined));
      });
      if (socket) {
        channel = { requests: socket, replies: socket };
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  let seen = "";
  let ended = false;
  const waiting: Array<() => void> = [];
  const wake = () => {
    for (const w of waiting.splice(0)) w();
  };
  channel.replies.on("data", (chunk: Buffer) => {
    seen += chunk.toString("latin1");
    wake();
  });
  void closed.then(() => {
    ended = true;
    wake();
  });
  const reply = async (prefix: string): Promise<string> => {
    for (;;) {
      const line = seen.split("\n").find((l) => l.startsWith(prefix));
      if (line !== undefined) return line;
      if (ended) throw new Error(`spawner ended before "${prefix}"; replies: ${seen}`);
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  return { requests: channel.requests, stderr: () => stderr, closed, reply };
}

function request(id: number, argc: string, envc: string, strings: string[]): Buffer {
  const body = Buffer.from(strings.map((s) => `${s}\0`).join(""));
  return Buffer.concat([Buffer.from(`spawn ${id} -1 -1 ${argc} ${envc} ${body.length}\n`), body]);
}

describe.each<Mode>(["stdin", "socket"])("the native spawner's request bounds (requests on %s)", (mode) => {
  it("refuses counts and lengths that could never start, and still starts the next test", async () => {
    const { requests, stderr, closed, reply } = await startRaw(mode);
    try {
      await reply("ready ");
      // 2^64 - 1 arguments over 4,000 empty strings: `count + 1` wrapped to 0.
      requests.write(request(1, SIZE_MAX, "0", ["", "/bin/true", ...Array<string>(4000).fill("")]));
      expect(await reply("fail 1 ")).toBe(`fail 1 ${E2BIG}`);
      // More arguments than the body has bytes.
      requests.write(request(2, "1000", "1000", ["", "/bin/true", "true"]));
      expect(await reply("fail 2 ")).toBe(`fail 2 ${EINVAL}`);
      // A 9 MiB body (more than execve takes): refused, read and dropped, not parsed as requests.
      const big = "x".repeat(9 << 20);
      requests.write(request(3, "1", "0", ["", "/bin/true", big]));
      expect(await reply("fail 3 ")).toBe(`fail 3 ${E2BIG}`);

      requests.write(request(4, "1", "0", ["", "/bin/true", "true"]));
      expect(await reply("pid 4 ")).toMatch(/^pid 4 \d+$/);
      expect(await reply("exit 4 ")).toBe("exit 4 0 0");
      expect(stderr()).toContain("request 1 refused: more than 8 MiB of strings");
    } finally {
      requests.end();
    }
    expect(await closed).toBe(0);
  }, 30_000);

  it("signals a test's process group on a kill request, and ignores ids it does not run and signals there are not", async () => {
    const { requests, stderr, closed, reply } = await startRaw(mode);
    try {
      expect(await reply("ready ")).toBe("ready 2");
      requests.write(request(1, "2", "0", ["", "/bin/sleep", "sleep", "600"]));
      expect(await reply("pid 1 ")).toMatch(/^pid 1 \d+$/);
      requests.write("kill 99 9\nkill 1 0\nkill 1 4096\n");
      requests.write(`kill 1 ${SIGTERM}\n`);
      expect(await reply("exit 1 ")).toBe(`exit 1 -1 ${SIGTERM}`);
      // Ended: the id is no longer the spawner's to signal.
      requests.write(`kill 1 ${SIGTERM}\n`);
      requests.write(request(2, "1", "0", ["", "/bin/true", "true"]));
      expect(await reply("exit 2 ")).toBe("exit 2 0 0");
      expect(stderr()).toMatch(/kill 1: no signal 4096/);
    } finally {
      requests.end();
    }
    expect(await closed).toBe(0);
  }, 30_000);
});
