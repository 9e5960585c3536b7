import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { describe, expect, it, onTestFinished } from "vitest";
import { labAvailable, testLabName } from "./lab-available.ts";
import { hostLinks, hostNamespaces } from "./lab-fixture.ts";

const exec = promisify(execFile);
const BIN = fileURLToPath(new URL("../../bin/netstress.js", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The CLI bundled into one file (its packages too) in a new directory anyone may read: `nobody`
 * cannot reach a clone that lives where only root may enter (under /root), nor its node_modules.
 */
async function bundleForAnyone(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "netstress-cli-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755);
  const file = join(dir, "netstress.mjs");
  await build({
    stdin: {
      contents: 'import { main } from "./src/cli/main.ts";\nprocess.exitCode = await main();\n',
      resolveDir: ROOT,
      sourcefile: "netstress-entry.ts",
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: file,
    logLevel: "error",
    // Bundled CommonJS packages require Node's modules.
    banner: {
      js: 'import { createRequire as bundleRequire } from "node:module";\nconst require = bundleRequire(import.meta.url);',
    },
  });
  await chmod(file, 0o644);
  return file;
}

/** `netstress lab up` as a child process, resolved once it printed its kubeconfig path. */
async function labUp(name: string) {
  const child = spawn(process.execPath, [BIN, "lab", "up", "--name", name, "--nodes", "2"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => resolve(chunk.trim()));
    void exited.then((code) => reject(new Error(`lab up exited ${code}: ${stderr}`)));
  });
  return { child, exited, kubeconfig, stderr: () => stderr };
}

/** Still running: a zombie (killed, not yet reaped by whoever inherited it) is not. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

const SIG = testLabName("sig");
const CRASH = testLabName("crash");

describe.skipIf(!labAvailable)("a lab's teardown (root, ip netns)", () => {
  it("Ctrl-C of netstress lab up removes every namespace, link and state file it made", async () => {
    const links = await hostLinks();
    const lab = await labUp(SIG);
    onTestFinished(() => void lab.child.kill("SIGKILL"));
    expect(lab.kubeconfig).toBe(`/run/netstress-lab/${SIG}/kubeconfig`);
    expect(lab.stderr()).toContain(`kubectl --kubeconfig ${lab.kubeconfig}`);
    const { stdout } = await exec("kubectl", ["--kubeconfig", lab.kubeconfig, "get", "nodes", "-o", "name"]);
    expect(stdout.trim().split("\n")).toEqual([`node/${SIG}-node-0`, `node/${SIG}-node-1`]);
    expect((await hostNamespaces()).filter((n) => n.startsWith(`${SIG}-`)).sort()).toEqual([
      `${SIG}-master`,
      `${SIG}-node-0`,
      `${SIG}-node-1`,
      `${SIG}-underlay`,
    ]);
    lab.child.kill("SIGINT");
    expect(await lab.exited).toBe(130);
    expect((await hostNamespaces()).filter((n) => n.startsWith(`${SIG}-`))).toEqual([]);
    expect(await hostLinks()).toEqual(links);
    expect(existsSync(`/run/netstress-lab/${SIG}`)).toBe(false);
  }, 60_000);

  it("after a crash, netstress lab down kills what runs in the lab's namespaces and removes them", async () => {
    const lab = await labUp(CRASH);
    onTestFinished(() => exec(process.execPath, [BIN, "lab", "down", "--name", CRASH]).then(() => undefined));
    const namespaces = (await hostNamespaces()).filter((n) => n.startsWith(`${CRASH}-`));
    const pids = (
      await Promise.all(namespaces.map(async (ns) => (await exec("ip", ["netns", "pids", ns])).stdout))
    )
      .join(" ")
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    expect(pids.length).toBeGreaterThanOrEqual(7); // relay, 2 node helpers, 2 agents, 2 control-plane pods
    lab.child.kill("SIGKILL");
    await lab.exited;
    const status = await exec(process.execPath, [BIN, "lab", "status"]);
    expect(status.stdout).toContain(`${CRASH}\tleft over: netstress lab down --name ${CRASH}\t4 namespaces`);
    const down = await exec(process.execPath, [BIN, "lab", "down", "--name", CRASH]);
    expect(down.stdout).toMatch(
      new RegExp(`lab ${CRASH}: removed 4 network namespaces, killed \\d+ processes`),
    );
    expect((await hostNamespaces()).filter((n) => n.startsWith(`${CRASH}-`))).toEqual([]);
    expect(pids.filter(alive)).toEqual([]);
  }, 60_000);

  it("without root, lab up says it needs root and exits 2", async () => {
    const cli = await bundleForAnyone();
    const result = await exec(
      "setpriv",
      ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, cli, "lab", "up"],
      { cwd: tmpdir() },
    ).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("the lab creates network namespaces and needs root");
    // Bundling takes seconds, and minutes on a loaded machine.
  }, 300_000);
});
