import { join } from "node:path";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { getInfo } from "../ote/get-info.ts";
import { listImages } from "../ote/list-images.ts";
import { prepareBinary } from "../ote/prepare-binary.ts";
import type { OteImage } from "../ote/schemas.ts";
import { binaryEnvironment } from "../runner/binary-environment.ts";
import type { TestImage } from "./resolved-plan.ts";

/** What a component's test binary says of itself: its build's source, and its tests' images. */
export interface BinaryDescription {
  /** `info`'s `source.commit` and `source.git_tree_state`; absent when `info` failed. */
  source?: { commit: string; gitTreeState: string };
  /**
   * Every image its tests use (`<registry>/<name>:<version>`), once each, in its order; `mapped`
   * where the extension wants it mirrored to, when it says.
   */
  images?: TestImage[];
  /** Why `info` or `images` gave nothing (a binary older than the `images` command, say). */
  note?: string;
}

const pullspec = (image: { registry: string; name: string; version: string }) =>
  `${image.registry}/${image.name}:${image.version}`;

/** The framework's image list as pullspecs, each (with its mapping) once: indexes differ, images repeat. */
function testImages(list: readonly OteImage[]): TestImage[] {
  const seen = new Map<string, TestImage>();
  for (const entry of list) {
    const image: TestImage = {
      image: pullspec(entry),
      ...(entry.mapped ? { mapped: pullspec(entry.mapped) } : {}),
    };
    seen.set(`${image.image} ${image.mapped ?? ""}`, image);
  }
  return [...seen.values()];
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Unpacks a test binary (as the runner does, under `<cacheDir>/unpacked`) and asks it `info` and,
 * with `images`, `images`. Neither failing is an error: the description says what is missing, so
 * one old binary does not cost the others theirs. The binary sees only the variables a test
 * binary may (binaryEnvironment), never the caller's secrets, and no KUBECONFIG.
 */
export async function describeBinary(options: {
  binary: string;
  cacheDir: string;
  arch: Arch;
  images: boolean;
  env?: NodeJS.ProcessEnv;
}): Promise<BinaryDescription> {
  // `info` and `images` need no cluster: the binary is not told of one.
  const { KUBECONFIG: _cluster, ...env } = binaryEnvironment(options.env ?? process.env);
  let executable: string;
  try {
    ({ path: executable } = await prepareBinary({
      path: options.binary,
      cacheDir: join(options.cacheDir, "unpacked"),
      arch: options.arch,
    }));
  } catch (error) {
    return { note: message(error) };
  }
  const [info, images] = await Promise.all([
    getInfo({ binary: executable, env }).then(
      (value) => ({ value }),
      (error: unknown) => ({ error: message(error) }),
    ),
    options.images
      ? listImages({ binary: executable, env }).then(
          (value) => ({ value }),
          (error: unknown) => ({ error: message(error) }),
        )
      : undefined,
  ]);
  const notes: string[] = [];
  if ("error" in info) notes.push(info.error);
  if (images && "error" in images) {
    const version = "value" in info ? ` (extension API ${info.value.apiVersion})` : "";
    notes.push(`the binary${version} does not list its test images: ${images.error}`);
  }
  return {
    ...("value" in info
      ? { source: { commit: info.value.source.commit, gitTreeState: info.value.source.git_tree_state } }
      : {}),
    ...(images && "value" in images ? { images: testImages(images.value) } : {}),
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
}
