/**
 * Simulated networking e2e suites of two payload components. The PR build of ovn-kubernetes makes
 * one test much flakier on every cluster that runs it (CLUSTER_BUILD_EFFECTS), and its test binary
 * adds one new test, so later stages have a real regression to find — for the right reason, the
 * code in the cluster — while everything else behaves exactly as released.
 */
export interface SampleTest {
  name: string;
  lifecycle?: "blocking" | "informing";
  labels?: string[];
  failureProbability?: number;
  skipProbability?: number;
  durationMs?: [number, number];
  failureError?: string;
  failureOutput?: string;
  /** Adversarial behaviours for the harness's own tests. */
  behavior?:
    | "crash"
    | "hang"
    | "garbage"
    | "no-result"
    | "flood"
    | "malformed"
    | "wrong-name"
    | "nanoseconds"
    /** An `[Invariant]` monitor: watches until its stop file appears or SIGTERM (docs/network-tests.md). */
    | "invariant"
    /** A monitor that knows only SIGTERM, as a third-party one may. */
    | "invariant-sigterm-only"
    /** A monitor that never wraps up: the runner must kill it after the grace. */
    | "invariant-stuck"
    /** Upgrades to NETSTRESS_UPGRADE_TARGET (says so in its output), or skips without it. */
    | "upgrade";
  floodMiB?: number;
  /** `resources.isolation` as the spec advertises it. */
  isolation?: { conflict?: string[]; taint?: string[]; toleration?: string[] };
  /** Environment conditions (flag: value, all must hold), listed as environmentSelector CEL. */
  environment?: { include?: Record<string, string>; exclude?: Record<string, string> };
  /** `details[]` of the result. */
  details?: { name: string; value: unknown }[];
  /** Writes a file with this prefix into EXTENSION_ARTIFACT_DIR on every execution. */
  artifact?: string;
}

/** How a component build running in the cluster under test changes a test, whichever binary runs it. */
export interface ClusterEffect {
  /** The payload tag whose build matters, its commit, and the workload that runs it. */
  component: string;
  commit: string;
  workload: { namespace: string; name: string };
  test: string;
  changes: Pick<SampleTest, "failureProbability" | "failureError" | "failureOutput">;
}

interface SampleImage {
  index: number;
  registry: string;
  name: string;
  version: string;
}

export interface SampleSuite {
  component: string;
  commit: string;
  buildDate: string;
  tests: SampleTest[];
  /** Set by the binary builder: CLUSTER_BUILD_EFFECTS. */
  clusterEffects?: ClusterEffect[];
  /** `info` suites; by default the component's own, a conformance/parallel and serial pair and a disruptive one. */
  suites?: { name: string; parents?: string[]; qualifiers?: string[] }[];
  /** What `images` prints; without it the binary plays one built before the framework had the command. */
  images?: (SampleImage & { mapped?: SampleImage })[];
  /** `info`'s source.git_tree_state (default "clean"). */
  gitTreeState?: string;
}

const conformance = "[Suite:openshift/conformance/parallel]";
export const REGRESSED_TEST = `[sig-network] NodePort service should be reachable from the host network ${conformance}`;
export const NEW_TEST = `[sig-network] EgressService should steer traffic through the selected nodes ${conformance}`;

const ovnReleasedTests: SampleTest[] = [
  {
    name: `[sig-network] pod-to-pod connectivity across nodes should succeed ${conformance}`,
    failureProbability: 0.01,
  },
  {
    name: `[sig-network] pod-to-service ClusterIP should reach every endpoint ${conformance}`,
    failureProbability: 0.02,
  },
  { name: REGRESSED_TEST, failureProbability: 0.02, durationMs: [100, 300] },
  { name: `[sig-network] DNS should resolve cluster-local service names ${conformance}` },
  {
    name: `[sig-network] EgressIP should be the source address of egress traffic [Serial]`,
    failureProbability: 0.15,
    failureError: "egress packets left with node IP 10.0.0.5, expected 10.0.200.10",
  },
  { name: `[sig-network] NetworkPolicy should deny ingress from other namespaces ${conformance}` },
  {
    name: `[sig-network] host-network pod should reach the pod network ${conformance}`,
    failureProbability: 0.01,
  },
  {
    name: `[sig-network] multicast should be delivered within a namespace`,
    lifecycle: "informing",
    failureProbability: 0.3,
    labels: ["Informing"],
  },
];

