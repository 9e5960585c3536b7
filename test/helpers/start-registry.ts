import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { freePort } from "./free-port.ts";
import { waitForPort } from "./wait-for-port.ts";

export interface RegistryServer {
  /** host:port, as it appears in image references. */
  host: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts Debian's docker-registry (distribution 2.x) on a free loopback port with its storage in a
 * temporary directory; with `auth`, it demands those htpasswd (bcrypt) credentials; `readOnly`
 * refuses every push, as a mirror does.
 */
export async function startRegistry(
  options: { auth?: { username: string; password: string }; readOnly?: boolean } = {},
): Promise<RegistryServer> {
  const dir = await mkdtemp(join(tmpdir(), "netstress-registry-"));
  const port = await freePort();
  const authLines: string[] = [];
  if (options.auth) {
    const htpasswd = join(dir, "htpasswd");
    await writeFile(htpasswd, `${options.auth.username}:${bcrypt.hashSync(options.auth.password, 6)}\n`);
    authLines.push("auth:", "  htpasswd:", "    realm: netstress-test", `    path: ${htpasswd}`);
  }
  const config = join(dir, "config.yml");
  await writeFile(
    config,
    [
      "version: 0.1",
      "log:",
      "  level: error",
      "  accesslog:",
      "    disabled: true",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${join(dir, "storage")}`,
      "  delete:",
      "    enabled: true",
      ...(options.readOnly ? ["  maintenance:", "    readonly:", "      enabled: true"] : []),
      "http:",
      `  addr: 127.0.0.1:${port}`,
      ...authLines,
      "",
    ].join("\n"),
  );
  const child = spawn("/usr/bin/docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
  if (child.pid === undefined)
    throw new Error("docker-registry did not start: is the docker-registry package installed?");
  const pid = child.pid;
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  try {
    await waitForPort(port);
  } catch (error) {
    process.kill(pid, "SIGTERM");
    throw new Error(`docker-registry did not listen on 127.0.0.1:${port}: ${stderr}`, { cause: error });
  }
  return {
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    pid,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        process.kill(pid, "SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
