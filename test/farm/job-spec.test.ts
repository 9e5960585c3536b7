import type { V1Container } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildIterationJob } from "../../src/farm/build-iteration-job.ts";
import { farmConfigSchema } from "../../src/farm/farm-config.ts";
import { FarmError } from "../../src/farm/farm-error.ts";
import { parseDuration } from "../../src/cli/parse-options.ts";
import { jobName, PLAN_ANNOTATION, readJobIdentity, type IterationKey } from "../../src/farm/job-identity.ts";
import type { Shard } from "../../src/runs/shard-executor.ts";
import { DEFAULT_TEST_BINARY_REGISTRY } from "../../src/payload/test-binary-registry.ts";
import { executionPlanSchema, type ExecutionPlan } from "@netstress/core/model/execution-plan.ts";

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const RUNNER = `quay.io/netstress/runner@${digest("1")}`;
const config = farmConfigSchema.parse({
  runner: {
    image: RUNNER,
    clusterUnderTest: { secretName: "cut" },
    pod: { nodeSelector: { "kubernetes.io/arch": "s390x", "node-role.kubernetes.io/worker": "" } },
    env: [{ name: "TOKEN", secretKeyRef: { name: "creds", key: "token" } }],
  },
  clusters: [{ name: "build01", kubeconfig: "/k", namespace: "ns", arches: ["arm64"], capacity: 2 }],
});
const cluster = config.clusters[0]!;

const plan: ExecutionPlan = {
  arch: "arm64",
  arms: [
    {
      arm: "pr",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/bot/cache/ab/ovn-kubernetes-tests-ext.gz",
          source: "override",
          image: "quay.io/pr/ovn-kubernetes:pr42",
          digest: digest("1"),
        },
        {
          component: "hyperkube",
          binary: "/bot/cache/cd/k8s-tests-ext.gz",
          source: "released",
          image: `quay.io/ocp/release@${digest("2")}`,
          digest: digest("2"),
        },
      ],
    },
    {
      arm: "baseline",
      components: [
        {
          component: "ovn-kubernetes",
          binary: "/bot/cache/ef/ovn-kubernetes-tests-ext.gz",
          source: "released",
          image: `quay.io/ocp/release@${digest("3")}`,
          digest: digest("3"),
        },
        {
          component: "hyperkube",
          binary: "/bot/cache/cd/k8s-tests-ext.gz",
          source: "released",
          image: `quay.io/ocp/release@${digest("2")}`,
          digest: digest("2"),
        },
      ],
    },
  ],
};
const shard: Shard = {
  runId: "3f2a9c0d4e5b6a7f8091a2b3c4d5e6f7",
  id: "arm64-0-9",
  arch: "arm64",
  arms: ["pr", "baseline"],
  iterations: { first: 0, count: 10 },
  plan,
  seed: "3f2a9c0d4e5b6a7f",
  focus: `EgressIP"; rm -rf / #$(reboot)`,
  parallel: 4,
  testTimeoutMs: 900_000,
  retries: 1,
};
const key: IterationKey = { runId: shard.runId, arch: "arm64", arms: shard.arms, iteration: 7, attempt: 1 };

const build = (overrides: Partial<Parameters<typeof buildIterationJob>[0]> = {}) =>
  buildIterationJob({
    config,
    cluster,
    shard,
    key,
    pr: 42,
    testBinaries: DEFAULT_TEST_BINARY_REGISTRY,
    instance: "netstress",
    ...overrides,
  });

