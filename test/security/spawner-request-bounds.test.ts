// Item: the native spawner sized its string lists from the request's counts (`calloc(count + 1)`):
// a count of 2^64 - 1 wrapped to an empty allocation that the strings were then written past, and
// the body length was trusted however large. Counts and lengths are now bounded: a request that
// could never start is refused with a "fail" reply, and the spawner goes on serving the next one.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { constants } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const { E2BIG, EINVAL } = constants.errno;
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

/** The spawner, fed raw requests, with its replies' lines (output bodies are not used here). */
function startRaw(): {
  child: ChildProcessWithoutNullStreams;
  closed: Promise<unknown>;
  reply: (prefix: string) => Promise<string>;
} {
  const child = spawn(executable, [], { stdio: "pipe" });
  const closed = new Promise((resolve) => child.on("close", resolve));
  let seen = "";
  const waiting: Array<() => void> = [];
  child.stdout.on("data", (chunk: Buffer) => {
    seen += chunk.toString("latin1");
    for (const wake of waiting.splice(0)) wake();
  });
  const ended = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const reply = async (prefix: string): Promise<string> => {
    for (;;) {
      const line = seen.split("\n").find((l) => l.startsWith(prefix));
      if (line !== undefined) return line;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `spawner ended (${child.exitCode ?? child.signalCode}) before "${prefix}"; stdout: ${seen}`,
        );
      }
      await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), ended]);
    }
  };
  return { child, closed, reply };
}

function request(id: number, argc: string, envc: string, strings: string[]): Buffer {
  const body = Buffer.from(strings.map((s) => `${s}\0`).join(""));
  return Buffer.concat([Buffer.from(`spawn ${id} -1 -1 ${argc} ${envc} ${body.length}\n`), body]);
}

describe("the native spawner's request bounds", () => {
  it("refuses counts and lengths that could never start, and still starts the next test", async () => {
    const { child, closed, reply } = startRaw();
    const stderr: Buffer[] = [];
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    try {
      await reply("ready ");
      // 2^64 - 1 arguments over 4,000 empty strings: `count + 1` wrapped to 0.
      child.stdin.write(request(1, SIZE_MAX, "0", ["", "/bin/true", ...Array<string>(4000).fill("")]));
      expect(await reply("fail 1 ")).toBe(`fail 1 ${E2BIG}`);
      // More arguments than the body has bytes.
      child.stdin.write(request(2, "1000", "1000", ["", "/bin/true", "true"]));
      expect(await reply("fail 2 ")).toBe(`fail 2 ${EINVAL}`);
      // A 9 MiB body (more than execve takes): refused, read and dropped, not parsed as requests.
      const big = "x".repeat(9 << 20);
      child.stdin.write(request(3, "1", "0", ["", "/bin/true", big]));
      expect(await reply("fail 3 ")).toBe(`fail 3 ${E2BIG}`);

      child.stdin.write(request(4, "1", "0", ["", "/bin/true", "true"]));
      expect(await reply("pid 4 ")).toMatch(/^pid 4 \d+$/);
      expect(await reply("exit 4 ")).toBe("exit 4 0 0");
      expect(Buffer.concat(stderr).toString()).toContain("request 1 refused: more than 8 MiB of strings");
    } finally {
      child.stdin.end();
      await closed;
    }
    expect(child.exitCode).toBe(0);
  }, 30_000);
});
