/**
 * The simulated Hive of the cluster benchmark, in a process of its own so that its 200 simulated
 * clusters do not count against the provider's memory. Prints the hub's kubeconfig path, then
 * serves until stdin closes.
 */
import { startFakeHive } from "@netstress/testbed/sim/start-fake-hive.ts";
import { botObjects, seedHub } from "../../test/clusters/hive-fixture.ts";

const hive = await startFakeHive({ installMs: Number(process.env.INSTALL_MS ?? 3000) });
seedHub(hive, { poolSize: Number(process.env.POOL_SIZE ?? 10) });
const creations = new Map<string, number>();
hive.hub.store.subscribe((event) => {
  if (event.type === "ADDED" && event.object.metadata.name.startsWith("nst-")) {
    const key = `${event.resource}/${event.object.metadata.name}`;
    creations.set(key, (creations.get(key) ?? 0) + 1);
  }
});
process.stdout.write(`${JSON.stringify({ hubKubeconfig: hive.hub.kubeconfigPath })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  const { api: _api, ...counts } = hive.stats;
  process.stdout.write(
    `${JSON.stringify({ ...counts, leftOnHub: botObjects(hive).length, twins: [...creations.values()].filter((n) => n > 1).length })}\n`,
  );
  void hive.stop().then(() => process.exit(0));
});
