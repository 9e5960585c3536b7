import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { ovnKubernetesReleased } from "@netstress/testbed/sample-ext/suites.ts";
import { NETSTRESS_BIN } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { oteConformance } from "./ote-conformance.ts";

let dir: { path: string; remove: () => Promise<void> };
let netstressExt: string;
let sample: string;

beforeAll(async () => {
  dir = await tempDir();
  // `netstress ext` as a binary of its own, the way a runner would be handed it.
  netstressExt = join(dir.path, "netstress-network-tests-ext");
  await writeFile(netstressExt, `#!/bin/sh\nexec "${process.execPath}" "${NETSTRESS_BIN}" ext "$@"\n`);
  await chmod(netstressExt, 0o755);
  sample = await writeSampleBinary({
    suite: ovnKubernetesReleased,
    path: join(dir.path, "ovn-kubernetes-tests-ext"),
  });
});
afterAll(() => dir.remove());

const withoutCluster = () => {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  return env;
};

describe("OTE conformance: netstress ext (netstress-network-tests)", () => {
  // Without a cluster every test still answers with a result (the upgrade test: skipped).
  oteConformance({
    binary: () => netstressExt,
    env: withoutCluster,
    runnable: (names) => names.find((n) => n.includes("[Upgrade]"))!,
  });
});

describe("OTE conformance: the sample extension", () => {
  oteConformance({
    binary: () => sample,
    env: () => ({ ...withoutCluster(), SAMPLE_EXT_TIME_SCALE: "0", SAMPLE_EXT_SEED: "conformance" }),
    runnable: (names) => names[0]!,
  });
});
