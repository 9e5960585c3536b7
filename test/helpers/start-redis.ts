import { spawn } from "node:child_process";
import { freePort } from "./free-port.ts";
import { waitForPort } from "./wait-for-port.ts";

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server on a free loopback port, keeping nothing on disk. Tests never use
 * a Redis that happens to be running on the machine.
 */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
    { stdio: "ignore" },
  );
  if (child.pid === undefined)
    throw new Error("redis-server did not start: is the redis-server package installed?");
  const pid = child.pid;
  await waitForPort(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        process.kill(pid, "SIGTERM");
      }),
  };
}
