import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { LabName } from "./lab-name.ts";
import { runIp } from "./run-ip.ts";

const OWN = /^(underlay|master|node-\d+|pod-\d+)$/;

/** The network namespaces of lab `name` that exist now, pods first and the underlay last. */
export function labNamespaces(name: LabName, list: string): string[] {
  const rank = (ns: string) =>
    ns.includes("-pod-") ? 0 : ns.includes("-node-") ? 1 : ns.endsWith("-master") ? 2 : 3;
  return list
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[0] ?? "")
    .filter((ns) => ns.startsWith(`${name}-`) && OWN.test(ns.slice(name.length + 1)))
    .sort((a, b) => rank(a) - rank(b));
}

function kill(pids: string, signal: NodeJS.Signals): number[] {
  const killed: number[] = [];
  for (const pid of pids.split(/\s+/).filter(Boolean).map(Number)) {
    try {
      process.kill(pid, signal);
      killed.push(pid);
    } catch {
      // gone already
    }
  }
  return killed;
}

/**
 * Removes everything lab `name` left in the kernel: every process still inside one of its network
 * namespaces is killed (SIGKILL), then the namespaces are deleted — with them every veth, bridge,
 * address, route and rule the lab made, which all live inside them. Works for a crashed lab too.
 */
export async function removeLabNamespaces(
  name: LabName,
): Promise<{ namespaces: string[]; processes: number }> {
  const namespaces = labNamespaces(name, await runIp(["netns", "list"]));
  let processes = 0;
  for (const ns of namespaces) {
    const pids = kill(await runIp(["netns", "pids", ns], { allowFailure: true }), "SIGKILL");
    processes += pids.length;
    for (let waited = 0; waited < 3000 && pids.some(alive); waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await runIp(["netns", "del", ns], { allowFailure: true });
  }
  return { namespaces, processes };
}

/** The same, synchronously: for a process's `exit` event, when nothing asynchronous runs any more. */
export function removeLabNamespacesSync(name: LabName): void {
  const ip = (args: string[]) => {
    try {
      return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      return "";
    }
  };
  for (const ns of labNamespaces(name, ip(["netns", "list"]))) {
    kill(ip(["netns", "pids", ns]), "SIGKILL");
    ip(["netns", "del", ns]);
  }
}

/** Running (a zombie waiting for a parent that may never reap it counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
