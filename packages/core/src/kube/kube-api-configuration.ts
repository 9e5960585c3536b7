import { createConfiguration, ServerConfiguration, type KubeConfig } from "@kubernetes/client-node";
import { KubeError } from "./kube-error.ts";

/**
 * The client configuration for one API server: its kubeconfig's current cluster and user, and a
 * timeout on every call, so that an API server that stops answering counts as failing.
 */
export function kubeApiConfiguration(options: { kubeConfig: KubeConfig; name: string; timeoutMs: number }) {
  const { kubeConfig, name, timeoutMs } = options;
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server) throw new KubeError("invalid-kubeconfig", `cluster ${name}: the kubeconfig names no server`);
  return createConfiguration({
    baseServer: new ServerConfiguration(server, {}),
    authMethods: { default: kubeConfig },
    promiseMiddleware: [
      {
        pre: async (context) => {
          context.setSignal(AbortSignal.timeout(timeoutMs));
          return context;
        },
        post: async (response) => response,
      },
    ],
  });
}
