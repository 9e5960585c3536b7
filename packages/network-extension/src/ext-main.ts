import { ExtError } from "./ext-error.ts";
import type { ExtensionBuild } from "./extension-info.ts";
import { runExtension } from "./run-extension.ts";

// Stamped by the standalone build (scripts/build-ext.mjs); absent when run from the sources.
declare const __NETSTRESS_EXT_BUILD__: ExtensionBuild | undefined;

/**
 * The extension as a process: arguments, environment, stdout/stderr, names on stdin, and SIGTERM or
 * SIGINT as the signal to wrap up (a second one is ignored: the result is on its way). Returns the exit status.
 */
export async function extMain(argv: readonly string[]): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  try {
    return await runExtension({
      argv,
      env: process.env,
      stdout: (text) => void process.stdout.write(text),
      stderr: (text) => void process.stderr.write(text),
      readStdin: async () => {
        if (process.stdin.isTTY) return undefined;
        let text = "";
        process.stdin.setEncoding("utf8");
        for await (const chunk of process.stdin) text += chunk as string;
        return text;
      },
      signal: controller.signal,
      // Loaded only for tests: the Kubernetes client is most of what a probe pod would otherwise load.
      cluster: async (kubeconfig) =>
        (await import("./kube-probe-cluster.ts")).kubeProbeCluster({ kubeconfig }),
      build:
        typeof __NETSTRESS_EXT_BUILD__ === "undefined"
          ? { commit: "", buildDate: "", gitTreeState: "" }
          : __NETSTRESS_EXT_BUILD__,
    });
  } catch (error) {
    if (error instanceof ExtError) {
      process.stderr.write(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
}
