import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { oteInfoSchema, oteResultSchema, oteSpecSchema } from "../../src/ote/schemas.ts";

/** One run of a binary: stdout lines, exit status; `stdin` is written and closed (else closed at once). */
export function runBinary(options: {
  binary: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  stdin?: string;
  timeoutMs?: number;
}): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.binary, options.args, { env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, lines: out.split("\n").filter((l) => l.trim() !== ""), stderr: err });
    });
    child.stdin.end(options.stdin ?? "");
  });
}

const jsonLines = (lines: string[]) =>
  lines.filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l) as unknown);

/**
 * What any openshift-tests-extension binary must do for openshift-tests (and this project's
 * runner) to use it: `info` as one JSON document of the extension format; `list -o jsonl` one spec
 * a line, unique names, environment flags accepted; `run-test -n NAME -o jsonl` and names on stdin
 * each give exactly that test's result, in the result format; an unknown name gets no result.
 * Registers its checks in the calling describe block.
 */
export function oteConformance(options: {
  binary: () => string;
  env: () => NodeJS.ProcessEnv;
  /** A test that can run here (quickly) for the run-test checks. */
  runnable: (names: string[]) => string;
  timeoutMs?: number;
}): void {
  const run = (args: string[], stdin?: string) =>
    runBinary({
      binary: options.binary(),
      args,
      env: options.env(),
      ...(stdin !== undefined ? { stdin } : {}),
      timeoutMs: options.timeoutMs,
    });

  it("prints its identity and suites with info", async () => {
    const { code, lines } = await run(["info"]);
    expect(code).toBe(0);
    const text = lines.join("\n");
    const info = oteInfoSchema.parse(JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)));
    expect(info.apiVersion).toMatch(/^v\d+\.\d+$/);
    expect(info.component.name).not.toBe("");
    for (const suite of info.suites) expect(suite.name).not.toBe("");
  });

  it("lists its tests one spec a line, each name once", async () => {
    const { code, lines } = await run(["list", "-o", "jsonl"]);
    expect(code).toBe(0);
    const specs = jsonLines(lines).map((s) => oteSpecSchema.parse(s));
    expect(specs.length).toBeGreaterThan(0);
    expect(new Set(specs.map((s) => s.name)).size).toBe(specs.length);
    for (const raw of jsonLines(lines)) expect(typeof (raw as { labels: unknown }).labels).toBe("object");
  });

  it("accepts the environment flags openshift-tests passes to list", async () => {
    const { code, lines } = await run([
      "list",
      "-o",
      "jsonl",
      "--platform=aws",
      "--network",
      "ovn",
      "--topology=ha",
      "--architecture=amd64",
    ]);
    expect(code).toBe(0);
    for (const s of jsonLines(lines)) oteSpecSchema.parse(s);
  });

  it("runs a test named with -n and prints its result", async () => {
    const names = jsonLines((await run(["list", "-o", "jsonl"])).lines).map(
      (s) => (s as { name: string }).name,
    );
    const name = options.runnable(names);
    const { lines } = await run(["run-test", "-n", name, "-o", "jsonl"]);
    const results = jsonLines(lines).map((r) => oteResultSchema.parse(r));
    expect(results.map((r) => r.name)).toEqual([name]);
    expect(results[0]!.startTime).toBeDefined();
  });

  it("runs tests named on stdin, one a line", async () => {
    const names = jsonLines((await run(["list", "-o", "jsonl"])).lines).map(
      (s) => (s as { name: string }).name,
    );
    const name = options.runnable(names);
    const { lines } = await run(["run-test", "-o", "jsonl"], `${name}\n`);
    expect(jsonLines(lines).map((r) => oteResultSchema.parse(r).name)).toEqual([name]);
  });

  it("gives no result for a name it does not have", async () => {
    const unknown = "[sig-network] no test has this name";
    const { lines } = await run(["run-test", "-n", unknown, "-o", "jsonl"]);
    const results = jsonLines(lines).filter((r) => (r as { name?: string }).name === unknown);
    expect(results).toEqual([]);
  });
}
