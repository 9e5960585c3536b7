import { lstat, readdir, rm } from "node:fs/promises";
import { join, relative } from "node:path";

export interface CollectedArtifacts {
  /** Directory relative to the run's output directory. */
  dir: string;
  files: { path: string; bytes: number }[];
  /** Files removed because the bounds were reached (largest last in, first out). */
  omitted: number;
}

/**
 * Bounds what test binaries wrote to their EXTENSION_ARTIFACT_DIR: files are kept in name order
 * until `maxFiles` or `maxBytes` is reached, the rest (and anything that is not a regular file,
 * such as a symlink out of the directory) are removed. Undefined when the directory is empty or
 * missing.
 */
export async function collectArtifacts(options: {
  dir: string;
  outDir: string;
  maxFiles: number;
  maxBytes: number;
}): Promise<CollectedArtifacts | undefined> {
  const found: { path: string; bytes: number; regular: boolean }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else {
        const info = await lstat(path);
        found.push({ path, bytes: info.size, regular: info.isFile() });
      }
    }
  };
  await walk(options.dir);
  if (found.length === 0) return undefined;
  const files: CollectedArtifacts["files"] = [];
  let bytes = 0;
  let omitted = 0;
  for (const file of found) {
    if (file.regular && files.length < options.maxFiles && bytes + file.bytes <= options.maxBytes) {
      files.push({ path: relative(options.outDir, file.path), bytes: file.bytes });
      bytes += file.bytes;
    } else {
      omitted += 1;
      await rm(file.path, { force: true });
    }
  }
  return { dir: relative(options.outDir, options.dir), files, omitted };
}
