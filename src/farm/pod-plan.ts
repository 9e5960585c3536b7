import { posix } from "node:path";
import { parseImageReference, formatImageReference, withDigest } from "../registry/image-reference.ts";
import type { ExecutionPlan } from "@netstress/core/model/execution-plan.ts";
import { testBinaryPath, type TestBinaryRegistry } from "../payload/test-binary-registry.ts";
import { FarmError } from "./farm-error.ts";

/** Where the pod keeps its working files, and the binaries copied out of their images (emptyDirs). */
export const WORK_DIR = "/var/run/netstress";
export const BINARY_DIR = "/var/run/netstress-bin";

/** A test binary to copy out of its component image before the runner starts. */
export interface BinaryCopy {
  /** The component image, pinned by digest so the node pulls exactly what was planned. */
  image: string;
  /** Where the image keeps the binary (the test binary registry's path for the tag). */
  source: string;
  /** Its file name in BINARY_DIR, the runner's working directory. */
  file: string;
}

const TAG = /^[a-z0-9][a-z0-9._-]*$/i;

/**
 * The plan as the pod sees it. The bot's plan points at binaries on the bot's disk; in the pod,
 * each binary is copied out of its component image (pulled by digest for the node's arch) into
 * BINARY_DIR, the runner's working directory, and the plan names it relative to that. Equal
 * images share one copy.
 */
export function planForPod(options: { plan: ExecutionPlan; testBinaries: TestBinaryRegistry }): {
  plan: ExecutionPlan;
  copies: BinaryCopy[];
} {
  const copies: BinaryCopy[] = [];
  const byImage = new Map<string, BinaryCopy>();
  const arms = options.plan.arms.map((arm) => ({
    ...arm,
    components: arm.components.map((component) => {
      if (!TAG.test(component.component)) {
        throw new FarmError("invalid-shard", `"${component.component}" is not a payload tag name`);
      }
      if (component.referrer) {
        throw new FarmError(
          "invalid-shard",
          `${component.component}: its binary comes from a tests-extension referrer artifact (${component.referrer}), ` +
            "and build-farm pods copy binaries out of component images: ship the binary in the image, or run without a farm",
        );
      }
      const image = pinnedImage(component.component, component.image, component.digest);
      // Where discovery found it (a table per release version, an ImageStream's annotation), else the table.
      const source = component.imagePath ?? testBinaryPath(options.testBinaries, component.component);
      const key = `${image} ${source}`;
      let copy = byImage.get(key);
      if (!copy) {
        copy = { image, source, file: `${copies.length}-${posix.basename(source)}` };
        byImage.set(key, copy);
        copies.push(copy);
      }
      // Where the bot keeps a payload's layout means nothing in a pod, and is not the farm's to know.
      const { layout: _bots, ...portable } = component;
      return { ...portable, binary: copy.file };
    }),
  }));
  // The selection (suite, disruptive tests, environment) travels with the plan.
  return { plan: { ...options.plan, arms }, copies };
}

function pinnedImage(tag: string, image: string | undefined, digest: string | undefined): string {
  if (!image) {
    throw new FarmError(
      "invalid-shard",
      `${tag}: the plan names no image for its binary; a build farm pulls binaries from images`,
    );
  }
  const reference = parseImageReference(image);
  if (reference.kind !== "registry") {
    throw new FarmError(
      "invalid-shard",
      `${tag}: ${image} is a local image layout, which a cluster cannot pull`,
    );
  }
  const pinned = digest ?? reference.digest;
  if (!pinned)
    throw new FarmError("invalid-shard", `${tag}: ${image} has no digest; the farm runs pinned images only`);
  return formatImageReference(withDigest(reference, pinned));
}
