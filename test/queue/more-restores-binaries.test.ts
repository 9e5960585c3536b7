import { readFile, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSampleBinaries } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { materializePlan } from "../../src/payload/materialize-plan.ts";
import { resolvePlan } from "../../src/payload/resolve-plan.ts";
import { createPayloadPlanResolver } from "../../src/queue/payload-plan-resolver.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { runRecord } from "../helpers/github-run-deps.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const arch = hostArch();
let registry: RegistryServer;
let dir: Awaited<ReturnType<typeof tempDir>>;
let plan: ExecutionPlan;
let released: Buffer;

beforeAll(async () => {
  dir = await tempDir("netstress-more-restore-");
  registry = await startRegistry();
  const binaries = await buildSampleBinaries({ outDir: join(dir.path, "built"), gzip: true });
  released = await readFile(binaries.released["ovn-kubernetes"]);
  const { payload } = await pushPayload({
    url: registry.url,
    host: registry.host,
    repository: "ocp/release",
    name: "4.20.0-0.nightly-2026-11-30-000000",
    arches: [arch],
    components: [{ tag: "ovn-kubernetes", binary: released }],
  });
  // The parent run's plan, made the way the resolve stage makes it.
  const cacheDir = join(dir.path, "cache");
  const client = await createRegistry({ cacheDir });
  plan = await materializePlan({
    plan: await resolvePlan({ payload, arch, registry: client }),
    cacheDir,
    registry: client,
  });
});
afterAll(async () => {
  await registry?.stop();
  await dir?.remove();
});

describe("a `more` run reusing its parent's plan", () => {
  it("fetches binaries that retention swept again, by digest, to the same path", async () => {
    const binary = plan.arms[0]!.components[0]!.binary;
    // Retention swept both the binaries and the registry cache since the parent ran.
    await rm(dirname(dirname(binary)), { recursive: true });
    await rm(join(dir.path, "cache"), { recursive: true, force: true });
    const cacheDir = join(dir.path, "cache");
    const resolver = createPayloadPlanResolver({ cacheDir, registry: await createRegistry({ cacheDir }) });

    const resolution = await resolver({ run: runRecord({ plan }), signal: AbortSignal.timeout(60_000) });

    expect(resolution).toEqual({ kind: "ready", plan });
    expect(await readFile(binary)).toEqual(released);
  });

  it("ends with a reason naming the component when its image is gone from the registry", async () => {
    const component = plan.arms[0]!.components[0]!;
    await rm(dirname(dirname(component.binary)), { recursive: true, force: true });
    const gone = {
      ...plan,
      arms: [
        {
          arm: "pr" as const,
          components: [{ ...component, image: `${registry.host}/ocp/deleted:component-ovn-kubernetes` }],
        },
      ],
    };
    const cacheDir = join(dir.path, "cache-gone");
    const resolver = createPayloadPlanResolver({ cacheDir, registry: await createRegistry({ cacheDir }) });

    const resolution = await resolver({
      run: runRecord({ plan: gone }),
      signal: AbortSignal.timeout(60_000),
    });

    expect(resolution).toMatchObject({ kind: "unavailable", conclusion: "failure" });
    expect(resolution.kind === "unavailable" && resolution.reason).toContain("ocp/deleted");
    expect(await stat(component.binary).catch(() => undefined)).toBeUndefined();
  });
});
