import type { V1Container, V1EnvVar, V1Job, V1SecurityContext, V1Volume } from "@kubernetes/client-node";
import type { TestBinaryRegistry } from "../payload/test-binary-registry.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { jobSecretName, STREAM_KEY_ITEM } from "./build-job-secret.ts";
import type { ClusterConfig, FarmConfig } from "./farm-config.ts";
import { FarmError } from "./farm-error.ts";
import { jobLabels, jobName, PLAN_ANNOTATION, type IterationKey } from "./job-identity.ts";
import { RUN_ID_ANNOTATION } from "@netstress/core/kube/netstress-labels.ts";
import { BINARY_DIR, planForPod, WORK_DIR } from "./pod-plan.ts";
import type { Shard } from "../runs/shard-executor.ts";

export const RUNNER_CONTAINER = "runner";
/** Where the test binaries run, started by the process spawner: out of the runner's reach. */
export const TESTS_CONTAINER = "tests";
/** The process spawner's command in the runner image (deploy/Containerfile puts it on the PATH). */
const SPAWNER_COMMAND = "netstress-spawner";
/** The spawner's socket, in a volume only the two containers share. */
const SPAWNER_DIR = "/var/run/netstress-spawner";
const SPAWNER_SOCKET = `${SPAWNER_DIR}/socket`;
/**
 * How long the spawner waits for the runner to connect: the runner tries for 60 s from its start,
 * so a runner that failed before connecting does not keep the pod until its deadline.
 */
const SPAWNER_ACCEPT_TIMEOUT_SECONDS = 180;
const PLAN_DIR = "/etc/netstress/plan";
const CLUSTER_UNDER_TEST_DIR = "/var/run/secrets/cluster-under-test";
/** The runner's stream key (see buildJobSecret): in the runner's container only. */
const STREAM_KEY_DIR = "/var/run/secrets/netstress-stream";
/** Annotations of one object may hold 256 KiB; leave room for the rest. */
const MAX_PLAN_BYTES = 200 * 1024;
const SEED = /^[A-Za-z0-9][\w.-]{0,63}$/;
const BINARY_COPY_RESOURCES = {
  requests: { cpu: "50m", memory: "64Mi" },
  limits: { cpu: "500m", memory: "256Mi" },
};
/**
 * The runner's container: Node reading the plan, relaying the spawner's replies and streaming
 * records. What the tests need is the tests container's (runner.resources).
 */
const RUNNER_RESOURCES = {
  requests: { cpu: "100m", memory: "256Mi" },
  limits: { cpu: "1", memory: "1Gi" },
};

// The "restricted" Pod Security Standard, for every container.
const RESTRICTED: V1SecurityContext = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

/**
 * The Job that runs one iteration of a shard on a cluster. One Job per iteration (not an Indexed
 * Job): each iteration is placed, retried and collected on its own, so shards of a run spread
 * across clusters and a lost pod costs one iteration. Nothing the user wrote reaches a shell: the
 * runner gets an args array, the plan arrives as a file through the downward API, and PR overrides
 * as EXTENSIONS_PAYLOAD_OVERRIDE_<tag> variables.
 */
