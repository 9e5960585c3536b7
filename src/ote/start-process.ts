import type { BinarySandbox } from "./binary-sandbox.ts";

/** What invokeBinary asks for: a binary started in its own process group, stdin closed. */
export interface StartRequest {
  binary: string;
  args: readonly string[];
  /** Often the same object for many requests (a starter may cache what it derives from it). */
  env: NodeJS.ProcessEnv;
  /** Variables of this process alone, on top of `env`. */
  extraEnv?: Readonly<Record<string, string>>;
  sandbox?: BinarySandbox;
}

/** What a started process reports; exactly one of `close`, `error` and `lost` ends it. */
export interface ProcessEvents {
  stdout: (chunk: Buffer) => void;
  stderr: (chunk: Buffer) => void;
  /** It exited and both its outputs ended. */
  close: (exitCode: number | null, signal: NodeJS.Signals | null) => void;
  /** It could not be started (ENOENT, EACCES, ENOEXEC …). */
  error: (error: NodeJS.ErrnoException) => void;
  /** Whatever was watching it went away, so how it ended is unknown; its group has been killed. */
  lost: (reason: string) => void;
}

export interface StartedProcess {
  /** Signals the whole process group; a no-op once the group is gone. */
  killGroup: (signal: NodeJS.Signals) => void;
}

/**
 * Starts a binary for invokeBinary: Node's own spawn (startWithNodeSpawn) unless the runner has a
 * cheaper way (its native process spawner).
 */
export type StartProcess = (request: StartRequest, events: ProcessEvents) => StartedProcess;
