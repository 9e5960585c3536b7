import { spawn } from "node:child_process";
import type { StartProcess } from "./start-process.ts";

/** Node's spawn: a fork of this process, in a new process group, stdin closed. */
export const startWithNodeSpawn: StartProcess = (request, events) => {
  const { sandbox } = request;
  const child = spawn(request.binary, [...request.args], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: request.extraEnv ? { ...request.env, ...request.extraEnv } : request.env,
    ...(sandbox
      ? {
          cwd: sandbox.cwd,
          ...(sandbox.uid !== undefined ? { uid: sandbox.uid } : {}),
          ...(sandbox.gid !== undefined ? { gid: sandbox.gid } : {}),
        }
      : {}),
  });
  child.stdout.on("data", events.stdout);
  child.stderr.on("data", events.stderr);
  child.on("error", events.error);
  child.on("close", events.close);
  return {
    killGroup(signal) {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // The group is already gone.
      }
    },
  };
};
