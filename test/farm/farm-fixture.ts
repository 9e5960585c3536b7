import { randomUUID } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Redis } from "ioredis";
import pino from "pino";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import type { SampleTest } from "@netstress/testbed/sample-ext/suites.ts";
import { farmConfigSchema, type FarmConfig } from "../../src/farm/farm-config.ts";
import {
  createFarmExecutor,
  type FarmExecutor,
  type FarmExecutorOptions,
} from "../../src/farm/farm-executor.ts";
import { TESTS_CONTAINER } from "../../src/farm/build-iteration-job.ts";
import { LABELS } from "@netstress/core/kube/netstress-labels.ts";
import { createStreamSigner, formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import type { Shard } from "../../src/runs/shard-executor.ts";
import { DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { SPAWNER_EXECUTABLE } from "../../src/runner/process-spawner.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import {
  startFakeKubeApi,
  type FakeImage,
  type FakeKubeApi,
} from "@netstress/testbed/sim/start-fake-kube-api.ts";
import { NETSTRESS_BIN } from "../helpers/run-netstress.ts";

export const RUNNER_IMAGE = `registry.test/netstress/runner@sha256:${"d".repeat(64)}`;
export const PR_IMAGE = "registry.test/pr/ovn-kubernetes:pr7";
export const PR_DIGEST = `sha256:${"a".repeat(64)}`;
export const RELEASE_IMAGE = `registry.test/ocp/release@sha256:${"b".repeat(64)}`;
export const RELEASE_DIGEST = `sha256:${"b".repeat(64)}`;
export const STABLE = "[sig-network] pods reach services [Suite:openshift/conformance/parallel]";
export const REGRESSED =
  "[sig-network] egress keeps its source address [Suite:openshift/conformance/parallel]";

/**
 * The runner image as its pods run it: `netstress` in the runner container and the process
 * spawner (netstress-spawner, built beside its source) in the tests container.
 */
export const REAL_RUNNER_IMAGE: FakeImage = {
  commands: { netstress: [process.execPath, NETSTRESS_BIN], "netstress-spawner": [SPAWNER_EXECUTABLE] },
};

/** The pods' images: the runner (the real netstress) and two ovn-kubernetes builds, the PR's failing one test. */
export async function writeFarmImages(dir: string): Promise<Record<string, FakeImage>> {
  const build = async (name: string, regressed: boolean): Promise<FakeImage> => {
    const rootfs = join(dir, name);
    await mkdir(join(rootfs, "usr/bin"), { recursive: true });
    const tests: SampleTest[] = [
      { name: STABLE, durationMs: [1, 3] },
      {
        name: REGRESSED,
        durationMs: [1, 3],
        failureProbability: regressed ? 1 : 0,
        failureError: "source was the node IP",
      },
    ];
    await writeSampleBinary({
      suite: {
        component: "ovn-kubernetes",
        commit: "c".repeat(40),
        buildDate: "2026-01-01T00:00:00Z",
        tests,
      },
      path: join(rootfs, "usr/bin/ovn-kubernetes-tests-ext.gz"),
      gzip: true,
    });
    return { rootfs, commands: { cp: ["/bin/cp"] } };
  };
  return {
    [RUNNER_IMAGE]: REAL_RUNNER_IMAGE,
    [`registry.test/pr/ovn-kubernetes@${PR_DIGEST}`]: await build("pr", true),
    [RELEASE_IMAGE]: await build("released", false),
  };
}

export const PLAN: ExecutionPlan = {
  arch: "amd64",
  arms: [
    {
      arm: "pr",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/bot/binaries/pr/ovn-kubernetes-tests-ext.gz",
          source: "override",
          image: PR_IMAGE,
          digest: PR_DIGEST,
        },
      ],
    },
    {
      arm: "baseline",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/bot/binaries/released/ovn-kubernetes-tests-ext.gz",
          source: "released",
          image: RELEASE_IMAGE,
          digest: RELEASE_DIGEST,
        },
      ],
    },
  ],
};

export function shardOf(options: {
  runId?: string;
  first?: number;
  count: number;
  plan?: ExecutionPlan;
}): Shard {
  const runId = options.runId ?? randomUUID().replaceAll("-", "");
  const first = options.first ?? 0;
  const plan = options.plan ?? PLAN;
  return {
    runId,
    id: `${plan.arch}-${first}-${first + options.count - 1}`,
    arch: plan.arch,
    arms: plan.arms.map((a) => a.arm),
    iterations: { first, count: options.count },
    plan,
    seed: runId.slice(0, 16),
    parallel: 2,
    testTimeoutMs: 60_000,
    retries: 0,
  };
}

/** Pods finish quickly: the sample binaries' simulated durations are scaled down. */
export const POD_ENV = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  SAMPLE_EXT_TIME_SCALE: "0.01",
  // The runner passes its binaries only what it is told to beside the protocol's variables.
  NETSTRESS_BINARY_ENV: "SAMPLE_EXT_TIME_SCALE",
};

export async function startFarmClusters(options: {
  names: string[];
  images: Record<string, FakeImage>;
  arches?: ("amd64" | "arm64")[];
  maxRunning?: number;
}): Promise<FakeKubeApi[]> {
  return Promise.all(
    options.names.map(() =>
      startFakeKubeApi({
        images: options.images,
        baseEnv: POD_ENV,
        maxRunning: options.maxRunning ?? 2,
        bookmarkMs: 200,
      }),
    ),
  );
}

