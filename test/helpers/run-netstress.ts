import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const NETSTRESS_BIN = fileURLToPath(new URL("../../bin/netstress.js", import.meta.url));

export interface NetstressResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  onSpawn?: (child: ChildProcess) => void;
}

/** Runs the real `netstress` executable as a user would, with stdin closed. */
export function runNetstress(args: string[], options: RunOptions = {}): Promise<NetstressResult> {
  return runNode([NETSTRESS_BIN, ...args], options);
}

/** Runs a Node script (this Node) with stdin closed and collects its exit code and output. */
export function runNode(args: string[], options: RunOptions = {}): Promise<NetstressResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: options.env ?? process.env,
      cwd: options.cwd,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    options.onSpawn?.(child);
  });
}
