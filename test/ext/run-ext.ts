import { spawn } from "node:child_process";
import { oteResultSchema, type OteResult } from "../../src/ote/schemas.ts";
import { NETSTRESS_BIN } from "../helpers/run-netstress.ts";

/** `netstress ext run-test -n …` as the runner starts it: its own process, stdin closed. */
export function startExtRun(options: { names: string[]; env: NodeJS.ProcessEnv }): {
  pid: number;
  stderr: () => string;
  /** Resolves once stderr has shown `text`. */
  waitFor: (text: string, timeoutMs: number) => Promise<void>;
  done: Promise<{ code: number | null; results: OteResult[]; stdout: string }>;
  kill: (signal: NodeJS.Signals) => void;
} {
  const child = spawn(
    process.execPath,
    [NETSTRESS_BIN, "ext", "run-test", ...options.names.flatMap((n) => ["-n", n]), "-o", "jsonl"],
    { env: options.env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
    for (const w of waiters.filter((w) => stderr.includes(w.text))) w.resolve();
  });
  const done = new Promise<{ code: number | null; results: OteResult[]; stdout: string }>((resolve) => {
    child.on("close", (code) => {
      const results = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => oteResultSchema.parse(JSON.parse(l)));
      resolve({ code, results, stdout });
    });
  });
  return {
    pid: child.pid!,
    stderr: () => stderr,
    waitFor: (text, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        if (stderr.includes(text)) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`no "${text}" within ${timeoutMs} ms:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          text,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    done,
    kill: (signal) => child.kill(signal),
  };
}

/** A lab name of this process's own: the same test run from two checkouts at once must not meet. */
export function labName(prefix: string): string {
  return `${prefix}${(process.pid % 1296).toString(36).padStart(2, "0")}`;
}
