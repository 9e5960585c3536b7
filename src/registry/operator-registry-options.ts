import type { RegistryOptions } from "./create-registry.ts";
import { createEgressGuard, type HostLookup } from "./egress-guard.ts";
import { parseImageReference } from "./image-reference.ts";
import { createRegistryAllowList } from "./registry-allow-list.ts";

/** What the operator of a bot decided about reading images (the bot's registry settings). */
export interface RegistryAccess {
  allowedRegistries: readonly string[];
  allowLoopback: boolean;
  layoutDirs: readonly string[];
  maxLayerBytes: number;
  planBudget: { maxBytes: number; timeoutMs: number };
}

/**
 * The registry options of a bot, whose references come from repositories it does not control:
 * only allowed registries, never an internal address, OCI layouts only in the operator's
 * directories. What the operator named itself (the default payload and PR image) is always allowed.
 */
export function operatorRegistryOptions(options: {
  access: RegistryAccess;
  /** The operator's own image references (templates with `{tag}` and the like are fine). */
  operatorImages: readonly string[];
  lookup?: HostLookup;
}): Pick<RegistryOptions, "allowRegistry" | "guard" | "layoutDirs" | "maxLayerBytes" | "taskBudget"> {
  const { access } = options;
  const registries = [...access.allowedRegistries];
  const layoutDirs = [...access.layoutDirs];
  for (const image of options.operatorImages) {
    const ref = parseImageReference(image.replace(/\{[a-z]+\}/g, "x"));
    if (ref.kind === "registry") registries.push(ref.registry);
    else layoutDirs.push(ref.dir);
  }
  return {
    allowRegistry: createRegistryAllowList(registries),
    guard: createEgressGuard({
      allowLoopback: access.allowLoopback,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    }),
    layoutDirs,
    maxLayerBytes: access.maxLayerBytes,
    taskBudget: access.planBudget,
  };
}