export function farmConfig(
  clusters: {
    name: string;
    api: FakeKubeApi;
    capacity?: number;
    arches?: ("amd64" | "arm64")[];
    capabilities?: string[];
    blocked?: boolean | string;
  }[],
  changes: { infraRetries?: number; leaseSeconds?: number; pendingSeconds?: number } = {},
): FarmConfig {
  return farmConfigSchema.parse({
    runner: { image: RUNNER_IMAGE },
    jobs: {
      infraRetries: changes.infraRetries ?? 2,
      ...(changes.pendingSeconds ? { pendingSeconds: changes.pendingSeconds } : {}),
    },
    placement: { leaseSeconds: changes.leaseSeconds ?? 30 },
    clusters: clusters.map((c) => ({
      name: c.name,
      kubeconfig: c.api.kubeconfigPath,
      namespace: "netstress",
      arches: c.arches ?? ["amd64"],
      capacity: c.capacity ?? 4,
      capabilities: c.capabilities ?? [],
      blocked: c.blocked ?? false,
    })),
  });
}

/** What the test farms' stream keys derive from. */
export const FARM_STREAM_SECRET = "farm-test-stream-secret";

/**
 * Signs stream lines as a pod's runner does, with the key in the file its args name, read at once
 * (as the runner reads it on start: a pod deleted meanwhile takes its volumes along).
 */
export async function runnerSigner(args: readonly string[]): Promise<(lines: readonly string[]) => string> {
  const path = args[args.indexOf("--stream-key-file") + 1]!;
  const sign = createStreamSigner(Buffer.from((await readFile(path, "utf8")).trim(), "hex"));
  return (lines) => lines.map(sign).join("");
}

export function farmExecutor(
  config: FarmConfig | (() => FarmConfig),
  redisUrl: string,
  changes: Partial<FarmExecutorOptions> & { prefix?: string } = {},
): { executor: FarmExecutor; redis: Redis; prefix: string; close(): Promise<void> } {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const prefix = changes.prefix ?? `farm-test-${randomUUID()}`;
  const executor = createFarmExecutor({
    config: typeof config === "function" ? config : () => config,
    testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
    redis,
    prefix,
    logger: pino({ level: process.env.FARM_TEST_LOG ?? "silent" }),
    streamSecret: FARM_STREAM_SECRET,
    apiTimeoutMs: 2000,
    watchIdleMs: 3000,
    pollMs: 200,
    ...changes,
  });
  return {
    executor,
    redis,
    prefix,
    async close() {
      executor.stop();
      await redis.quit();
    },
  };
}

export type SimulatedRun = "ok" | "cut" | { exitCode: number; stderr: string };

/**
 * A runner image whose container is simulated in-process (fault tests need many pods, and the real
 * runner costs a second of CPU each): after `delayMs` it writes, in the real framing, the records
 * the real runner would write for its iteration and its pod's arms — the PR's regressed test failing — or a cut
 * stream, or an error exit, as `behave` says for that iteration and attempt.
 */
export function simulatedRunner(options: {
  delayMs: number;
  behave?: (iteration: number, attempt: number) => SimulatedRun;
}): FakeImage {
  return {
    async simulate({ args, pod }) {
      const signed = await runnerSigner(args);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const iteration = Number(args[args.indexOf("--first-iteration") + 1]);
      const attempt = Number(pod.labels[LABELS.attempt]);
      const behaviour = options.behave?.(iteration, attempt) ?? "ok";
      if (typeof behaviour === "object")
        return { stdout: `${behaviour.stderr}\n`, exitCode: behaviour.exitCode };
      // Each pod runs its own arms: one, or both when they share a pod (no clusters under test).
      const arms = pod.labels[LABELS.arms] === "both" ? ["pr", "baseline"] : [pod.labels[LABELS.arms]];
      const records = simulatedRecords(iteration).filter((r) => arms.includes(r.arm));
      const stream = signed([
        ...records.map((r, i) => formatRecordLine(i, r)),
        formatStreamTrailer(records.length, "completed"),
      ]);
      if (behaviour === "cut") return { stdout: stream.slice(0, Math.floor(stream.length / 2)), exitCode: 0 };
      return { stdout: `noise\n${stream}`, exitCode: 0 };
    },
  };
}

export function simulatedRecords(iteration: number): ResultRecord[] {
  return (["pr", "baseline"] as const).flatMap((arm) =>
    [STABLE, REGRESSED].map((name): ResultRecord => ({
      name,
      lifecycle: "blocking",
      duration: 2,
      result: arm === "pr" && name === REGRESSED ? "failed" : "passed",
      output: "",
      arm,
      arch: "amd64",
      iteration,
      attempt: 0,
      component: "ovn-kubernetes",
      source: arm === "pr" ? "override" : "released",
    })),
  );
}

/**
 * Images for fault tests: the simulated runner and component images that copy nothing. The runner
 * image's tests container is `tests` when given, else a spawner that ends at once with exit 0 (a
 * simulated runner needs none).
 */
export function simulatedImages(runner: FakeImage, tests?: FakeImage["simulate"]): Record<string, FakeImage> {
  const component: FakeImage = { simulate: async () => ({ stdout: "", exitCode: 0 }) };
  const idle: NonNullable<FakeImage["simulate"]> = async () => ({ stdout: "", exitCode: 0 });
  return {
    [RUNNER_IMAGE]: {
      simulate: (container) =>
        container.container === TESTS_CONTAINER ? (tests ?? idle)(container) : runner.simulate!(container),
    },
    [`registry.test/pr/ovn-kubernetes@${PR_DIGEST}`]: component,
    [RELEASE_IMAGE]: component,
  };
}
