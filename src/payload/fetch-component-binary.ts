import { copyFile, link, mkdir, stat, utimes } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import { sha256Hex } from "../registry/digest.ts";
import { withDigest, type ImageReference } from "../registry/image-reference.ts";
import { TESTS_EXTENSION_ARTIFACT } from "./probe-component.ts";
import { PayloadError } from "./payload-error.ts";

/** What a plan found for one component's binary; fetching it again must find exactly that. */
export interface PlannedBinary {
  tag: string;
  /** The component pullspec, for messages. */
  image: string;
  /** The image manifest for the arch, as planned. */
  digest: string;
  /** The binary's path inside the image, or the file name of its tests-extension referrer. */
  binaryPath: string;
  referrer?: string;
}

/**
 * Puts a component's test binary at `<outDir>/<content digest>/<name>` (a hard link to the cache,
 * or a copy across file systems) and marks it used, so that retention keeps it while runs use it.
 * The image is pinned to the planned digest; a moved tag or another referrer is an error.
 */
export async function fetchComponentBinary(options: {
  registry: Registry;
  reference: ImageReference;
  arch: Arch;
  planned: PlannedBinary;
  outDir: string;
}): Promise<{ binary: string }> {
  const { registry, planned } = options;
  // A pullspec pinned by digest resolves as it did when planning; a tag may have moved since.
  const reference = options.reference.digest
    ? options.reference
    : withDigest(options.reference, planned.digest);
  const image = await registry.resolveImage({ reference, arch: options.arch });
  if (image.digest !== planned.digest) {
    throw new PayloadError(
      "nothing-to-run",
      `${planned.tag}: ${planned.image} is ${image.digest} for ${options.arch} now, not ${planned.digest} as planned`,
    );
  }
  const found = planned.referrer
    ? await registry.findReferrerFile({
        image,
        ...TESTS_EXTENSION_ARTIFACT,
        title: basename(planned.binaryPath),
      })
    : await registry.findFile({ image, path: planned.binaryPath });
  if (found.found && "referrer" in found && found.referrer !== planned.referrer) {
    throw new PayloadError(
      "nothing-to-run",
      `${planned.tag}: the binary's referrer is ${found.referrer} now, not ${planned.referrer} as planned`,
    );
  }
  if (!found.found) {
    throw new PayloadError(
      "nothing-to-run",
      `${planned.tag}: the binary the plan found is gone: ${found.reason}`,
    );
  }
  const dir = join(options.outDir, sha256Hex(found.digest).slice(0, 32));
  const binary = join(dir, basename(planned.binaryPath));
  const exists = await stat(binary).then(
    (info) => info.size === found.size,
    () => false,
  );
  if (!exists) {
    await mkdir(dir, { recursive: true });
    // A hard link costs nothing; across file systems, copy. The cache keeps a linked blob until
    // retention removes this link (sweepDataDir), when evicting it frees its space.
    await link(found.path, binary).catch(() => copyFile(found.path, binary));
  } else {
    const now = new Date();
    await utimes(binary, now, now).catch(() => {});
  }
  return { binary };
}