/** The images the ovn-kubernetes tests pull, as the framework lists them (one twice, under two indexes). */
const ovnImages: SampleSuite["images"] = [
  { index: 0, registry: "quay.io/openshift/community-e2e-images", name: "agnhost", version: "2.53" },
  {
    index: 1,
    registry: "registry.k8s.io/e2e-test-images",
    name: "nginx",
    version: "1.15-4",
    // Where the extension wants it mirrored, as the framework's `mapped` says.
    mapped: {
      index: 1,
      registry: "quay.io/openshift/community-e2e-images",
      name: "e2e-1-registry-k8s-io-e2e-test-images-nginx-1-15-4",
      version: "1.15-4",
    },
  },
  { index: 2, registry: "quay.io/openshift/community-e2e-images", name: "agnhost", version: "2.53" },
];

export const ovnKubernetesReleased: SampleSuite = {
  component: "ovn-kubernetes",
  commit: "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
  buildDate: "2026-11-20T08:00:00Z",
  tests: ovnReleasedTests,
  images: ovnImages,
};

const OVN_PR_COMMIT = "b7c1e0f5a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9";

/** The PR's test binary: the released tests and one new one; its NodePort regression lives in the cluster. */
export const ovnKubernetesPr: SampleSuite = {
  component: "ovn-kubernetes",
  commit: OVN_PR_COMMIT,
  buildDate: "2026-11-28T16:30:00Z",
  tests: [...ovnReleasedTests, { name: NEW_TEST, failureProbability: 0.05 }],
  images: [
    ...ovnImages,
    { index: 3, registry: "quay.io/openshift/community-e2e-images", name: "netexec", version: "1.1" },
  ],
};

/**
 * The PR build of ovn-kubernetes (its ovnkube-node) breaks NodePort traffic from the host network
 * now and then: REGRESSED_TEST fails 60% of the time on any cluster running it.
 */
export const CLUSTER_BUILD_EFFECTS: ClusterEffect[] = [
  {
    component: "ovn-kubernetes",
    commit: OVN_PR_COMMIT,
    workload: { namespace: "openshift-ovn-kubernetes", name: "ovnkube-node" },
    test: REGRESSED_TEST,
    changes: {
      failureProbability: 0.6,
      failureError: "curl to NodePort 31080 from host network: connection reset by peer",
    },
  },
];

export const sdnReleased: SampleSuite = {
  component: "sdn",
  commit: "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
  buildDate: "2026-11-18T10:00:00Z",
  tests: [
    { name: `[sig-network][Feature:SDN] pods on the same node should communicate ${conformance}` },
    {
      name: `[sig-network][Feature:SDN] multitenant isolation should block cross-namespace traffic ${conformance}`,
      failureProbability: 0.02,
    },
    { name: `[sig-network][Feature:SDN] egress router should redirect traffic`, failureProbability: 0.05 },
    {
      name: `[sig-network][Feature:SDN] every node should have a host subnet ${conformance}`,
      skipProbability: 0.1,
    },
  ],
};

export const SERIAL_TEST = "[sig-network] EgressFirewall should block egress to denied CIDRs [Serial]";
export const DISRUPTIVE_TEST =
  "[sig-network][Disruptive] OVN northbound database leader loss should keep pod connectivity";
export const EXCLUSIVE_TEST = "[sig-network] node MTU migration should keep every pod reachable";
export const CONFLICTING_TESTS = [
  `[sig-network] IPsec east-west encryption should encrypt pod traffic ${conformance}`,
  `[sig-network] IPsec north-south encryption should encrypt egress traffic ${conformance}`,
] as const;
export const AWS_ONLY_TEST = `[sig-network] AWS NLB service should preserve the client source IP ${conformance}`;
export const NOT_ON_OVN_TEST = `[sig-network] SDN egress router should redirect traffic ${conformance}`;
export const DETAILED_TEST = `[sig-network] OVN flows should be programmed on every node ${conformance}`;

