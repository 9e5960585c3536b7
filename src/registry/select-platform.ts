import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Descriptor, ImageConfig } from "./manifest.ts";
import { RegistryError } from "./registry-error.ts";

/** OCI platform architecture names (GOARCH) for each payload arch; arm64 is v8 unless a variant says otherwise. */
const OCI_ARCH: Record<Arch, { architecture: string; variants: readonly (string | undefined)[] }> = {
  amd64: { architecture: "amd64", variants: [undefined] },
  arm64: { architecture: "arm64", variants: ["v8", undefined] },
  ppc64le: { architecture: "ppc64le", variants: [undefined] },
  s390x: { architecture: "s390x", variants: [undefined] },
};

function describePlatform(p: { os?: string; architecture: string; variant?: string | undefined }): string {
  return [p.os ?? "linux", p.architecture, p.variant].filter(Boolean).join("/");
}

/**
 * Chooses the linux manifest for `arch` from an index. arm64 prefers variant v8 and accepts an
 * entry without variant. No match is an error listing what the index does offer.
 */
export function selectPlatform(options: {
  manifests: readonly Descriptor[];
  arch: Arch;
  image: string;
}): Descriptor {
  const { architecture, variants } = OCI_ARCH[options.arch];
  const linux = options.manifests.filter(
    (m) => m.platform?.os === "linux" && m.platform.architecture === architecture,
  );
  for (const variant of variants) {
    const match = linux.find((m) => m.platform?.variant === variant);
    if (match) return match;
  }
  if (linux[0]) return linux[0];
  const offered = options.manifests.filter((m) => m.platform).map((m) => describePlatform(m.platform!));
  throw new RegistryError(
    "platform-mismatch",
    `${options.image} has no linux/${architecture} image; it offers ${offered.length ? offered.join(", ") : "no platforms"}`,
  );
}

/** A single-platform image must be built for the requested arch: a mismatch names both. */
export function checkImageArch(options: { config: ImageConfig; arch: Arch; image: string }): void {
  const { architecture } = OCI_ARCH[options.arch];
  if (options.config.architecture !== architecture || (options.config.os ?? "linux") !== "linux") {
    throw new RegistryError(
      "platform-mismatch",
      `${options.image} is a single-arch image for ${describePlatform(options.config)}, not linux/${architecture}`,
    );
  }
}
