import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import type { BinarySource } from "@netstress/core/model/result-record.ts";
import { describeBinary } from "./describe-binary.ts";
import { rebuiltFromSameSource } from "./rebuilt-from-same-source.ts";

/**
 * With both arms' binaries extracted, asks each PR binary whose image differs from the baseline's
 * of its tag, and that one, for their `info` source: the same clean commit carries the released
 * tests, so the PR arm runs it as released; another commit or a dirty tree make it the PR's,
 * whatever the image labels said. When either binary's `info` fails, the labels' verdict stands.
 */
export async function settleRebuiltOverrides(options: {
  plan: ExecutionPlan;
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
}): Promise<ExecutionPlan> {
  const { plan, cacheDir } = options;
  const baseline = new Map(
    (plan.arms.find((a) => a.arm === "baseline")?.components ?? []).map((c) => [c.component, c]),
  );
  const describe = (binary: string) =>
    describeBinary({
      binary,
      cacheDir,
      arch: plan.arch,
      images: false,
      ...(options.env ? { env: options.env } : {}),
    });
  const arms = await Promise.all(
    plan.arms.map(async (arm) =>
      arm.arm !== "pr"
        ? arm
        : {
            ...arm,
            components: await Promise.all(
              arm.components.map(async (component) => {
                const released = baseline.get(component.component);
                if (!released || released.digest === component.digest) return component;
                // Binaries not fetched cannot be asked: the labels' verdict stands.
                if (!component.binary || !released.binary) return component;
                const [own, theirs] = await Promise.all([
                  describe(component.binary),
                  describe(released.binary),
                ]);
                // A binary that cannot say where it comes from leaves the labels' verdict.
                if (!own.source || !theirs.source) return component;
                const source: BinarySource = rebuiltFromSameSource(own, theirs) ? "released" : "override";
                return { ...component, source };
              }),
            ),
          },
    ),
  );
  return { ...plan, arms };
}
