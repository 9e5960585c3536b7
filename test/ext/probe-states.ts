import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { parseProbeLines, type ProbeStateLine } from "@netstress/network-extension/probe-line.ts";

/**
 * Each probe pair's latest state as the probe pods of `namespace` have logged it so far, read
 * through the API as the extension reads it when it collects: what a test waits on instead of
 * the clock.
 */
export async function probeStates(kubeconfigPath: string, namespace: string): Promise<ProbeStateLine[]> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const core = config.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace });
  const latest = new Map<string, ProbeStateLine>();
  for (const pod of pods.items) {
    const log = await core.readNamespacedPodLog({ namespace, name: pod.metadata!.name! }).catch(() => "");
    for (const line of parseProbeLines(log))
      if (line.event === "state")
        latest.set(`${line.path}/${line.connection} ${line.source} → ${line.target}`, line);
  }
  return [...latest.values()];
}
