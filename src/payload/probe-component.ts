import { posix } from "node:path";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry, ResolvedImage } from "../registry/create-registry.ts";
import type { ImageReference } from "../registry/image-reference.ts";
import { RegistryError } from "../registry/registry-error.ts";
import { locateImage } from "./locate-image.ts";
import type { ComponentCandidate } from "./plan-components.ts";
import type { ResolvedComponent } from "./resolved-plan.ts";

const COMMIT_LABEL = "io.openshift.build.commit.id";
const SOURCE_LABEL = "io.openshift.build.source-location";
/** The OCI referrer contract of openshift-tests-extension: one gzip layer titled with the binary's file name. */
export const TESTS_EXTENSION_ARTIFACT = {
  artifactType: "application/vnd.openshift.tests-extension.v1+gzip",
  layerMediaType: "application/gzip",
} as const;

const ABANDONED: ReadonlySet<string> = new Set(["deadline-exceeded", "budget-exceeded"]);

/** Where a candidate's binary is: a referrer artifact, a file in the image, or neither. */
type Found = { referrer?: string } | { reason: string };

async function locateBinary(options: {
  registry: Registry;
  image: ResolvedImage;
  binaryPath: string;
  keepBinary: boolean;
}): Promise<Found> {
  const { registry, image, keepBinary } = options;
  // A referrer is cheaper to find than a file (no layer is read) and, where one exists, wins: it is
  // how a binary is shipped without rebuilding the image.
  const query = { image, ...TESTS_EXTENSION_ARTIFACT, title: posix.basename(options.binaryPath) };
  const referrer = keepBinary
    ? await registry.findReferrerFile(query)
    : await registry.lookUpReferrerFile(query);
  if (referrer.found) return { referrer: referrer.referrer };
  const where = { image, path: options.binaryPath };
  const file = keepBinary ? await registry.findFile(where) : await registry.lookUpFile(where);
  return file.found ? {} : { reason: `no test binary: ${file.reason}` };
}

/**
 * Reads a candidate's image for the arch and finds its test binary: a tests-extension referrer of
 * the image, else the file at the candidate's path (read from the top layer down, stopping at the
 * file or a whiteout over it). Whatever is missing (the image, the arch, the binary) is reported in
 * `reason`, not thrown: one broken component must not hide the others. A candidate probed only by
 * convention that has no binary is not a component at all: undefined. An image that cannot be read
 * is always reported. A commit not known from the payload comes from the image labels.
 */
export async function probeComponent(options: {
  registry: Registry;
  candidate: ComponentCandidate;
  arch: Arch;
  payload: ImageReference;
  /** Keep the binary in the cache (about to run it) rather than only check that it is there. */
  keepBinary?: boolean;
}): Promise<ResolvedComponent | undefined> {
  const { registry, candidate, arch } = options;
  // Keys in the order of the JSON contract, so that `plan -o json` reads the same for every component.
  const result = (fields: {
    digest: string | null;
    commit: string | null;
    sourceLocation: string | null;
    referrer?: string;
    reason?: string;
  }): ResolvedComponent => ({
    tag: candidate.tag,
    image: candidate.image,
    digest: fields.digest,
    binaryPath: candidate.binaryPath,
    source: candidate.source,
    commit: fields.commit,
    sourceLocation: fields.sourceLocation,
    available: fields.reason === undefined,
    discoveredBy: fields.referrer && candidate.basis !== "imagestream" ? "referrer" : candidate.basis,
    ...(fields.referrer ? { referrer: fields.referrer } : {}),
    ...(candidate.imageStreamTag ? { imageStreamTag: candidate.imageStreamTag } : {}),
    ...(candidate.binaryArgs ? { binaryArgs: candidate.binaryArgs } : {}),
    ...(candidate.rebuiltFromSameSource ? { rebuiltFromSameSource: true } : {}),
    ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
  });
  let { commit, sourceLocation } = candidate;
  let digest: string | null = null;
  try {
    const reference = await locateImage({ pullspec: candidate.image, payload: options.payload });
    const image = await registry.resolveImage({ reference, arch });
    digest = image.digest;
    const found = await locateBinary({
      registry,
      image,
      binaryPath: candidate.binaryPath,
      keepBinary: options.keepBinary ?? false,
    });
    if ("reason" in found && !candidate.required) return undefined;
    if (commit === null) {
      const { labels } = await registry.readConfig(image);
      commit = labels[COMMIT_LABEL] || null;
      sourceLocation = labels[SOURCE_LABEL] || sourceLocation;
    }
    return result({ digest, commit, sourceLocation, ...found });
  } catch (error) {
    // A spent budget ends the whole plan: reporting it per component would hide why every one failed.
    if (error instanceof RegistryError && !ABANDONED.has(error.code))
      return result({ digest, commit, sourceLocation, reason: error.message });
    throw error;
  }
}
