#!/usr/bin/env node
// The floor under `netstress run`: 2,000 no-op tests at P = 4 started through the runner's process
// spawner by a driver that does nothing else (no scheduling, parsing or records). What the runner
// takes beyond this is its own work.
//   node bench/runner/spawner-floor.mjs SPAWNER BINARY
import { spawn } from "node:child_process";

const [spawnerPath, binary] = process.argv.slice(2);
if (!spawnerPath || !binary) {
  process.stderr.write("usage: node bench/runner/spawner-floor.mjs SPAWNER BINARY\n");
  process.exit(2);
}
const TOTAL = 2000;
const PARALLEL = 4;
const spawner = spawn(spawnerPath, [], { stdio: ["pipe", "pipe", "inherit"], env: {} });
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
