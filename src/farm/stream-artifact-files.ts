import { constants } from "node:fs";
import { open, readlink } from "node:fs/promises";
import { join, relative } from "node:path";
import type { OmittedArtifact } from "../runner/iteration-artifacts.ts";
import type { RunManifest } from "../runner/run-manifest.ts";
import { formatFileLines, formatOmittedLine } from "./record-stream.ts";

/**
 * What the in-pod runner streams of its artifacts by default: kubelet rotates a container's log at
 * 10 MiB (containerLogMaxSize), and the collector reads only the current log, so the records, the
 * files and the trailer together must stay well under it.
 */
export const DEFAULT_STREAM_ARTIFACT_BYTES = 4 * 1024 * 1024;

export interface StreamedArtifactsSummary {
  files: number;
  /** Bytes of file lines written (base64 and framing included). */
  bytes: number;
  omitted: number;
}

/**
 * Writes the artifact files a run collected (run.json's `components[].artifacts`) as framed file
 * lines, in the manifest's order, while they fit `budgetBytes` of stream; every file that does not
 * fit, and every file the runner's own bounds left out, is listed as omitted instead. A file is
 * streamed only while it is still what was collected: a regular file of its size, opened inside
 * its artifact directory. The tests that wrote it (in their own container, sharing the directory)
 * may have put a symlink in its place, or in a directory's, to a file of the runner's such as its
 * stream key: the runner reads files in its own container, where such a link would resolve.
 */
export async function streamArtifactFiles(input: {
  /** The run's output directory, its real path (resolved before any test could change it). */
  outDir: string;
  components: RunManifest["components"];
  budgetBytes: number;
  write: (text: string) => Promise<void>;
}): Promise<StreamedArtifactsSummary> {
  const summary: StreamedArtifactsSummary = { files: 0, bytes: 0, omitted: 0 };
  let sequence = 0;
  const omit = async (omitted: OmittedArtifact) => {
    summary.omitted += 1;
    await input.write(formatOmittedLine(omitted));
  };
  for (const c of input.components) {
    const artifacts = c.artifacts;
    if (!artifacts) continue;
    const where = { arm: c.arm, component: c.component };
    for (const file of artifacts.files) {
      const path = relative(artifacts.dir, file.path).split("\\").join("/");
      // Base64 makes four characters of three bytes; a file that cannot fit is not read.
      if (summary.bytes + Math.ceil(file.bytes / 3) * 4 > input.budgetBytes) {
        await omit({ ...where, path, size: file.bytes, reason: budgetReason(input.budgetBytes) });
        continue;
      }
      const content = await readCollectedFile(
        join(input.outDir, artifacts.dir),
        join(input.outDir, file.path),
        file.bytes,
      );
      if (!content) {
        await omit({
          ...where,
          path,
          size: file.bytes,
          reason: "it could not be read in the pod as the regular file collected in its directory",
        });
        continue;
      }
      const lines = formatFileLines({ firstSequence: sequence, ...where, path, content });
      const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
      if (summary.bytes + bytes > input.budgetBytes) {
        await omit({ ...where, path, size: content.length, reason: budgetReason(input.budgetBytes) });
        continue;
      }
      for (const line of lines) await input.write(line);
      sequence += lines.length;
      summary.files += 1;
      summary.bytes += bytes;
    }
    if (artifacts.omitted > 0)
      await omit({
        ...where,
        reason: `${artifacts.omitted} file(s) left out by the runner's bounds on an artifact directory`,
      });
  }
  return summary;
}

const budgetReason = (budget: number) =>
  `over the pod's stream budget of ${budget} bytes (netstress run --stream-artifact-bytes)`;

/**
 * The file at `path`, if it is a regular file of `bytes` bytes that was opened inside `root`: the
 * last component is not followed (O_NOFOLLOW; a FIFO does not block the open), and where the
 * kernel says the open file is (/proc/self/fd) must lie under root, so that no directory of the
 * path was a symlink either. Undefined otherwise.
 */
async function readCollectedFile(root: string, path: string, bytes: number): Promise<Buffer | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size !== bytes) return undefined;
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (opened === undefined || !opened.startsWith(`${root}/`)) return undefined;
    const content = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(content, 0, bytes, 0);
    return bytesRead === bytes ? content : undefined;
  } finally {
    await handle.close();
  }
}
