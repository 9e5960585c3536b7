import { parseDocument, parse as parseYaml } from "yaml";
import type { Arch } from "@netstress/core/arch/arch.ts";

/**
 * The architecture an install-config's workers (where tests' pods run) have: the first compute
 * pool's, else the control plane's, else the installer's default, amd64.
 */
export function installConfigArch(text: string): string {
  const value = parseYaml(text) as {
    compute?: { architecture?: unknown }[];
    controlPlane?: { architecture?: unknown };
  } | null;
  const arch = value?.compute?.[0]?.architecture ?? value?.controlPlane?.architecture;
  return typeof arch === "string" ? arch : "amd64";
}

/**
 * An install-config for one deployment from the operator's template: its name, base domain,
 * region, and control-plane and compute architecture set; everything else kept as written.
 */
export function renderInstallConfig(
  template: string,
  values: { name: string; baseDomain: string; platform: string; region: string; arch: Arch },
): string {
  const document = parseDocument(template);
  document.setIn(["metadata", "name"], values.name);
  document.setIn(["baseDomain"], values.baseDomain);
  document.setIn(["platform", values.platform, "region"], values.region);
  document.setIn(["controlPlane", "architecture"], values.arch);
  const compute = document.get("compute") as { items?: unknown[] } | undefined;
  const pools = compute?.items?.length ?? 0;
  if (pools === 0) document.setIn(["compute"], [{ name: "worker", architecture: values.arch }]);
  for (let i = 0; i < pools; i += 1) document.setIn(["compute", i, "architecture"], values.arch);
  return document.toString();
}