describe("the Job of one iteration", () => {
  const job = build();
  const pod = job.spec!.template.spec!;
  const runner = pod.containers[0]!;

  it("has a deterministic DNS-safe name per run, arms, arch, iteration and attempt", () => {
    expect(job.metadata!.name).toBe(jobName(key));
    expect(build().metadata!.name).toBe(job.metadata!.name);
    expect(job.metadata!.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(job.metadata!.name!.length).toBeLessThanOrEqual(63);
    const others = [
      { iteration: 8 },
      { attempt: 2 },
      { arch: "amd64" as const },
      { arms: ["pr" as const] },
      { runId: "other" },
    ];
    for (const change of others) expect(jobName({ ...key, ...change })).not.toBe(job.metadata!.name);
  });

  it("is labelled for run, PR, arms and arch, and its labels lead back to the run", () => {
    expect(job.metadata!.labels).toMatchObject({
      "netstress.io/pr": "42",
      "netstress.io/arms": "both",
      "netstress.io/arch": "arm64",
      "netstress.io/iteration": "7",
      "netstress.io/instance": "netstress",
      "netstress.io/attempt": "1",
    });
    expect(job.spec!.template.metadata!.labels).toEqual(job.metadata!.labels);
    expect(readJobIdentity(job.metadata!)).toEqual({
      runId: shard.runId,
      iteration: 7,
      attempt: 1,
      arch: "arm64",
    });
  });

  it("runs once, bounded in time and kept only for a while", () => {
    expect(job.spec).toMatchObject({
      backoffLimit: 0,
      activeDeadlineSeconds: 14_400,
      ttlSecondsAfterFinished: 86_400,
    });
    expect(pod.restartPolicy).toBe("Never");
  });

  it("lands on nodes of the shard's arch whatever the configured selectors say", () => {
    expect(pod.nodeSelector).toEqual({ "kubernetes.io/arch": "arm64", "node-role.kubernetes.io/worker": "" });
  });

  it("meets the restricted pod security standard in every container, with requests and limits", () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const container of [...pod.initContainers!, ...pod.containers]) {
      expect(container.securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(Object.keys(container.resources!.requests!).sort()).toEqual(["cpu", "memory"]);
      expect(Object.keys(container.resources!.limits!).sort()).toEqual(["cpu", "memory"]);
    }
  });

  it("copies each binary out of its component image, pinned by digest, once per image", () => {
    expect(pod.initContainers!.map((c) => [c.image, c.command])).toEqual([
      [
        `quay.io/pr/ovn-kubernetes@${digest("1")}`,
        [
          "cp",
          "--",
          "/usr/bin/ovn-kubernetes-tests-ext.gz",
          "/var/run/netstress-bin/0-ovn-kubernetes-tests-ext.gz",
        ],
      ],
      [
        `quay.io/ocp/release@${digest("2")}`,
        ["cp", "--", "/usr/bin/k8s-tests-ext.gz", "/var/run/netstress-bin/1-k8s-tests-ext.gz"],
      ],
      [
        `quay.io/ocp/release@${digest("3")}`,
        [
          "cp",
          "--",
          "/usr/bin/ovn-kubernetes-tests-ext.gz",
          "/var/run/netstress-bin/2-ovn-kubernetes-tests-ext.gz",
        ],
      ],
    ]);
  });

  it("carries the plan, pointing at the copied binaries, in an annotation mounted as a file", () => {
    const carried = executionPlanSchema.parse(
      JSON.parse(job.spec!.template.metadata!.annotations![PLAN_ANNOTATION]!),
    );
    expect(carried.arms.flatMap((a) => a.components.map((c) => c.binary))).toEqual([
      "0-ovn-kubernetes-tests-ext.gz",
      "1-k8s-tests-ext.gz",
      "2-ovn-kubernetes-tests-ext.gz",
      "1-k8s-tests-ext.gz",
    ]);
    expect(runner.workingDir).toBe("/var/run/netstress-bin");
    expect(pod.volumes!.find((v) => v.name === "plan")!.downwardAPI!.items![0]!.fieldRef!.fieldPath).toBe(
      `metadata.annotations['${PLAN_ANNOTATION}']`,
    );
  });

  it("passes user text as one argument of an args array, never through a shell", () => {
    expect(runner.command).toEqual(["netstress"]);
    expect(runner.args).toContain(`--focus=${shard.focus}`);
    expect(runner.args!.slice(0, 10)).toEqual([
      "run",
      "--plan",
      "/etc/netstress/plan/plan.json",
      "--out",
      "/var/run/netstress/out",
      "--iterations",
      "1",
      "--first-iteration",
      "7",
      "--parallel",
    ]);
    expect(runner.args).toContain("--stream-records");
  });

  it("gives tests the farm's timeout grace for their cleanups (origin's minute unless configured)", () => {
    const grace = (args: string[]) => args[args.indexOf("--timeout-grace") + 1];
    expect(grace(runner.args!)).toBe("60s");
    const patient = farmConfigSchema.parse({
      runner: { image: RUNNER },
      clusters: [{ name: "build01", kubeconfig: "/k", namespace: "ns", arches: ["arm64"], capacity: 2 }],
      jobs: { timeoutGraceSeconds: 300 },
    });
    const args = build({ config: patient, cluster: patient.clusters[0]! }).spec!.template.spec!.containers[0]!
      .args!;
    expect(grace(args)).toBe("300s");
    expect(parseDuration("--timeout-grace", grace(args)!)).toBe(300_000);
    expect(() => farmConfigSchema.parse({ ...patient, jobs: { timeoutGraceSeconds: 0 } })).toThrow(
      /timeoutGraceSeconds/,
    );
  });

  it("gives PR overrides as EXTENSIONS_PAYLOAD_OVERRIDE_<tag> and credentials only by reference", () => {
    expect(runner.env).toEqual([
      { name: "EXTENSIONS_PAYLOAD_OVERRIDE_ovn-kubernetes", value: "quay.io/pr/ovn-kubernetes:pr42" },
      { name: "NETSTRESS_PROBE_IMAGE", value: RUNNER },
      { name: "KUBECONFIG", value: "/var/run/secrets/cluster-under-test/kubeconfig" },
      { name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } },
    ]);
    expect(pod.volumes!.find((v) => v.name === "cluster-under-test")!.secret!.secretName).toBe("cut");
  });

  it("mounts its Secret's stream key into the runner alone, and against clusters under test only the arm's kubeconfig beside it", () => {
    const secretName = `${jobName({ ...key, arms: ["baseline"] })}-secret`;
    const leased = build({
      key: { ...key, arms: ["baseline"] },
      shard: { ...shard, arms: ["baseline"] },
      clustersUnderTest: [{ arm: "baseline", id: "hive/c1", payload: `quay.io/ocp/release@${digest("3")}` }],
    }).spec!.template.spec!;
    for (const spec of [pod, leased]) {
      const [container] = spec.containers;
      const path = container!.args![container!.args!.indexOf("--stream-key-file") + 1];
      const mount = container!.volumeMounts!.find((m) => path?.startsWith(`${m.mountPath}/`))!;
      expect(mount).toMatchObject({ name: "stream-key", readOnly: true });
      // No other container (the binary copies) mounts it.
      for (const other of [...(spec.initContainers ?? []), ...spec.containers.slice(1)])
        expect(other.volumeMounts?.map((m) => m.name)).not.toContain("stream-key");
      expect(spec.volumes!.find((v) => v.name === "stream-key")!.secret).toMatchObject({
        items: [{ key: "stream-key", path: path!.split("/").at(-1) }],
      });
    }
    expect(pod.volumes!.find((v) => v.name === "stream-key")!.secret!.secretName).toBe(
      `${job.metadata!.name}-secret`,
    );
    const kubeconfigs = leased.volumes!.find((v) => v.name === "cluster-under-test")!.secret!;
    expect(kubeconfigs).toMatchObject({ secretName, items: [{ key: "baseline", path: "baseline" }] });
    expect(leased.volumes!.find((v) => v.name === "stream-key")!.secret!.secretName).toBe(secretName);
  });

  it("runs the tests in a container of their own, through the spawner: no stream key there, no shared process namespace", () => {
    const leased = build({
      key: { ...key, arms: ["pr"] },
      shard: { ...shard, arms: ["pr"] },
      clustersUnderTest: [{ arm: "pr", id: "hive/c1", payload: `quay.io/ocp/release@${digest("1")}` }],
    }).spec!.template.spec!;
    for (const spec of [pod, leased]) {
      expect(spec.containers.map((c) => c.name)).toEqual(["runner", "tests"]);
      expect(spec.shareProcessNamespace).toBeFalsy();
      const [own, tests] = spec.containers as [V1Container, V1Container];
      // The tests container runs the spawner of the runner image, listening where the runner connects.
      expect(tests.image).toBe(RUNNER);
      expect(tests.command).toEqual(["netstress-spawner"]);
      // Where the image build leaves it, on the PATH.
      expect(readFileSync(new URL("../../deploy/Containerfile", import.meta.url), "utf8")).toContain(
        "ln -s /app/dist/src/runner/native/netstress-spawner /usr/local/bin/netstress-spawner",
      );
      const socket = tests.args![tests.args!.indexOf("--listen") + 1]!;
      expect(own.args![own.args!.indexOf("--spawner-socket") + 1]).toBe(socket);
      const socketDir = (c: V1Container) => c.volumeMounts!.find((m) => socket.startsWith(`${m.mountPath}/`));
      expect(socketDir(own)?.name).toBe(socketDir(tests)?.name);
      expect(spec.volumes!.find((v) => v.name === socketDir(tests)!.name)).toMatchObject({ emptyDir: {} });
      // Not the key, nor the plan: the tests get no secret of the runner's.
      const keyPath = own.args![own.args!.indexOf("--stream-key-file") + 1]!;
      expect(tests.volumeMounts!.map((m) => m.name)).not.toContain("stream-key");
      expect(tests.volumeMounts!.some((m) => keyPath.startsWith(`${m.mountPath}/`))).toBe(false);
      expect(tests.env ?? []).toEqual([]);
      // Whatever path the runner sends (binaries, unpacked copies, artifacts, KUBECONFIG) is there too.
      expect(tests.workingDir).toBe(own.workingDir);
      const at = (c: V1Container) => new Map(c.volumeMounts!.map((m) => [m.mountPath, m.name] as const));
      for (const name of ["binaries", "work", "cluster-under-test"]) {
        const mount = own.volumeMounts!.find((m) => m.name === name)!;
        expect(at(tests).get(mount.mountPath)).toBe(name);
      }
      // Not one /tmp for both: nothing the tests leave there reaches the runner.
      expect(at(own).get("/tmp")).not.toBe(at(tests).get("/tmp"));
      for (const container of [own, tests]) {
        expect(container.securityContext).toMatchObject({
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
        });
        expect(container.resources!.limits).toMatchObject({
          cpu: expect.any(String),
          memory: expect.any(String),
        });
      }
      // The tests are the pod's work: they get the farm's runner.resources.
      expect(tests.resources).toEqual(config.runner.resources);
    }
  });

  it("carries no path of the bot's own machine: a payload's layout directory stays with the bot", () => {
    const fromLayout: ExecutionPlan = {
      ...plan,
      arms: [
        {
          arm: "pr",
          components: [{ ...plan.arms[0]!.components[0]!, layout: "/var/lib/netstress/payloads/x" }],
        },
      ],
    };
    const annotation = build({ shard: { ...shard, plan: fromLayout } }).spec!.template.metadata!.annotations![
      PLAN_ANNOTATION
    ]!;
    expect(annotation).not.toContain("/var/lib/netstress");
  });

  it.each([
    ["a component without an image", { image: undefined }, /names no image/],
    ["an image in a local layout", { image: "oci:/tmp/payload" }, /local image layout/],
    ["an image without a digest", { image: "quay.io/pr/ovn:tag", digest: undefined }, /has no digest/],
    ["a tag that is not a tag", { component: "ovn kubernetes; reboot" }, /not a payload tag name/],
  ])("refuses %s", (_what, change, problem) => {
    const broken: ExecutionPlan = {
      ...plan,
      arms: [{ arm: "pr", components: [{ ...plan.arms[0]!.components[0]!, ...change }] }],
    };
    expect(() => build({ shard: { ...shard, plan: broken } })).toThrow(problem);
  });

  it("refuses a seed that could be mistaken for an option and control characters in the focus", () => {
    expect(() => build({ shard: { ...shard, seed: "--help" } })).toThrow(FarmError);
    expect(() => build({ shard: { ...shard, focus: "a\nb" } })).toThrow(/control characters/);
  });
});
