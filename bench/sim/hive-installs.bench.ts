// `node --import tsx bench/sim/hive-installs.bench.ts [N]`: what N simulated clusters cost the
// simulator — N ClusterDeployments installed at once through the fake Hive (installMs 0), then all
// deleted — in wall time and resident memory, so that cluster-source benchmarks know what part of
// their figures is the simulation's own.
import { cpus, loadavg } from "node:os";
import { startFakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";

const N = Number(process.argv[2] ?? 200);
const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
};

const hive = await startFakeHive({ installMs: 0 });
hive.hub.store.create("clusterimagesets", {
  metadata: { name: "bench", namespace: "" },
  spec: { releaseImage: `quay.io/netstress-bench/release@sha256:${"a".repeat(64)}` },
});
// The first cluster pays for the process's key pairs; count from the second.
hive.hub.store.create("clusterdeployments", {
  metadata: { name: "warm-up", namespace: "bench" },
  spec: { provisioning: { imageSetRef: { name: "bench" } } },
});
await until(() => hive.stats.clustersStarted === 1);

const rssBefore = process.memoryUsage().rss;
const started = performance.now();
for (let i = 0; i < N; i++) {
  hive.hub.store.create("clusterdeployments", {
    metadata: { name: `cd-${i}`, namespace: "bench" },
    spec: { provisioning: { imageSetRef: { name: "bench" } } },
  });
}
await until(() => hive.stats.clustersStarted === N + 1);
const installed = performance.now();
const rssAfter = process.memoryUsage().rss;
for (let i = 0; i < N; i++) hive.hub.store.delete("clusterdeployments", "bench", `cd-${i}`);
await until(() => hive.stats.clustersStopped === N);
const gone = performance.now();
await hive.stop();

console.log(
  JSON.stringify({
    clusters: N,
    installAllMs: Math.round(installed - started),
    perClusterMs: +((installed - started) / N).toFixed(1),
    rssPerClusterMiB: +((rssAfter - rssBefore) / N / 2 ** 20).toFixed(2),
    giveBackAllMs: Math.round(gone - installed),
    cores: cpus().length,
    load: +loadavg()[0]!.toFixed(1),
  }),
);