export function buildIterationJob(options: {
  config: FarmConfig;
  cluster: ClusterConfig;
  shard: Shard;
  key: IterationKey;
  /** The bot deployment, for the instance label. */
  instance: string;
  pr?: number;
  testBinaries: TestBinaryRegistry;
  /**
   * The clusters under test of this attempt, one per arm: their kubeconfigs are in the Job's
   * Secret (buildJobSecret), mounted, and the pod's plan names each by the file's path.
   */
  clustersUnderTest?: { arm: Arm; id: string; payload: string }[];
}): V1Job {
  const { config, cluster, shard, key } = options;
  const { runner, jobs } = config;
  const name = jobName(key);
  const leased = options.clustersUnderTest;
  const forPod = planForPod({ plan: shard.plan, testBinaries: options.testBinaries });
  const copies = forPod.copies;
  const plan = leased
    ? {
        ...forPod.plan,
        // Relative to --kubeconfig-dir, where the Secret is mounted (one file per arm).
        clusters: leased.map((c) => ({ ...c, kubeconfig: c.arm })),
      }
    : forPod.plan;
  const planJson = JSON.stringify(plan);
  if (Buffer.byteLength(planJson) > MAX_PLAN_BYTES) {
    throw new FarmError(
      "invalid-shard",
      `the shard's plan is ${Math.ceil(Buffer.byteLength(planJson) / 1024)} KiB; a pod carries at most ${MAX_PLAN_BYTES / 1024} KiB (narrow the tests)`,
    );
  }
  if (!SEED.test(shard.seed))
    throw new FarmError("invalid-shard", "the seed must be letters, digits, '.', '_', '-'");
  if (shard.focus !== undefined && (/[\p{Cc}]/u.test(shard.focus) || shard.focus.length > 500)) {
    throw new FarmError(
      "invalid-shard",
      "the focus text may not contain control characters or exceed 500 characters",
    );
  }

  const labels = jobLabels({
    ...key,
    shardId: shard.id,
    instance: options.instance,
    ...(options.pr !== undefined ? { pr: options.pr } : {}),
  });
  const overrides: V1EnvVar[] = plan.arms
    .filter((arm) => arm.arm === "pr")
    .flatMap((arm) => arm.components)
    .filter((c) => c.source === "override" && c.image)
    .map((c) => ({ name: `EXTENSIONS_PAYLOAD_OVERRIDE_${c.component}`, value: c.image! }));
  // Leased clusters replace the configured one; each arm's tests get theirs through the plan.
  const cut = leased ? undefined : runner.clusterUnderTest;
  const secretName = leased ? jobSecretName(name) : cut?.secretName;
  const env: V1EnvVar[] = [
    ...overrides,
    // The network extension's probe pods run what the Job runs: the reviewed image, by digest.
    { name: "NETSTRESS_PROBE_IMAGE", value: runner.image },
    ...(cut ? [{ name: "KUBECONFIG", value: `${CLUSTER_UNDER_TEST_DIR}/${cut.key}` }] : []),
    ...runner.env.map((e) =>
      e.secretKeyRef
        ? { name: e.name, valueFrom: { secretKeyRef: e.secretKeyRef } }
        : { name: e.name, value: e.value! },
    ),
  ];
  const args = [
    "run",
    "--plan",
    `${PLAN_DIR}/plan.json`,
    "--out",
    `${WORK_DIR}/out`,
    "--iterations",
    "1",
    "--first-iteration",
    String(key.iteration),
    "--parallel",
    String(shard.parallel),
    ...(shard.networkParallel ? ["--network-parallel", String(shard.networkParallel)] : []),
    "--seed",
    shard.seed,
    "--timeout",
    `${shard.testTimeoutMs}ms`,
    "--timeout-grace",
    `${jobs.timeoutGraceSeconds}s`,
    "--retries",
    String(shard.retries),
    "--stream-records",
    "--stream-key-file",
    `${STREAM_KEY_DIR}/key`,
    "--spawner-socket",
    SPAWNER_SOCKET,
    ...(leased ? ["--kubeconfig-dir", CLUSTER_UNDER_TEST_DIR] : []),
    ...(shard.focus !== undefined ? [`--focus=${shard.focus}`] : []),
  ];
  const binariesMount = { name: "binaries", mountPath: BINARY_DIR };
  // Both containers see the binaries, the work directory (unpacked binaries, the artifacts the
  // tests write), the kubeconfigs and the spawner's socket at the same paths: whatever path the
  // runner puts in a spawn request exists where the test runs. The key and the plan are the
  // runner's alone, and so is its /tmp.
  const sharedMounts = [
    { name: "work", mountPath: WORK_DIR },
    { ...binariesMount, readOnly: true },
    ...(secretName
      ? [{ name: "cluster-under-test", mountPath: CLUSTER_UNDER_TEST_DIR, readOnly: true }]
      : []),
    { name: "spawner", mountPath: SPAWNER_DIR },
  ];
  const initContainers: V1Container[] = copies.map((copy, index) => ({
    name: `binary-${index}`,
    image: copy.image,
    imagePullPolicy: "IfNotPresent",
    command: ["cp", "--", copy.source, `${BINARY_DIR}/${copy.file}`],
    volumeMounts: [binariesMount],
    resources: BINARY_COPY_RESOURCES,
    securityContext: RESTRICTED,
  }));
  const volumes: V1Volume[] = [
    { name: "work", emptyDir: {} },
    { name: "binaries", emptyDir: {} },
    { name: "tmp", emptyDir: {} },
    { name: "runner-tmp", emptyDir: {} },
    { name: "spawner", emptyDir: {} },
    {
      name: "plan",
      downwardAPI: {
        items: [{ path: "plan.json", fieldRef: { fieldPath: `metadata.annotations['${PLAN_ANNOTATION}']` } }],
      },
    },
    ...(secretName
      ? [
          {
            name: "cluster-under-test",
            secret: {
              secretName,
              defaultMode: 0o440,
              // The Job's own Secret holds the stream key too: only the arms' kubeconfigs are mounted.
              ...(leased ? { items: leased.map((c) => ({ key: c.arm, path: c.arm })) } : {}),
            },
          },
        ]
      : []),
    {
      name: "stream-key",
      secret: {
        secretName: jobSecretName(name),
        defaultMode: 0o440,
        items: [{ key: STREAM_KEY_ITEM, path: "key" }],
      },
    },
  ];
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace: cluster.namespace,
      labels,
      annotations: { [RUN_ID_ANNOTATION]: key.runId },
    },
    spec: {
      // The bot retries an iteration lost to the infrastructure itself (as attempt n+1), so it sees
      // every failure and bounds them; the Job runs its pod once.
      backoffLimit: 0,
      completions: 1,
      parallelism: 1,
      activeDeadlineSeconds: jobs.activeDeadlineSeconds,
      ttlSecondsAfterFinished: jobs.ttlSecondsAfterFinished,
      template: {
        metadata: { labels, annotations: { [RUN_ID_ANNOTATION]: key.runId, [PLAN_ANNOTATION]: planJson } },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...(runner.serviceAccountName ? { serviceAccountName: runner.serviceAccountName } : {}),
          nodeSelector: {
            ...runner.pod.nodeSelector,
            ...cluster.pod?.nodeSelector,
            "kubernetes.io/arch": key.arch,
          },
          tolerations: [...runner.pod.tolerations, ...(cluster.pod?.tolerations ?? [])],
          imagePullSecrets: runner.imagePullSecrets.map((secret) => ({ name: secret })),
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          initContainers,
          // No shareProcessNamespace: the tests cannot see the runner's processes, nor it theirs.
          containers: [
            {
              name: RUNNER_CONTAINER,
              image: runner.image,
              imagePullPolicy: runner.imagePullPolicy,
              command: runner.command,
              args,
              workingDir: BINARY_DIR,
              env,
              volumeMounts: [
                ...sharedMounts,
                { name: "runner-tmp", mountPath: "/tmp" },
                { name: "plan", mountPath: PLAN_DIR, readOnly: true },
                { name: "stream-key", mountPath: STREAM_KEY_DIR, readOnly: true },
              ],
              resources: RUNNER_RESOURCES,
              securityContext: RESTRICTED,
            },
            {
              name: TESTS_CONTAINER,
              image: runner.image,
              imagePullPolicy: runner.imagePullPolicy,
              command: [SPAWNER_COMMAND],
              args: ["--listen", SPAWNER_SOCKET, "--accept-timeout", String(SPAWNER_ACCEPT_TIMEOUT_SECONDS)],
              workingDir: BINARY_DIR,
              // Each test gets the environment the runner sends with it, and nothing of this one.
              volumeMounts: [...sharedMounts, { name: "tmp", mountPath: "/tmp" }],
              resources: runner.resources,
              securityContext: RESTRICTED,
            },
          ],
          volumes,
        },
      },
    },
  };
}
