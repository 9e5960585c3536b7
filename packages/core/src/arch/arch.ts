import { z } from "zod";

/** CPU architectures in the names that OpenShift payloads, OCI platforms and node labels use. */
export const archSchema = z.enum(["amd64", "arm64", "ppc64le", "s390x"]);
export type Arch = z.infer<typeof archSchema>;
export const ARCHES: readonly Arch[] = archSchema.options;

const NODE_ARCH: Record<string, Arch> = { x64: "amd64", arm64: "arm64", ppc64: "ppc64le", s390x: "s390x" };

/** The architecture this process runs on, in payload naming. */
export function hostArch(nodeArch: string = process.arch): Arch {
  const arch = NODE_ARCH[nodeArch];
  if (!arch) throw new Error(`unsupported host architecture ${nodeArch}; supported: ${ARCHES.join(", ")}`);
  return arch;
}

/** Accepts the spellings users paste (x86_64, aarch64, ppc64le …) and returns the canonical name. */
export function parseArch(text: string): Arch {
  const aliases: Record<string, Arch> = {
    amd64: "amd64",
    x86_64: "amd64",
    x64: "amd64",
    arm64: "arm64",
    aarch64: "arm64",
    ppc64le: "ppc64le",
    s390x: "s390x",
  };
  const arch = aliases[text.trim().toLowerCase()];
  if (!arch) throw new Error(`unknown architecture "${text}"; use one of ${ARCHES.join(", ")}`);
  return arch;
}
