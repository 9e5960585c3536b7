import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const PROBE = {
  reads: "[sig-network] probe reads its cluster's kubeconfig",
  slow: "[sig-network] probe talks to its cluster for a while",
} as const;

/**
 * An OTE binary whose tests report what they got of their cluster under test: the KUBECONFIG
 * path, the file's mode and its current-context (which cluster), and whether any variable of
 * their environment holds kubeconfig text. The slow test takes `slowMs` (to lose its cluster
 * under it), and appends its KUBECONFIG path to `startedLog` as it starts (so a test can lose the
 * cluster once the slow test runs on it). Each test fails when KUBECONFIG is not a readable file.
 */
export async function writeKubeconfigProbeBinary(
  dir: string,
  options: { slowMs?: number; startedLog?: string } = {},
): Promise<string> {
  const path = join(dir, "probe-tests-ext");
  const script = `#!${process.execPath}
const { appendFileSync, readFileSync, statSync } = require("node:fs");
const [command, ...rest] = process.argv.slice(2);
const tests = ${JSON.stringify(Object.values(PROBE))};
const out = (line) => process.stdout.write(line + "\\n");
if (command === "info") {
  out(JSON.stringify({ apiVersion: "v1.1", source: { commit: "${"0".repeat(40)}", build_date: "2026-01-01T00:00:00Z", git_tree_state: "clean" }, component: { product: "openshift", type: "payload", name: "probe" }, suites: [] }));
} else if (command === "list") {
  for (const name of tests) out(JSON.stringify({ name, labels: {}, resources: { isolation: {} }, source: "openshift:payload:probe", lifecycle: "blocking", environmentSelector: {} }));
} else if (command === "run-test") {
  const name = rest[rest.indexOf("-n") + 1];
  const started = new Date();
  const finish = () => {
    const path = process.env.KUBECONFIG;
    const report = { kubeconfig: path ?? null, textInEnv: Object.values(process.env).some((v) => /current-context|clusters:/.test(v ?? "")) };
    let error;
    try {
      report.mode = (statSync(path).mode & 0o777).toString(8);
      report.context = /current-context: *(\\S+)/.exec(readFileSync(path, "utf8"))?.[1] ?? null;
    } catch (e) {
      error = "no kubeconfig file: " + e.message;
    }
    const stamp = (d) => d.toISOString().replace("T", " ").replace("Z", "000 UTC");
    out(JSON.stringify({ name, lifecycle: "blocking", duration: Date.now() - started.getTime(), startTime: stamp(started), endTime: stamp(new Date()), result: error ? "failed" : "passed", output: JSON.stringify(report), ...(error ? { error } : {}) }));
  };
  const startedLog = ${JSON.stringify(options.startedLog ?? null)};
  if (name === tests[1] && startedLog) appendFileSync(startedLog, (process.env.KUBECONFIG ?? "") + "\\n");
  setTimeout(finish, name === tests[1] ? ${options.slowMs ?? 0} : 0);
} else {
  process.exit(2);
}
`;
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

/**
 * A kubeconfig of a running fake API (which answers the runner's environment discovery) whose
 * context is renamed after the cluster, so that the probe's report says which cluster it got.
 */
export function probeKubeconfig(name: string, fakeApiKubeconfig: string): string {
  return fakeApiKubeconfig.replace(/\bfake\b/g, name);
}
