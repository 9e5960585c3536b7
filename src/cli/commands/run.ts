import { randomBytes } from "node:crypto";
import { mkdir, readFile, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { hostArch, parseArch, type Arch } from "@netstress/core/arch/arch.ts";
import { binaryEnvironment } from "../../runner/binary-environment.ts";
import {
  executionPlanSchema,
  type ExecutionPlan,
  type PlanComponent,
} from "@netstress/core/model/execution-plan.ts";
import { DEFAULT_RUN_SETTINGS, executeRun } from "../../runner/execute-run.ts";
import { withUpgradeTargets } from "../../runner/with-upgrade-targets.ts";
import { armSchema, clusterLabelSchema, payloadPullspecSchema } from "@netstress/core/model/result-record.ts";
import { STREAM_KEY_BYTES } from "../../farm/derive-stream-key.ts";
import { createStreamSigner, formatRecordLine, formatStreamTrailer } from "../../farm/record-stream.ts";
import { DEFAULT_STREAM_ARTIFACT_BYTES, streamArtifactFiles } from "../../farm/stream-artifact-files.ts";
import { parseCount, parseDuration, parseTagAssignment } from "../parse-options.ts";
import { printAnalysis } from "../print-analysis.ts";
import { addSelectionOptions, selectionFromFlags, type SelectionFlags } from "../selection-options.ts";
import { UsageError } from "../usage-error.ts";
import { addPayloadOptions, executionPlanFromPayload, type PayloadFlags } from "./plan.ts";

interface RunFlags extends Partial<PayloadFlags>, SelectionFlags {
  baseline?: boolean;
  binary: string[];
  baselineBinary: string[];
  plan?: string;
  arch?: string;
  iterations?: string;
  parallel?: string;
  networkParallel?: string;
  seed?: string;
  focus?: string;
  out?: string;
  timeout?: string;
  timeoutGrace: string;
  retries: string;
  firstIteration: string;
  streamRecords?: boolean;
  streamArtifactBytes: string;
  streamKeyFile?: string;
  spawnerSocket?: string;
  clusterLabel?: string;
  kubeconfigDir?: string;
  prCluster: string[];
  baselineCluster: string[];
  upgradeTarget: string[];
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerRunCommand(program: Command): void {
  addSelectionOptions(addPayloadOptions(program.command("run"), { payloadRequired: false }))
    .option("--baseline", "with --payload: run the released binaries as a baseline arm beside the PR arm")
    .description("Run component test binaries N times in parallel and record every execution")
    .option(
      "--binary <TAG=PATH>",
      "a component's test binary for the PR arm (repeatable; *.gz is unpacked)",
      collect,
      [],
    )
    .option(
      "--baseline-binary <TAG=PATH>",
      "the released binary of a tag the PR overrides; adds a baseline arm run side by side (repeatable)",
      collect,
      [],
    )
    .option("--plan <FILE>", "an execution plan (JSON) instead of --binary flags")
    .option("--arch <ARCH>", "architecture the binaries are for (default: this host's)")
    .option(
      "--iterations <N>",
      `how many times to run every test (default: the --suite's count, else ${DEFAULT_RUN_SETTINGS.iterations})`,
    )
    .option("--first-iteration <N>", "number of the first iteration (a build-farm pod runs its share)", "0")
    .option(
      "--stream-records",
      "also write each result record to stdout, framed for the build-farm collector; the exit status then says whether the stream is complete, not whether tests passed",
    )
    .option(
      "--stream-artifact-bytes <N>",
      "with --stream-records: at most this many bytes of artifact files (base64-framed) follow the records; files that do not fit are listed as omitted",
      String(DEFAULT_STREAM_ARTIFACT_BYTES),
    )
    .option(
      "--stream-key-file <FILE>",
      `with --stream-records: sign every stream line with the key in FILE (${STREAM_KEY_BYTES * 2} hex digits), chained so that the build-farm collector notices lines added, changed, dropped or reordered`,
    )
    .option(
      "--spawner-socket <PATH>",
      "start every test binary through the process spawner listening on this Unix socket (netstress-spawner --listen: a build-farm pod's tests container), never in this process's container; fails when it cannot be reached",
    )
    .option(
      "--parallel <P>",
      `how many tests run at once (default: the --suite's parallelism, else ${DEFAULT_RUN_SETTINGS.parallel})`,
    )
    .option(
      "--network-parallel <P>",
      "how many [sig-network] tests run at once (default: --parallel; openshift-tests uses half)",
    )
    .option("--seed <S>", "seed of the interleaving order (default: random, printed)")
    .option(
      "--cluster-label <ID>",
      "name the cluster under test these iterations run against; written as `cluster` on every record",
    )
    .option(
      "--pr-cluster <KUBECONFIG>",
      "a cluster under test of the PR arm, running the PR payload (read from its ClusterVersion); repeatable, the iterations spread over them",
      collect,
      [],
    )
    .option(
      "--baseline-cluster <KUBECONFIG>",
      "a cluster under test of the baseline arm, running the released payload; repeatable",
      collect,
      [],
    )
    .option(
      "--kubeconfig-dir <DIR>",
      "where the relative kubeconfig paths of the plan's clusters under test are (default: the current directory)",
    )
    .option(
      "--upgrade-target <ARM=PULLSPEC>",
      "the release an arm's [Upgrade] tests upgrade its clusters to (NETSTRESS_UPGRADE_TARGET; arm pr or baseline); each cluster is upgraded once, later iterations on it record the test as skipped; implies --include-disruptive; repeatable, once per arm",
      collect,
      [],
    )
    .option("--focus <TEXT>", "run only tests whose name contains TEXT")
    .option("--out <DIR>", "output directory (default: out/run-<time>)")
    .option("--timeout <DURATION>", "per-test timeout (default: the --suite's testTimeout, else 15m)")
    .option(
      "--timeout-grace <DURATION>",
      "after a test is interrupted (SIGINT at --timeout, SIGTERM on cancel), how long its cleanups may take before SIGABRT",
      "60s",
    )
    .addOption(
      new Option(
        "--retries <N>",
        "reruns of a failed test within its iteration (a pass makes it a flake)",
      ).default("1"),
    )
    .action(async (flags: RunFlags) => {
      process.exitCode = await runCommand(flags);
    });
}

async function runCommand(flags: RunFlags): Promise<number> {
  const parallel =
    flags.parallel === undefined ? undefined : parseCount("--parallel", flags.parallel, { max: 1024 });
  const networkParallel =
    flags.networkParallel === undefined
      ? undefined
      : parseCount("--network-parallel", flags.networkParallel, { max: parallel ?? 1024 });
  const selection = selectionFromFlags(flags);
  const planned = withUpgradeTargetFlags(
    await withClusterFlags(withKubeconfigDir(await planFromFlags(flags), flags.kubeconfigDir), flags),
    flags.upgradeTarget,
  );
  // Flags add to (and win over) the selection a --plan file carries.
  const plan = selection
    ? {
        ...planned,
        selection: {
          ...planned.selection,
          ...selection,
          ...(selection.environment || planned.selection?.environment
            ? { environment: { ...planned.selection?.environment, ...selection.environment } }
            : {}),
        },
      }
    : planned;
  const seed = flags.seed ?? randomBytes(6).toString("hex");
  const outDir = flags.out ?? join("out", `run-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  // Its real path, taken before any test runs: the artifact files streamed must lie under it (the
  // tests may share the directory, and could swap part of it for a symlink meanwhile).
  const realOutDir = flags.streamRecords
    ? await mkdir(outDir, { recursive: true }).then(() => realpath(outDir))
    : outDir;
  // Read before any binary starts and kept in this process alone: no child's environment or arguments.
  const sign = flags.streamKeyFile ? createStreamSigner(await readStreamKey(flags)) : undefined;
  const emit = (line: string) => (sign ? sign(line) : line);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(
      `\n${signal}: stopping; running tests are interrupted and not recorded, results so far are kept (again to quit now)\n`,
    );
    controller.abort(`cancelled by ${signal}`);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.stderr.write(`netstress run: seed ${seed}, output ${outDir}\n`);
  let streamed = 0;
  const streamArtifactBytes = parseCount("--stream-artifact-bytes", flags.streamArtifactBytes, {
    min: 0,
    max: 1024 * 1024 * 1024,
  });
  try {
    const { outcome, paths, manifest } = await executeRun({
      plan,
      outDir,
      ...(flags.iterations !== undefined ? { iterations: parseCount("--iterations", flags.iterations) } : {}),
      firstIteration: parseCount("--first-iteration", flags.firstIteration, { min: 0 }),
      ...(parallel !== undefined ? { parallel } : {}),
      networkParallel,
      seed,
      focus: flags.focus,
      ...(flags.clusterLabel !== undefined ? { clusterLabel: parseClusterLabel(flags.clusterLabel) } : {}),
      ...(flags.timeout !== undefined ? { timeoutMs: parseDuration("--timeout", flags.timeout) } : {}),
      interruptGraceMs: parseDuration("--timeout-grace", flags.timeoutGrace),
      retries: parseCount("--retries", flags.retries, { min: 0, max: 10 }),
      // The runner's own environment (a build-farm Job's runner.env, its secrets) is not the binaries'.
      env: binaryEnvironment(process.env, { extra: passedThrough(process.env.NETSTRESS_BINARY_ENV) }),
      signal: controller.signal,
      ...(flags.spawnerSocket !== undefined ? { spawnerSocket: flags.spawnerSocket } : {}),
      progressStream: process.stderr,
      onRecord: flags.streamRecords
        ? (record) => process.stdout.write(emit(formatRecordLine(streamed++, record)))
        : undefined,
    });
    if (flags.streamRecords) {
      // The binaries' artifacts ride the log too: the pod, and its files, are gone once collected.
      await streamArtifactFiles({
        outDir: realOutDir,
        components: manifest.components,
        budgetBytes: streamArtifactBytes,
        write: (line) => writeStdout(emit(line)),
      });
      process.stdout.write(emit(formatStreamTrailer(streamed, outcome.status)));
    }
    process.stdout.write(
      `${outcome.records} executions recorded (${outcome.done}/${outcome.total} tests, ${outcome.failed} failed)\n` +
        `results: ${paths.results}\njunit:   ${paths.junit}\nrun:     ${paths.manifest}\n`,
    );
    if (outcome.status === "cancelled") {
      process.stderr.write(
        `netstress: ${String(controller.signal.reason)}; partial results are in ${outDir}\n`,
      );
      return 2;
    }
    if (flags.streamRecords) return 0;
    if (plan.arms.some((a) => a.arm === "baseline")) {
      // Both arms ran side by side: the verdict is the comparison, not the raw failure count.
      const { analyzeRun } = await import("../../report/analyze-run.ts");
      const result = await analyzeRun({ pr: [paths.results], outDir });
      printAnalysis(result);
      return result.conclusion === "failure" ? 1 : 0;
    }
    const failing = plan.arms.some((a) => a.arm === "pr")
      ? outcome.blockingFailures.pr
      : outcome.blockingFailures.baseline;
    if (failing > 0) {
      process.stderr.write(`netstress: ${failing} execution(s) of blocking tests failed\n`);
      return 1;
    }
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** NETSTRESS_BINARY_ENV: comma-separated names of variables the test binaries get too. */
function passedThrough(list: string | undefined): string[] {
  const names = (list ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const bad = names.find((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (bad !== undefined)
    throw new UsageError(
      `NETSTRESS_BINARY_ENV names variables, separated by commas (e.g. SAMPLE_EXT_SEED,MY_SETTING), not "${bad}"`,
    );
  return names;
}

async function readStreamKey(flags: RunFlags): Promise<Buffer> {
  const path = flags.streamKeyFile!;
  if (!flags.streamRecords)
    throw new UsageError("--stream-key-file signs the record stream: add --stream-records");
  let text: string;
  try {
    text = (await readFile(path, "utf8")).trim();
  } catch (cause) {
    throw new UsageError(
      `--stream-key-file ${path}: cannot read it (${(cause as NodeJS.ErrnoException).code})`,
    );
  }
  // The file's text never goes into a message: it is the key.
  if (!new RegExp(`^[0-9a-f]{${STREAM_KEY_BYTES * 2}}$`).test(text))
    throw new UsageError(`--stream-key-file ${path}: expected ${STREAM_KEY_BYTES * 2} lowercase hex digits`);
  return Buffer.from(text, "hex");
}

/** Writes to stdout, waiting while its buffer is full (a pipe to the container runtime). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", resolve);
  });
}

async function planFromFlags(flags: RunFlags): Promise<ExecutionPlan> {
  const arch: Arch = flags.arch ? parseArchFlag(flags.arch) : hostArch();
  if (flags.payload) {
    if (flags.plan || flags.binary.length || flags.baselineBinary.length) {
      throw new UsageError("--payload and --plan/--binary/--baseline-binary exclude each other; use one");
    }
    return executionPlanFromPayload({ ...flags, payload: flags.payload, override: flags.override ?? [] });
  }
  if (flags.plan) {
    if (flags.binary.length || flags.baselineBinary.length) {
      throw new UsageError("--plan and --binary/--baseline-binary exclude each other; use one");
    }
    return readPlanFile(flags.plan);
  }
  if (flags.binary.length === 0) {
    throw new UsageError("nothing to run: give --binary TAG=PATH (repeatable) or --plan FILE");
  }
  const pr = toComponents("--binary", flags.binary);
  const baselineOverrides = toComponents("--baseline-binary", flags.baselineBinary);
  const prTags = new Set(pr.map((c) => c.component));
  const stray = baselineOverrides.find((c) => !prTags.has(c.component));
  if (stray) {
    throw new UsageError(
      `--baseline-binary ${stray.component}=… has no matching --binary ${stray.component}=…`,
    );
  }
  if (baselineOverrides.length === 0) return { arch, arms: [{ arm: "pr", components: pr }] };

  const overridden = new Map(baselineOverrides.map((c) => [c.component, c]));
  return {
    arch,
    arms: [
      {
        arm: "pr",
        components: pr.map((c) => ({ ...c, source: overridden.has(c.component) ? "override" : "released" })),
      },
      {
        arm: "baseline",
        components: pr.map((c) => ({ ...(overridden.get(c.component) ?? c), source: "released" })),
      },
    ],
  };
}

/**
 * The plan with the clusters under test given by --pr-cluster/--baseline-cluster: every arm of the
 * plan needs at least one, each one's payload read from its ClusterVersion.
 */
async function withClusterFlags(plan: ExecutionPlan, flags: RunFlags): Promise<ExecutionPlan> {
  const files = { pr: flags.prCluster, baseline: flags.baselineCluster };
  if (files.pr.length === 0 && files.baseline.length === 0) return plan;
  if (plan.clusters)
    throw new UsageError("--plan names clusters under test already; drop --pr-cluster/--baseline-cluster");
  for (const [arm, option] of [
    ["pr", "--pr-cluster"],
    ["baseline", "--baseline-cluster"],
  ] as const) {
    const inPlan = plan.arms.some((a) => a.arm === arm);
    if (inPlan && files[arm].length === 0)
      throw new UsageError(`the ${arm} arm needs its own clusters too: give ${option} KUBECONFIG`);
    if (!inPlan && files[arm].length > 0)
      throw new UsageError(`${option} names clusters for the ${arm} arm, which this run does not have`);
  }
  const { readKubeconfigClusters } = await import("../../clusters/read-kubeconfig-clusters.ts");
  const clusters = await readKubeconfigClusters({ files });
  for (const c of clusters)
    process.stderr.write(`netstress run: ${c.arm} arm on ${c.id} (${c.kubeconfig}), running ${c.payload}\n`);
  return { ...plan, clusters };
}

/** The plan with --upgrade-target's pullspec on its arm (see withUpgradeTargets). */
function withUpgradeTargetFlags(plan: ExecutionPlan, values: readonly string[]): ExecutionPlan {
  if (values.length === 0) return plan;
  const targets = new Map<string, string>();
  for (const text of values) {
    const eq = text.indexOf("=");
    const arm = text.slice(0, eq).trim();
    const pullspec = text.slice(eq + 1).trim();
    if (eq <= 0 || !armSchema.safeParse(arm).success || !payloadPullspecSchema.safeParse(pullspec).success)
      throw new UsageError(
        `--upgrade-target expects ARM=PULLSPEC with ARM pr or baseline (e.g. --upgrade-target pr=quay.io/org/release@sha256:…), got "${text}"`,
      );
    if (targets.has(arm)) throw new UsageError(`--upgrade-target names the ${arm} arm twice`);
    if (!plan.arms.some((a) => a.arm === arm))
      throw new UsageError(`--upgrade-target ${arm}=… names the ${arm} arm, which this run does not have`);
    targets.set(arm, pullspec);
  }
  return withUpgradeTargets(plan, (arm) => targets.get(arm));
}

/** The plan with its clusters' kubeconfig paths absolute (a relative one is under `dir`). */
function withKubeconfigDir(plan: ExecutionPlan, dir: string | undefined): ExecutionPlan {
  if (!plan.clusters) return plan;
  return {
    ...plan,
    clusters: plan.clusters.map((c) => ({ ...c, kubeconfig: resolve(dir ?? ".", c.kubeconfig) })),
  };
}

function toComponents(option: string, values: string[]): PlanComponent[] {
  const seen = new Set<string>();
  return values.map((text) => {
    const { tag, value } = parseTagAssignment(option, text);
    if (seen.has(tag)) throw new UsageError(`${option} names ${tag} twice`);
    seen.add(tag);
    return { component: tag, binary: value };
  });
}

function parseClusterLabel(text: string): string {
  const parsed = clusterLabelSchema.safeParse(text);
  if (!parsed.success)
    throw new UsageError(`--cluster-label ${JSON.stringify(text)}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

function parseArchFlag(text: string): Arch {
  try {
    return parseArch(text);
  } catch (error) {
    throw new UsageError(`--arch: ${(error as Error).message}`);
  }
}

async function readPlanFile(path: string): Promise<ExecutionPlan> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (cause) {
    throw new UsageError(`--plan ${path}: cannot read a JSON plan (${(cause as Error).message})`);
  }
  const parsed = executionPlanSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "plan"}: ${i.message}`).join("; ");
    throw new UsageError(`--plan ${path} is not a valid execution plan: ${problems}`);
  }
  return parsed.data;
}
