import { stringify } from "yaml";

/**
 * A kubeconfig for one simulated API server: its URL, a bearer token and — over HTTPS — the CA
 * that signed its certificate, as `certificate-authority-data`, so clients verify it as they
 * would a real cluster. Over plain HTTP (build-farm tests) the client must be told to skip TLS.
 */
export function kubeconfigYaml(options: {
  name: string;
  server: string;
  token: string;
  caPem?: string;
}): string {
  const cluster = options.caPem
    ? { server: options.server, "certificate-authority-data": Buffer.from(options.caPem).toString("base64") }
    : { server: options.server, "insecure-skip-tls-verify": true };
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: options.name, cluster }],
    users: [{ name: `${options.name}-admin`, user: { token: options.token } }],
    contexts: [{ name: options.name, context: { cluster: options.name, user: `${options.name}-admin` } }],
    "current-context": options.name,
  });
}