/**
 * A component whose tests exercise the scheduler and selection: ordinary parallel tests beside a
 * [Serial], a [Disruptive], an isolation conflict "*" and two tests sharing a conflict, tests an
 * environmentSelector includes only on AWS or excludes on OVN, and one reporting details[] and
 * writing an artifact. Every outcome passes, so only scheduling and selection are under test.
 */
export const isolationSample: SampleSuite = {
  component: "cluster-network-operator",
  commit: "5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c",
  buildDate: "2026-11-25T12:00:00Z",
  tests: [
    ...["pod-to-pod", "pod-to-service", "DNS", "NetworkPolicy", "host-network", "NodePort"].map(
      (what): SampleTest => ({
        name: `[sig-network] ${what} traffic should keep flowing during stress ${conformance}`,
        durationMs: [150, 250],
      }),
    ),
    { name: SERIAL_TEST, durationMs: [80, 120] },
    { name: DISRUPTIVE_TEST, durationMs: [80, 120] },
    { name: EXCLUSIVE_TEST, durationMs: [80, 120], isolation: { conflict: ["*"] } },
    ...CONFLICTING_TESTS.map((name): SampleTest => ({
      name,
      durationMs: [150, 250],
      isolation: { conflict: ["ipsec"] },
    })),
    { name: AWS_ONLY_TEST, durationMs: [20, 40], environment: { include: { platform: "aws" } } },
    { name: NOT_ON_OVN_TEST, durationMs: [20, 40], environment: { exclude: { network: "ovn" } } },
    {
      name: DETAILED_TEST,
      durationMs: [20, 40],
      details: [{ name: "nodes-checked", value: 6 }],
      artifact: "ovn-flows",
    },
  ],
};

export const INVARIANT_TEST =
  "[sig-network][Invariant] pod network should stay reachable all through the iteration";
export const SIGTERM_INVARIANT_TEST =
  "[sig-network][Invariant] service network should stay reachable all through the iteration";
export const STUCK_INVARIANT_TEST =
  "[sig-network][Invariant] host network should stay reachable, never wrapping up";

/** The build the network-test samples below come from. */
const NETWORK_TESTS_BUILD = {
  component: "netstress-network-tests",
  commit: "7e6d5c4b3a291807f6e5d4c3b2a1908f7e6d5c4b",
  buildDate: "2026-12-01T12:00:00Z",
};

/** Invariant monitors beside ordinary and serial tests: the runner gives them their iteration's span. */
export const invariantSample: SampleSuite = {
  ...NETWORK_TESTS_BUILD,
  tests: [
    { name: INVARIANT_TEST, behavior: "invariant" },
    { name: SIGTERM_INVARIANT_TEST, behavior: "invariant-sigterm-only" },
    { name: STUCK_INVARIANT_TEST, behavior: "invariant-stuck" },
    ...["pod-to-pod", "pod-to-service", "DNS", "NodePort"].map((what): SampleTest => ({
      name: `[sig-network] ${what} traffic should keep flowing during stress ${conformance}`,
      durationMs: [100, 200],
    })),
    { name: SERIAL_TEST, durationMs: [80, 120] },
  ],
};

export const UPGRADE_TEST =
  "[sig-network][Disruptive][Upgrade] every network path should stay reachable while the cluster upgrades";

/** An upgrade test beside ordinary ones: the runner gives it its arm's target, once per cluster. */
export const upgradeSample: SampleSuite = {
  ...NETWORK_TESTS_BUILD,
  tests: [
    { name: UPGRADE_TEST, behavior: "upgrade" },
    {
      name: `[sig-network] pod-to-pod traffic should keep flowing during stress ${conformance}`,
      durationMs: [20, 40],
    },
  ],
};
