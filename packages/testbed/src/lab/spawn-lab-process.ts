import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LabError } from "./lab-error.ts";

/** The `netstress` entry point, which the lab's own processes and pods run (`node bin/netstress.js …`). */
export const NETSTRESS_BIN = fileURLToPath(new URL("../../../../bin/netstress.js", import.meta.url));

export interface LabProcess {
  child: ChildProcess;
  /** Resolves once the process has exited. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `netstress <args…>` inside a network namespace (`ip netns exec`, argv only) and resolves
 * once it prints a JSON log line whose `msg` is `ready`; its log lines go to `log`. A LabError
 * with the process's last output when it exits first or is not ready within `timeoutMs`.
 */
export async function spawnLabProcess(options: {
  netns: string;
  args: string[];
  env: Record<string, string>;
  log: (line: string) => void;
  timeoutMs?: number;
  /** Open a Node IPC channel to it (`process.send`; `ip netns exec` hands the descriptor on). */
  ipc?: boolean;
}): Promise<LabProcess> {
  const child = spawn(
    "ip",
    ["netns", "exec", options.netns, process.execPath, NETSTRESS_BIN, ...options.args],
    {
      env: options.env,
      stdio: options.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let tail = "";
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new LabError(
            `netstress ${options.args.join(" ")} in ${options.netns} was not ready in time: ${tail}`,
            {
              code: "LabNotReady",
            },
          ),
        ),
      options.timeoutMs ?? 30_000,
    );
    let partial = "";
    const onData = (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        options.log(line);
        tail = `${tail}\n${line}`.slice(-2000);
        if (line.includes('"msg":"ready"')) {
          clearTimeout(timer);
          resolve();
        }
      }
    };
    child.stdout!.setEncoding("utf8").on("data", onData);
    child.stderr!.setEncoding("utf8").on("data", onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(
        new LabError(
          `netstress ${options.args.join(" ")} in ${options.netns} exited (${child.exitCode ?? child.signalCode}): ${tail}`,
          {
            code: "LabCommandFailed",
          },
        ),
      );
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
