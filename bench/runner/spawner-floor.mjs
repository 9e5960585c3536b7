#!/usr/bin/env node
// The floor under `netstress run`: 2,000 no-op tests at P = 4 started through the runner's process
// spawner by a driver that does nothing else (no scheduling, parsing or records). What the runner
// takes beyond this is its own work. With --socket, the driver speaks to the spawner over the Unix
// socket it listens on (`--listen`, as in a build-farm pod's tests container) instead of its stdin
// and stdout.
//   node bench/runner/spawner-floor.mjs SPAWNER BINARY [--socket]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [spawnerPath, binary, mode] = process.argv.slice(2);
if (!spawnerPath || !binary || (mode !== undefined && mode !== "--socket")) {
  process.stderr.write("usage: node bench/runner/spawner-floor.mjs SPAWNER BINARY [--socket]\n");
  process.exit(2);
}
const TOTAL = 2000;
const PARALLEL = 4;
const socketDir = mode ? mkdtempSync(join(tmpdir(), "spawner-floor-")) : undefined;
const socketPath = socketDir && join(socketDir, "socket");
const child = spawn(spawnerPath, socketPath ? ["--listen", socketPath] : [], {
  stdio: ["pipe", "pipe", "inherit"],
  env: {},
});
child.on("close", () => socketDir && rmSync(socketDir, { recursive: true, force: true }));
const connection = socketPath ? await connect(socketPath) : undefined;
const spawner = connection ? { stdin: connection, stdout: connection } : child;
const env = Object.entries(process.env).map(([name, value]) => `${name}=${value}\0`);
const args = [binary, "run-test", "-n", "[sig-network] no-op", "-o", "jsonl"];
// cwd (empty: inherit), file, then argv and the environment, each NUL-terminated.
const body = Buffer.from(`\0${binary}\0${args.join("\0")}\0${env.join("")}`);
let next = 1;
let running = 0;
let done = 0;
const startMore = () => {
  for (; running < PARALLEL && next <= TOTAL; running++, next++) {
    const header = `spawn ${next} -1 -1 ${args.length} ${env.length} ${body.length}\n`;
    spawner.stdin.write(Buffer.concat([Buffer.from(header), body]));
  }
};
let buffered = Buffer.alloc(0);
spawner.stdout.on("data", (chunk) => {
  const data = buffered.length > 0 ? Buffer.concat([buffered, chunk]) : chunk;
  let offset = 0;
  for (let nl = data.indexOf(10, offset); nl !== -1; nl = data.indexOf(10, offset)) {
    const [kind, , , length] = data.toString("latin1", offset, nl).split(" ");
    if (kind === "out") {
      if (data.length < nl + 1 + Number(length)) break;
      offset = nl + 1 + Number(length);
      continue;
    }
    offset = nl + 1;
    if (kind === "ready") startMore();
    if (kind === "exit" || kind === "fail") {
      running -= 1;
      done += 1;
      if (done === TOTAL) spawner.stdin.end();
      else startMore();
    }
  }
  buffered = Buffer.from(data.subarray(offset));
});

/** Connects once the spawner listens. */
async function connect(path) {
  for (;;) {
    const socket = await new Promise((resolve) => {
      const s = createConnection(path);
      s.once("connect", () => resolve(s));
      s.once("error", () => resolve(undefined));
    });
    if (socket) return socket;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
