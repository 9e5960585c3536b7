/**
 * Variables a test binary may see from the process that runs it: what locates tools and files, the
 * cluster under test, locale and proxies — never the bot's own settings and secrets
 * (WEBHOOK_SECRET, PRIVATE_KEY, NETSTRESS_REDIS_URL …) nor a build-farm runner's (`runner.env`).
 * The OTE variables the runner sets per test (EXTENSION_ARTIFACT_DIR, NETSTRESS_ARM …) come on
 * top. `extra` names more, for operators (NETSTRESS_BINARY_ENV).
 */
const ALLOWED = new Set([
  "PATH",
  "HOME",
  "TMPDIR",
  "LANG",
  "LANGUAGE",
  "TZ",
  "KUBECONFIG",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  // The image the network extension's probe pods run: the runner's own, by digest (a Job sets it).
  "NETSTRESS_PROBE_IMAGE",
]);

export function binaryEnvironment(
  env: NodeJS.ProcessEnv,
  options: { extra?: readonly string[]; home?: string } = {},
): NodeJS.ProcessEnv {
  const extra = new Set(options.extra ?? []);
  const allowed: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (ALLOWED.has(name) || name.startsWith("LC_") || extra.has(name))) {
      allowed[name] = value;
    }
  }
  // A binary's home and temporary files stay in its private working directory.
  if (options.home) Object.assign(allowed, { HOME: options.home, TMPDIR: options.home });
  return allowed;
}
