import { join, relative, resolve, sep } from "node:path";
import { isWithin } from "@netstress/core/model/is-within.ts";

const SHARD_ID = /^[a-z0-9]+-\d+-\d+$/;

/**
 * The link of a run's artifact file in its report: `<publicUrl>/runs/<id>/artifacts/<shard>/<path
 * under the shard's artifacts/>`, the address the bot serves it at (see runArtifactFile).
 */
export function runArtifactHref(input: {
  /** The run's directory (see runDir). */
  runDir: string;
  runId: string;
  /** The bot's address; absent: links start at the host's root. */
  publicUrl?: string;
}): (file: string) => string {
  const shards = join(input.runDir, "shards");
  const base = `${(input.publicUrl ?? "").replace(/\/+$/, "")}/runs/${input.runId}/artifacts`;
  return (file) => {
    const [shard, artifacts, ...rest] = relative(shards, file).split(sep);
    const parts = artifacts === "artifacts" ? [shard!, ...rest] : [shard!, artifacts ?? "", ...rest];
    return `${base}/${parts.map(encodeURIComponent).join("/")}`;
  };
}

/**
 * The file a request for `/runs/<id>/artifacts/<segments…>` names: `<shard>/<path>` is
 * `<run dir>/shards/<shard>/artifacts/<path>`, and nothing outside that directory; undefined for
 * anything else (an empty, "." or ".." name, a name with a slash or NUL in it).
 */
export function runArtifactFile(input: {
  /** The run's directory (see runDir). */
  runDir: string;
  segments: readonly string[];
}): { root: string; file: string } | undefined {
  const [shard, ...path] = input.segments;
  if (!shard || !SHARD_ID.test(shard) || path.length === 0) return undefined;
  if (path.some((s) => s === "" || s === "." || s === ".." || /[/\\\0]/.test(s))) return undefined;
  const root = resolve(input.runDir, "shards", shard, "artifacts");
  const file = resolve(root, ...path);
  if (!isWithin(root, file)) return undefined;
  return { root, file };
}
