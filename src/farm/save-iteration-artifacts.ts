import { randomBytes } from "node:crypto";
import { link, mkdir, readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { isWithin } from "@netstress/core/model/is-within.ts";
import {
  iterationArtifactsDir,
  iterationArtifactsIndex,
  iterationArtifactsSchema,
  type IterationArtifacts,
  type OmittedArtifact,
} from "../runner/iteration-artifacts.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import type { StreamedFile } from "./record-stream.ts";
import { safeArtifactPath } from "./safe-artifact-path.ts";

/** What the bot keeps of the files pods stream: per iteration, and per shard (one run's iterations). */
export interface ArtifactLimits {
  iterationBytes: number;
  iterationFiles: number;
  runBytes: number;
}

export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = {
  iterationBytes: 16 * 1024 * 1024,
  iterationFiles: 500,
  runBytes: 256 * 1024 * 1024,
};

/** Left-out files an index names one by one. */
const MAX_OMITTED_LISTED = 200;

const COMPONENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/**
 * Keeps the artifact files a shard's pods streamed under `<outDir>/artifacts/iteration-<n>/<arm>/
 * <component>/<path>`, with an index `<outDir>/artifacts/iteration-<n>.json` saying what was kept
 * and what was not. Nothing the pod says is trusted: an arm or component the shard does not run, a
 * path that is not a plain relative one, and anything past the limits is refused with its reason;
 * each file is written to a temporary name and linked into place, so a reader never sees half a
 * file and an existing file is never overwritten.
 */
export function createArtifactSaver(options: {
  outDir: string;
  /** The components each arm of the shard runs. */
  components: Partial<Record<Arm, readonly string[]>>;
  limits?: ArtifactLimits;
}) {
  const limits = options.limits ?? DEFAULT_ARTIFACT_LIMITS;
  const root = resolve(options.outDir);
  /** Bytes kept by the shard so far: counted from the indexes on disk when first needed. */
  let runBytes: number | undefined;
  let counting: Promise<number> | undefined;
  const keptSoFar = async () => {
    const dir = join(root, "artifacts");
    const names = await readdir(dir).catch(() => [] as string[]);
    let total = 0;
    for (const name of names.filter((n) => /^iteration-\d+\.json$/.test(n))) {
      const index = await readIndex(join(dir, name));
      total += index?.files.reduce((sum, f) => sum + f.bytes, 0) ?? 0;
    }
    return total;
  };

  /** Saves of one iteration, in turn: its arms' pods share its index. */
  const saving = new Map<number, Promise<unknown>>();
  const save = async (input: SaveIterationArtifactsInput): Promise<IterationArtifacts | undefined> => {
    if (input.files.length === 0 && input.omitted.length === 0) return undefined;
    if (runBytes === undefined) {
      counting ??= keptSoFar();
      const counted = await counting;
      runBytes ??= counted;
    }
    const base = join(root, iterationArtifactsDir(input.iteration));
    const indexPath = join(root, iterationArtifactsIndex(input.iteration));
    // What the iteration's other arms' pods saved stays in the index.
    const others = input.arm ? await readIndex(indexPath) : undefined;
    const ofOthers = <T extends { arm?: Arm }>(list: readonly T[] | undefined) =>
      (list ?? []).filter((entry) => entry.arm !== undefined && entry.arm !== input.arm);
    const index: IterationArtifacts = {
      iteration: input.iteration,
      files: ofOthers(others?.files),
      omitted: [...ofOthers(others?.omitted), ...input.omitted],
    };
    let iterationBytes = index.files.reduce((sum, f) => sum + f.bytes, 0);
    for (const file of input.files) {
      const where = { arm: file.arm, component: file.component, path: file.path.slice(0, 1024) };
      const refuse = (reason: string) => index.omitted.push({ ...where, size: file.content.length, reason });
      if (!options.components[file.arm]) {
        refuse(`the shard runs no ${file.arm} arm`);
        continue;
      }
      if (!COMPONENT.test(file.component) || !options.components[file.arm]!.includes(file.component)) {
        refuse(`the ${file.arm} arm runs no component named ${JSON.stringify(file.component.slice(0, 253))}`);
        continue;
      }
      const checked = safeArtifactPath(file.path);
      if (!checked.ok) {
        refuse(checked.reason);
        continue;
      }
      const target = resolve(base, file.arm, file.component, ...checked.segments);
      if (!isWithin(base, target)) {
        refuse("refused path: it leads outside the iteration's directory");
        continue;
      }
      if (index.files.length >= limits.iterationFiles) {
        refuse(`over the limit of ${limits.iterationFiles} files per iteration`);
        continue;
      }
      if (iterationBytes + file.content.length > limits.iterationBytes) {
        refuse(`over the limit of ${limits.iterationBytes} bytes per iteration`);
        continue;
      }
      // Reserved before the write: iterations of a shard are saved concurrently.
      if (runBytes + file.content.length > limits.runBytes) {
        refuse(`over the limit of ${limits.runBytes} bytes of artifacts per run`);
        continue;
      }
      runBytes += file.content.length;
      const written = await writeOnce(target, file.content);
      if (written.kind !== "written") runBytes -= file.content.length;
      if (written.kind === "failed") {
        refuse(written.reason);
        continue;
      }
      const path = checked.segments.join("/");
      if (written.kind === "kept") {
        refuse("a different file of that name was collected before; it is kept");
        index.files.push({ arm: file.arm, component: file.component, path, bytes: written.bytes });
        continue;
      }
      iterationBytes += file.content.length;
      index.files.push({ arm: file.arm, component: file.component, path, bytes: file.content.length });
    }
    // A pod may list left-out files without end: the index keeps the first ones and counts the rest.
    if (index.omitted.length > MAX_OMITTED_LISTED) {
      const more = index.omitted.length - MAX_OMITTED_LISTED;
      index.omitted = [
        ...index.omitted.slice(0, MAX_OMITTED_LISTED),
        { reason: `and ${more} more file(s) not collected` },
      ];
    }
    await mkdir(dirname(indexPath), { recursive: true });
    const tmp = `${indexPath}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(tmp, `${JSON.stringify(index)}\n`);
    await rename(tmp, indexPath);
    return index;
  };
  return function saveIterationArtifacts(input: SaveIterationArtifactsInput) {
    const saved = (saving.get(input.iteration) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => save(input));
    saving.set(input.iteration, saved);
    return saved;
  };
}

export interface SaveIterationArtifactsInput {
  iteration: number;
  files: readonly StreamedFile[];
  omitted: readonly OmittedArtifact[];
  /** The one arm whose pod streamed these; the index keeps what the iteration's other arms saved. */
  arm?: Arm;
}

/** Writes a new file atomically; a file already there stays ("kept", or "same" when its content is). */
async function writeOnce(
  target: string,
  content: Buffer,
): Promise<
  { kind: "written" | "same" } | { kind: "kept"; bytes: number } | { kind: "failed"; reason: string }
> {
  try {
    await mkdir(dirname(target), { recursive: true });
  } catch {
    return { kind: "failed", reason: "its directory clashes with a file of the same name" };
  }
  const tmp = join(dirname(target), `.${randomBytes(6).toString("hex")}.partial`);
  try {
    await writeFile(tmp, content, { flag: "wx", mode: 0o644 });
    await link(tmp, target);
    return { kind: "written" };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST")
      return { kind: "failed", reason: `not written: ${(error as Error).message}` };
    const existing = await readFile(target).catch(() => undefined);
    if (!existing) return { kind: "failed", reason: "a directory of that name was collected before" };
    return existing.equals(content) ? { kind: "same" } : { kind: "kept", bytes: existing.length };
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function readIndex(path: string): Promise<IterationArtifacts | undefined> {
  try {
    return iterationArtifactsSchema.parse(JSON.parse(await readFile(path, "utf8")));
  } catch {
    return undefined;
  }
}
