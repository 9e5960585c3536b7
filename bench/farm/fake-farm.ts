// The build farms for the dispatch benchmark, in a process of their own so that the bot's memory
// is measured alone: fake Kubernetes APIs (one per cluster) whose pods are simulated in-process.
// Prints the clusters as JSON; answers "stats" on stdin with the API counters; exits on "stop".
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { createStreamSigner, formatRecordLine, formatStreamTrailer } from "../../src/farm/record-stream.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { startFakeKubeApi, type FakeImage } from "@netstress/testbed/sim/start-fake-kube-api.ts";

const [clustersJson, imagesJson, podSecondsText] = process.argv.slice(2);
const clusters = JSON.parse(clustersJson!) as { name: string; arch: string }[];
const images = JSON.parse(imagesJson!) as { runner: string; components: string[] };
const podMs = Number(podSecondsText ?? "3") * 1000;

// What the runner of one iteration writes: ten tests in each arm, framed and signed (with the key
// its Job mounts) as the real one frames and signs them.
const runner: FakeImage = {
  async simulate({ container, args, pod }) {
    // The pod's tests container: its spawner ends when the runner hangs up.
    if (container !== "runner") return { stdout: "", exitCode: 0 };
    // Read on start, as the runner does: a pod deleted meanwhile takes its volumes along.
    const keyFile = args[args.indexOf("--stream-key-file") + 1]!;
    const sign = createStreamSigner(Buffer.from((await readFile(keyFile, "utf8")).trim(), "hex"));
    await new Promise((resolve) => setTimeout(resolve, podMs * (0.8 + Math.random() * 0.4)));
    const iteration = Number(args[args.indexOf("--first-iteration") + 1]);
    const records = (["pr", "baseline"] as const).flatMap((arm) =>
      Array.from({ length: 10 }, (_, t): ResultRecord => ({
        name: `[sig-network] bench test ${t}`,
        lifecycle: "blocking",
        duration: 1200,
        result: "passed",
        output: "",
        arm,
        arch: pod.labels["netstress.io/arch"] === "arm64" ? "arm64" : "amd64",
        iteration,
        attempt: 0,
        component: "ovn-kubernetes",
      })),
    );
    const lines = [
      ...records.map((r, i) => formatRecordLine(i, r)),
      formatStreamTrailer(records.length, "completed"),
    ];
    return { stdout: lines.map(sign).join(""), exitCode: 0 };
  },
};
const copy: FakeImage = { simulate: async () => ({ stdout: "", exitCode: 0 }) };
const fakeImages = Object.fromEntries([[images.runner, runner], ...images.components.map((c) => [c, copy])]);

const apis = await Promise.all(
  clusters.map((c) =>
    startFakeKubeApi({
      images: fakeImages,
      nodes: [{ name: `${c.name}-node`, labels: { "kubernetes.io/arch": c.arch } }],
      maxRunning: 10_000,
      bookmarkMs: 5000,
    }),
  ),
);
process.stdout.write(
  `${JSON.stringify(apis.map((a, i) => ({ ...clusters[i], kubeconfig: a.kubeconfigPath })))}\n`,
);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stats") {
    const calls: Record<string, number> = {};
    for (const api of apis) for (const [key, n] of api.stats.calls) calls[key] = (calls[key] ?? 0) + n;
    const creations = apis.flatMap((a) => [...a.jobCreations().values()]);
    const stats = {
      calls,
      watches: apis.reduce((sum, a) => sum + a.stats.watches, 0),
      jobsCreated: creations.length,
      twins: creations.filter((n) => n > 1).length,
    };
    process.stdout.write(`${JSON.stringify(stats)}\n`);
  }
  if (line === "stop") break;
}
await Promise.all(apis.map((a) => a.stop()));
process.stdin.destroy();
