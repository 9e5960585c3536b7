import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../helpers/free-port.ts";
import { waitForPort } from "../helpers/wait-for-port.ts";

/**
 * A private redis-server that keeps its data across a restart (append-only file, fsync on every
 * write), as a production Redis does: restarting it mid-run tests reconnection, not amnesia.
 */
export async function startPersistentRedis(): Promise<{
  url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), "netstress-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
      ],
      { stdio: "ignore" },
    );
    await waitForPort(port);
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await stop();
      await start();
    },
    async stop() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
