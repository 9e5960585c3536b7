// Run inside a network namespace: connects to HOST:PORT over and over (a new TCP connection every
// INTERVAL ms, each given TIMEOUT ms) until its stdin closes, says "ok" or "failed" on stderr after
// each attempt (so that a test acts on what the loop saw, not on the clock), and prints one JSON
// line: attempts, failures, and the time from the first failed attempt of each outage to the next
// success (lostMs).
import { connect } from "node:net";

const [host, port, interval = "50", timeout = "250"] = process.argv.slice(2);
const attempt = () =>
  new Promise((resolve) => {
    const socket = connect({ host, port: Number(port) });
    const done = (ok) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), Number(timeout));
    socket.once("data", () => done(true));
    socket.once("error", () => done(false));
  });
let stopped = false;
process.stdin.on("end", () => (stopped = true)).resume();
let attempts = 0;
let failures = 0;
let lostMs = 0;
let outageStart;
while (!stopped) {
  const started = Date.now();
  const ok = await attempt();
  attempts += 1;
  if (!ok) {
    failures += 1;
    outageStart ??= started;
  } else if (outageStart !== undefined) {
    lostMs += started - outageStart;
    outageStart = undefined;
  }
  process.stderr.write(ok ? "ok\n" : "failed\n");
  await new Promise((r) => setTimeout(r, Math.max(0, Number(interval) - (Date.now() - started))));
}
if (outageStart !== undefined) lostMs += Date.now() - outageStart;
process.stdout.write(`${JSON.stringify({ attempts, failures, lostMs })}\n`);
