import { chmod, writeFile } from "node:fs/promises";

/** How a fixture test behaves when `run-test` runs it. */
export interface FixtureTest {
  result?: "passed" | "failed" | "skipped";
  /** How long it runs before reporting; `"forever"` hangs until it is signalled. */
  sleepMs?: number | "forever";
  output?: string;
  error?: string;
}

export interface ProtocolFixture {
  /** The `info` document, printed as given. */
  info: Record<string, unknown>;
  /** The `list -o jsonl` output, one string per line, printed as given (so it may be malformed). */
  listLines: string[];
  /** Behaviour of `run-test` per name; an unknown name fails. */
  tests?: Record<string, FixtureTest>;
  /** The `images` output, printed as JSON (`null` as Go prints a nil list); without it the command is unknown (exit 1). */
  images?: unknown[] | null;
}

/**
 * An OTE binary (a Node script) that prints exactly the protocol documents a test gives it, so a
 * test can feed the runner what a real framework build emits (lifecycle "", suites with settings,
 * odd spec fields) without a framework of its own. `run-test` reports each name after its sleep,
 * with the framework's time stamps and the spec's lifecycle as listed; a signal ends it without a result, as an interrupted binary
 * that cannot report does.
 */
export async function writeProtocolFixture(path: string, fixture: ProtocolFixture): Promise<string> {
  const script = `#!/usr/bin/env node
const fixture = ${JSON.stringify(fixture)};
const stamp = (d) => d.toISOString().slice(0, 10) + " " + d.toISOString().slice(11, 23) + "000 UTC";
const [command, ...args] = process.argv.slice(2);
const lifecycles = {};
for (const line of fixture.listLines) {
  try { const spec = JSON.parse(line); lifecycles[spec.name] = spec.lifecycle; } catch {}
}
const print = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
async function main() {
  if (command === "info") return print(fixture.info);
  if (command === "list") return process.stdout.write(fixture.listLines.map((l) => l + "\\n").join(""));
  if (command === "images" && fixture.images !== undefined) return print(fixture.images);
  if (command !== "run-test") { process.stderr.write("unknown command " + command + "\\n"); process.exit(1); }
  const names = [];
  for (let i = 0; i < args.length; i++) if (args[i] === "-n" || args[i] === "--names") names.push(args[++i]);
  for (const name of names) {
    const test = (fixture.tests ?? {})[name] ?? { result: "failed", error: "no such test" };
    const start = new Date();
    if (test.sleepMs === "forever") await new Promise(() => setInterval(() => {}, 1 << 30));
    await new Promise((r) => setTimeout(r, test.sleepMs ?? 0));
    const end = new Date();
    print({ name, lifecycle: lifecycles[name] ?? "", duration: end - start, startTime: stamp(start), endTime: stamp(end),
      result: test.result ?? "passed", output: test.output ?? "", ...(test.error ? { error: test.error } : {}) });
  }
}
main();
`;
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

/** An `info` document of a component, with the given suites. */
export function fixtureInfo(component: string, suites: unknown[] = []): Record<string, unknown> {
  return {
    apiVersion: "v1.1",
    source: { commit: "f".repeat(40), build_date: "2026-01-01T00:00:00Z", git_tree_state: "clean" },
    component: { product: "openshift", type: "payload", name: component },
    suites,
  };
}

/** One `list` line for a spec as the framework prints it (labels a set, lifecycle as given). */
export function fixtureSpec(name: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    name,
    labels: {},
    resources: { isolation: {} },
    source: "openshift:payload:fixture",
    lifecycle: "blocking",
    environmentSelector: {},
    ...fields,
  });
}
