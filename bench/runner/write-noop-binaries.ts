/**
 * Writes the two no-op OTE binaries the scheduling-overhead benchmark runs: the project's sample
 * engine with one instant test (a Node process per test, like real extension binaries that start a
 * runtime) and a /bin/sh one (the cheapest process there is, so runner overhead shows most).
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";

export const NOOP_TEST = "[sig-network] no-op";

const dir = process.argv[2];
if (!dir) throw new Error("usage: write-noop-binaries.ts DIR");
await mkdir(dir, { recursive: true });
await writeSampleBinary({
  suite: {
    component: "noop",
    commit: "0".repeat(40),
    buildDate: "2026-01-01T00:00:00Z",
    tests: [{ name: NOOP_TEST, durationMs: [0, 0] }],
  },
  path: join(dir, "node-noop-tests-ext"),
});
const result = JSON.stringify({
  name: NOOP_TEST,
  lifecycle: "blocking",
  duration: 0,
  startTime: "2026-01-01 00:00:00.000000 UTC",
  endTime: "2026-01-01 00:00:00.000000 UTC",
  result: "passed",
  output: "",
});
const info = JSON.stringify({
  apiVersion: "v1.1",
  source: { commit: "0", build_date: "", git_tree_state: "clean" },
  component: { product: "openshift", type: "payload", name: "noop" },
  suites: [],
});
const spec = JSON.stringify({ name: NOOP_TEST, labels: {}, source: "noop", lifecycle: "blocking" });
const sh = `#!/bin/sh
case "$1" in
  info) echo '${info}' ;;
  list) echo '${spec}' ;;
  run-test) echo '${result}' ;;
esac
`;
await writeFile(join(dir, "sh-noop-tests-ext"), sh);
await chmod(join(dir, "sh-noop-tests-ext"), 0o755);
