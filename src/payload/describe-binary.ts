import { join } from "node:path";
import type { Arch } from "../arch/arch.ts";
import { getInfo } from "../ote/get-info.ts";
import { listImages } from "../ote/list-images.ts";
import { prepareBinary } from "../ote/prepare-binary.ts";
import { binaryEnvironment } from "../runner/binary-environment.ts";

/** What a component's test binary says of itself: its build's source, and its tests' images. */
export interface BinaryDescription {
  /** `info`'s `source.commit` and `source.git_tree_state`; absent when `info` failed. */
  source?: { commit: string; gitTreeState: string };
  /** `<registry>/<name>:<version>` of every image its tests use, once each, in its order. */
  images?: string[];
  /** Why `info` or `images` gave nothing (a binary older than the `images` command, say). */
  note?: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Unpacks a test binary (as the runner does, under `<cacheDir>/unpacked`) and asks it `info` and,
 * with `images`, `images`. Neither failing is an error: the description says what is missing, so
 * one old binary does not cost the others theirs. The binary sees only the variables a test
 * binary may (binaryEnvironment), never the caller's secrets.
 */
export async function describeBinary(options: {
  binary: string;
  cacheDir: string;
  arch: Arch;
  images: boolean;
  env?: NodeJS.ProcessEnv;
}): Promise<BinaryDescription> {
  const env = binaryEnvironment(options.env ?? process.env);
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
    ...(images && "value" in images
      ? { images: [...new Set(images.value.map((i) => `${i.registry}/${i.name}:${i.version}`))] }
      : {}),
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
}
