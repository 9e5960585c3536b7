import type { KubeConfig } from "@kubernetes/client-node";
import { NetstressError } from "../errors/netstress-error.ts";

/**
 * Loads a kubeconfig (its text, or a file) into `kubeConfig`. The YAML parser's message quotes the
 * lines around a syntax error — a token or a client key, as often as not — and such errors reach
 * check runs and logs; so a failure says only whose kubeconfig it was and on which line, and keeps
 * no cause.
 */
export function loadKubeconfig(
  kubeConfig: KubeConfig,
  source: { name: string } & ({ text: string } | { path: string }),
): void {
  try {
    if ("text" in source) kubeConfig.loadFromString(source.text);
    else kubeConfig.loadFromFile(source.path);
  } catch (error) {
    const line = (error as { mark?: { line?: unknown } }).mark?.line;
    const where = typeof line === "number" ? ` (line ${line + 1})` : "";
    const { name, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
    // A file that cannot be opened says why (its path, not its content).
    const what = String(name).startsWith("YAMLException")
      ? `is not valid YAML${where}`
      : typeof code === "string" && code.startsWith("E")
        ? `cannot be read: ${String(message)}`
        : "is not a valid kubeconfig";
    throw new NetstressError(`kubeconfig of ${source.name} ${what}`, { code: "invalid-kubeconfig" });
  }
}
