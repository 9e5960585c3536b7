import { chmod, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { networkTests } from "@netstress/network-extension/network-tests.ts";
import { PROBE_IMAGE, startLab } from "@netstress/testbed/lab/start-lab.ts";
import { elfArch } from "../../src/ote/elf-arch.ts";
import { oteResultSchema } from "../../src/ote/schemas.ts";
import { labAvailable } from "../lab/lab-available.ts";
import { runNode } from "../helpers/run-netstress.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { oteConformance, runBinary } from "./ote-conformance.ts";
import { labName } from "./run-ext.ts";

// The standalone build takes tens of seconds: built once here, and every check below uses it.
const BUILD = fileURLToPath(new URL("../../scripts/build-ext.mjs", import.meta.url));
let dir: { path: string; remove: () => Promise<void> };
let binary: string;
let buildOutput = "";

beforeAll(async () => {
  dir = await tempDir();
  const built = await runNode([BUILD, join(dir.path, "out")]);
  buildOutput = built.stdout + built.stderr;
  if (built.code !== 0) throw new Error(`build-ext failed:\n${buildOutput}`);
  binary = join(dir.path, "netstress-network-tests-ext");
  await writeFile(
    binary,
    gunzipSync(await readFile(join(dir.path, "out", "netstress-network-tests-ext.gz"))),
  );
  await chmod(binary, 0o755);
}, 300_000);
afterAll(() => dir?.remove());

const withoutCluster = () => {
  const env = { ...process.env };
  delete env.KUBECONFIG;
  return env;
};

describe("the standalone extension binary (netstress-network-tests-ext.gz)", () => {
  it("is an executable of this machine's architecture stamped with the commit it was built from", async () => {
    const handle = await open(binary);
    const header = new Uint8Array(64);
    await handle.read(header, 0, 64, 0);
    await handle.close();
    expect(elfArch(header)).toBe(hostArch());
    const { lines } = await runBinary({ binary, args: ["info"], env: withoutCluster() });
    const info = JSON.parse(lines.join("\n")) as { source: { commit: string; build_date: string } };
    expect(info.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(info.source.build_date).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  oteConformance({
    binary: () => binary,
    env: withoutCluster,
    runnable: (names) => names.find((n) => n.includes("[Upgrade]"))!,
  });

  it.skipIf(!labAvailable)(
    "runs an invariant against a lab with nothing but itself (its bundled Kubernetes client)",
    async () => {
      const lab = await startLab({ name: labName("extsea"), nodes: 2, handleSignals: false });
      try {
        const name = networkTests().find(
          (t) => t.kind === "invariant" && t.path === "pod-to-apiserver",
        )!.name;
        const { lines } = await runBinary({
          binary,
          args: ["run-test", "-n", name, "-o", "jsonl"],
          env: {
            ...process.env,
            KUBECONFIG: lab.kubeconfigPath,
            NETSTRESS_PROBE_IMAGE: PROBE_IMAGE,
            NETSTRESS_INVARIANT_DURATION_SECONDS: "3",
          },
          timeoutMs: 120_000,
        });
        const results = lines
          .filter((l) => l.startsWith("{"))
          .map((l) => oteResultSchema.parse(JSON.parse(l)));
        expect(results.map((r) => [r.name, r.result, r.error])).toEqual([[name, "passed", undefined]]);
      } finally {
        await lab.stop();
      }
    },
    150_000,
  );
});
