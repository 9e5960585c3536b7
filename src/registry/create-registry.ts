import { setMaxListeners } from "node:events";
import { createWriteStream } from "node:fs";
import { realpath, rm } from "node:fs/promises";
import { resolve, sep } from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { pino, type Logger } from "pino";
import { z } from "zod";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { createContentCache, defaultCacheDir, type ContentCache } from "./content-cache.ts";
import { parseArtifactManifest } from "./artifact-manifest.ts";
import { createDigestVerifier, verifyDigest } from "./digest.ts";
import {
  createDistributionClient,
  type DistributionClient,
  type DistributionClientOptions,
  type RawManifest,
} from "./distribution-client.ts";
import { readBody } from "./http-attempt.ts";
import {
  formatImageReference,
  parseImageReference,
  withDigest,
  type ImageReference,
} from "./image-reference.ts";
import {
  parseImageConfig,
  descriptorSchema,
  parseManifest,
  type Descriptor,
  type ImageConfig,
  type ImageManifest,
} from "./manifest.ts";
import { openLayoutBlob, readLayoutManifest } from "./oci-layout-reader.ts";
import { loadCredentials } from "./registry-credentials.ts";
import { RegistryError } from "./registry-error.ts";
import { createPathJudge, directoryOf, type LayerEntry, type LayerVerdict } from "./path-judge.ts";
import { normalizeImagePath } from "./normalize-image-path.ts";
import { scanLayer } from "./scan-layer.ts";
import { checkImageArch, selectPlatform } from "./select-platform.ts";

/** A single-platform image, chosen for an arch and pinned by digest. */
export interface ResolvedImage {
  /** The reference as given. */
  reference: ImageReference;
  /** The same image pinned to the platform manifest's digest. */
  pinned: ImageReference;
  /** Digest of the platform-specific manifest. */
  digest: string;
  /** Digest of the index (manifest list) it was chosen from, when there was one. */
  indexDigest?: string;
  manifest: ImageManifest;
}

/** Where a file is in an image: its content digest and layer, or why it is not there. */
export type FileFacts =
  { found: true; digest: string; size: number; layer: string } | { found: false; reason: string };

/** A file found and available on disk (in the cache) at `path`. */
export type FileLookup =
  (Extract<FileFacts, { found: true }> & { path: string }) | Extract<FileFacts, { found: false }>;

/** A file attached to an image as an OCI 1.1 referrer artifact (one layer), or why there is none. */
export type ReferrerFacts =
  | {
      found: true;
      /** Digest of the artifact manifest. */
      referrer: string;
      /** The manifest it refers to: the index the image was chosen from, or the single-arch image. */
      subject: string;
      /** Digest and size of the artifact's layer: the file's content. */
      digest: string;
      size: number;
    }
  | { found: false; reason: string };

/** A referrer's file, available on disk (in the cache) at `path`. */
export type ReferrerLookup =
  (Extract<ReferrerFacts, { found: true }> & { path: string }) | Extract<ReferrerFacts, { found: false }>;

/** Which referrer artifact: its artifact type, the media type of its one layer, and that layer's title. */
export interface ReferrerQuery {
  image: ResolvedImage;
  artifactType: string;
  layerMediaType: string;
  /** `org.opencontainers.image.title` of the layer, e.g. the file name. */
  title: string;
}

export interface Registry {
  /** Reads a reference's manifest and picks the image for `arch` (an index) or checks it (a single image). */
  resolveImage(options: { reference: string | ImageReference; arch: Arch }): Promise<ResolvedImage>;
  /** The image's config: platform and labels. */
  readConfig(image: ResolvedImage): Promise<ImageConfig>;
  /**
   * Finds a file in the topmost layer that has it, honouring whiteouts and links; the file lands in
   * the cache, keyed by its content digest. What was found (or not) is remembered per image digest.
   */
  findFile(options: { image: ResolvedImage; path: string }): Promise<FileLookup>;
  /**
   * Whether and where the file is in the image, without keeping its content: what planning needs.
   * A later findFile of the same file reads its layer again unless the content is cached.
   */
  lookUpFile(options: { image: ResolvedImage; path: string }): Promise<FileFacts>;
  /**
   * Finds the referrer artifact whose one layer has the title, referring to the manifest the
   * reference names (the index of a multi-arch image), and says where its content is, without
   * fetching it. Referrer lists are remembered
   * for `referrersMaxAgeMs` (referrers can be attached later); manifests, by digest, for good.
   */
  lookUpReferrerFile(query: ReferrerQuery): Promise<ReferrerFacts>;
  /** As lookUpReferrerFile, and puts the layer (verified) in the cache. */
  findReferrerFile(query: ReferrerQuery): Promise<ReferrerLookup>;
  /** Resolves when the cache's background bookkeeping (size accounting, eviction) is done. */
  settled(): Promise<void>;
  /**
   * The same registry bounded for one task (planning a run): every request, retry wait and body
   * read stops when `signal` aborts or the task's time is up, and reading more than its bytes
   * (manifests and blobs, from registries and layouts) fails it. The cache is shared.
   */
  withBudget(budget: { signal?: AbortSignal }): Registry;
  /** The client it reads through: what writes (a PR payload's push) go through too. */
  readonly client: DistributionClient;
}

/** What one task (one plan) may cost: bytes read from registries and layouts, and wall-clock time. */
export interface TaskBudget {
  maxBytes: number;
  timeoutMs: number;
}

export const DEFAULT_TASK_BUDGET: TaskBudget = { maxBytes: 16 * 1024 ** 3, timeoutMs: 10 * 60_000 };
/** Decompressed size at which a layer is refused: test-binary layers are far smaller. */
export const DEFAULT_MAX_LAYER_BYTES = 2 * 1024 ** 3;

export interface RegistryOptions extends DistributionClientOptions {
  cacheDir?: string;
  cacheMaxBytes?: number;
  /** A ready client (tests and benches inject one); by default built from the options above. */
  client?: DistributionClient;
  /** Decompressed size at which a layer is refused (gzip bombs). */
  maxLayerBytes?: number;
  /** What one withBudget task may cost. */
  taskBudget?: Partial<TaskBudget>;
  /**
   * Directories OCI layouts (`oci:DIR`) may be read from; any other layout is refused. By default
   * every one (the command line, whose user names them); the bot allows only its operator's.
   */
  layoutDirs?: readonly string[];
  /** Size at which a file found in an image is refused. */
  maxFileBytes?: number;
  /** How long a referrers list is trusted before it is asked again (default one hour). */
  referrersMaxAgeMs?: number;
  /** The clock referrer lists are dated by (tests move it). */
  now?: () => number;
  logger?: Logger;
}

const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const MAX_LINK_HOPS = 16;
const TITLE_ANNOTATION = "org.opencontainers.image.title";
const listingRecordSchema = z.array(
  z.object({ name: z.string(), type: z.string(), linkname: z.string().optional() }),
);
const referrersRecordSchema = z.object({ checkedAt: z.number(), manifests: z.array(descriptorSchema) });
const lookupRecordSchema = z.union([
  z.object({ found: z.literal(true), digest: z.string(), size: z.number(), layer: z.string() }),
  z.object({ found: z.literal(false), reason: z.string() }),
]);

/**
 * The one way to read images: registry references and `oci:` layouts alike, every manifest and
 * blob fetched by digest verified, and everything immutable served from the content cache.
 */
export async function createRegistry(options: RegistryOptions = {}): Promise<Registry> {
  const logger =
    options.logger ?? pino({ name: "registry", level: process.env.LOG_LEVEL ?? "warn" }, pino.destination(2));
  const cache = createContentCache({
    dir: options.cacheDir ?? defaultCacheDir(),
    maxBytes: options.cacheMaxBytes,
  });
  const client =
    options.client ??
    createDistributionClient({
      ...options,
      credentials: options.credentials ?? (await loadCredentials()),
      retry: {
        ...options.retry,
        onRetry: (error, attempt, delayMs) =>
          logger.warn({ attempt, delayMs, err: error.message }, "registry request failed; retrying"),
      },
    });
  return buildRegistry({
    cache,
    client,
    maxLayerBytes: options.maxLayerBytes ?? DEFAULT_MAX_LAYER_BYTES,
    taskBudget: { ...DEFAULT_TASK_BUDGET, ...options.taskBudget },
    ...(options.layoutDirs ? { layoutDirs: await Promise.all(options.layoutDirs.map(canonicalDir)) } : {}),
    maxFileBytes: options.maxFileBytes ?? 2 * 1024 ** 3,
    referrersMaxAgeMs: options.referrersMaxAgeMs ?? 60 * 60_000,
    now: options.now ?? Date.now,
    logger,
  });
}

function buildRegistry(deps: {
  cache: ContentCache;
  client: DistributionClient;
  maxLayerBytes: number;
  maxFileBytes: number;
  referrersMaxAgeMs: number;
  now: () => number;
  logger: Logger;
  taskBudget: TaskBudget;
  /** Canonical directories layouts may be read from; absent: any. */
  layoutDirs?: readonly string[];
  /** Set on a task's registry: its signal and the bytes it has read so far. */
  task?: { signal: AbortSignal; read: number };
}): Registry {
  const { cache, client, task } = deps;
  const requestOptions = task ? { signal: task.signal } : {};

  const checkTask = (what: string) => {
    if (task?.signal.aborted)
      throw new RegistryError("deadline-exceeded", `${what}: ${abandonReason(task.signal)}`);
  };
  /** Counts bytes read against the task's budget; beyond it, fails the read. */
  const charge = (bytes: number, what: string): RegistryError | undefined => {
    if (!task) return undefined;
    task.read += bytes;
    if (task.read <= deps.taskBudget.maxBytes) return undefined;
    return new RegistryError(
      "budget-exceeded",
      `${what}: this task has read more than the ${deps.taskBudget.maxBytes} bytes it may read`,
    );
  };
  /** A layout outside the operator's directories is refused: a payload must not name files on the bot's disk. */
  const checkLayout = async (ref: ImageReference, what: string) => {
    if (ref.kind !== "oci-layout" || !deps.layoutDirs) return;
    const dir = await canonicalDir(ref.dir);
    if (!deps.layoutDirs.some((allowed) => dir === allowed || dir.startsWith(allowed + sep))) {
      throw new RegistryError(
        "refused",
        `${what}: OCI layouts are read only from the directories this bot's operator configured`,
      );
    }
  };
  const metered = (body: Readable, what: string): Readable => {
    if (!task) return body;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        callback(charge(chunk.length, what) ?? null, chunk);
      },
    });
    body.once("error", (error) => meter.destroy(error));
    // A reader that gives up on the meter gives up on the body too (it holds a request slot).
    meter.once("close", () => body.destroy());
    return body.pipe(meter);
  };

  async function fetchManifest(ref: ImageReference): Promise<RawManifest> {
    if (ref.digest) {
      const cached = await cache.read(ref.digest);
      if (cached) return { digest: ref.digest, mediaType: "", bytes: cached };
    }
    const what = `manifest of ${formatImageReference(ref)}`;
    checkTask(what);
    await checkLayout(ref, what);
    const raw =
      ref.kind === "oci-layout"
        ? await readLayoutManifest(ref)
        : await client.getManifest(ref, requestOptions);
    const overspent = charge(raw.bytes.length, what);
    if (overspent) throw overspent;
    if (ref.digest) verifyDigest({ bytes: raw.bytes, expected: ref.digest, what });
    if (ref.kind === "registry") cache.write(raw.digest, raw.bytes);
    return raw;
  }

  const openBlob = async (ref: ImageReference, digest: string): Promise<Readable> => {
    const what = `blob ${digest} of ${formatImageReference(ref)}`;
    checkTask(what);
    await checkLayout(ref, what);
    const body =
      ref.kind === "oci-layout"
        ? await openLayoutBlob(ref, digest)
        : await client.openBlob(ref, digest, requestOptions);
    return metered(body, what);
  };

  async function readSmallBlob(ref: ImageReference, descriptor: Descriptor, what: string): Promise<Buffer> {
    const cached = await cache.read(descriptor.digest);
    if (cached) return cached;
    const body = await openBlob(ref, descriptor.digest);
    const bytes = await readBody({ body, maxBytes: MAX_CONFIG_BYTES, what });
    verifyDigest({ bytes, expected: descriptor.digest, what });
    if (ref.kind === "registry") cache.write(descriptor.digest, bytes);
    return bytes;
  }

  async function readConfig(image: ResolvedImage): Promise<ImageConfig> {
    const what = `image config of ${formatImageReference(image.pinned)}`;
    return parseImageConfig({ bytes: await readSmallBlob(image.pinned, image.manifest.config, what), what });
  }

  /** A record as its schema says, or undefined when there is none (most, when cold) or it is unreadable. */
  async function recall<T extends z.ZodType>(schema: T, key: string): Promise<z.infer<T> | undefined> {
    const value = await cache.readRecord(key);
    if (value === undefined) return undefined;
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  /** Scans of a layer for a directory's listing now under way: concurrent lookups share one read. */
  const listingsInFlight = new Map<string, Promise<LayerEntry[] | undefined>>();

  const scan = async (
    image: ResolvedImage,
    layer: Descriptor,
    path: string,
    options: { filePath: string | undefined; listDirectory?: string },
  ) =>
    scanLayer({
      source: await openBlob(image.pinned, layer.digest),
      layer,
      path,
      ...(options.filePath ? { filePath: options.filePath } : {}),
      ...(options.listDirectory !== undefined ? { listDirectory: options.listDirectory } : {}),
      maxDecompressedBytes: deps.maxLayerBytes,
      maxFileBytes: deps.maxFileBytes,
      what: `layer ${layer.digest} of ${formatImageReference(image.pinned)}`,
    });

  /**
   * What a layer holds at a path. A layer read once for a directory leaves the listing of what
   * concerns that directory (by layer digest, for good), and that listing answers for every other
   * path in it: a base layer shared by a whole payload is read once, not once per component. Only
   * a path the listing shows as a file needs the layer again, for the file's content.
   */
  async function layerVerdict(
    image: ResolvedImage,
    layer: Descriptor,
    path: string,
    filePath: string | undefined,
  ): Promise<LayerVerdict> {
    const dir = directoryOf(path);
    const key = `listing ${layer.digest} ${dir}`;
    const listing = (await recall(listingRecordSchema, key)) ?? (await listingsInFlight.get(key));
    if (listing) {
      const judge = createPathJudge(path);
      let isFile = false;
      for (const entry of listing) isFile = judge.see(entry) || isFile;
      if (!isFile) return judge.verdict();
      return (await scan(image, layer, path, { filePath })).verdict;
    }
    const scanned = scan(image, layer, path, { filePath, listDirectory: dir });
    const shared = scanned.then(
      (result) => result.listing,
      () => undefined, // A failed read teaches nothing; whoever waited reads the layer itself.
    );
    listingsInFlight.set(key, shared);
    try {
      const { verdict, listing: found } = await scanned;
      if (found) cache.writeRecord(key, found);
      return verdict;
    } finally {
      listingsInFlight.delete(key);
    }
  }

  async function searchLayers(image: ResolvedImage, start: string, keepContent: boolean): Promise<FileFacts> {
    const name = formatImageReference(image.pinned);
    let path = start;
    for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
      let followed = false;
      for (const layer of [...image.manifest.layers].reverse()) {
        const filePath = keepContent ? await cache.tempPath() : undefined;
        try {
          const verdict = await layerVerdict(image, layer, path, filePath);
          if (verdict.kind === "file") {
            if (filePath) await cache.adopt(filePath, verdict.digest, verdict.size);
            return { found: true, digest: verdict.digest, size: verdict.size, layer: layer.digest };
          }
          if (verdict.kind === "deleted")
            return { found: false, reason: `/${path} was deleted by ${verdict.by} in layer ${layer.digest}` };
          if (verdict.kind === "directory")
            return { found: false, reason: `/${path} is a directory, not a file` };
          if (verdict.kind === "link") {
            deps.logger.debug({ image: name, from: path, to: verdict.target }, "following link");
            path = verdict.target;
            followed = true;
            break;
          }
        } finally {
          if (filePath) await rm(filePath, { force: true });
        }
      }
      if (!followed) {
        const via = path === start ? "" : ` (reached via links from /${start})`;
        return {
          found: false,
          reason: `/${path}${via} is not in any of the ${image.manifest.layers.length} layers of ${name}`,
        };
      }
    }
    return { found: false, reason: `/${start}: more than ${MAX_LINK_HOPS} links to follow in ${name}` };
  }

  return {
    async resolveImage({ reference, arch }) {
      const ref = typeof reference === "string" ? parseImageReference(reference) : reference;
      const name = formatImageReference(ref);
      const raw = await fetchManifest(ref);
      const top = parseManifest({ bytes: raw.bytes, mediaType: raw.mediaType, what: `manifest of ${name}` });
      if (top.kind === "index") {
        const chosen = selectPlatform({ manifests: top.manifests, arch, image: name });
        const pinned = withDigest(ref, chosen.digest);
        const child = await fetchManifest(pinned);
        const manifest = parseManifest({
          bytes: child.bytes,
          mediaType: chosen.mediaType,
          what: `manifest of ${formatImageReference(pinned)}`,
        });
        if (manifest.kind !== "image") {
          throw new RegistryError(
            "unsupported-media-type",
            `${name}: the ${arch} entry is itself an index; nested indexes are not supported`,
          );
        }
        return { reference: ref, pinned, digest: chosen.digest, indexDigest: raw.digest, manifest };
      }
      const image: ResolvedImage = {
        reference: ref,
        pinned: withDigest(ref, raw.digest),
        digest: raw.digest,
        manifest: top,
      };
      checkImageArch({ config: await readConfig(image), arch, image: name });
      return image;
    },

    readConfig,

    async findFile({ image, path }) {
      const facts = await lookUp(image, path, { needContent: true });
      return facts.found ? { ...facts, path: cache.blobPath(facts.digest) } : facts;
    },

    lookUpFile: ({ image, path }) => lookUp(image, path, { needContent: false }),

    lookUpReferrerFile: (query) => referrerFacts(query),

    async findReferrerFile(query) {
      const facts = await referrerFacts(query);
      if (!facts.found) return facts;
      if (!(await cache.has(facts.digest))) {
        const what = `layer ${facts.digest} of referrer ${facts.referrer}`;
        if (facts.size > deps.maxFileBytes) {
          throw new RegistryError(
            "too-large",
            `${what}: ${facts.size} bytes, more than the ${deps.maxFileBytes} allowed`,
          );
        }
        const temp = await cache.tempPath();
        try {
          await pipeline(
            await openBlob(query.image.pinned, facts.digest),
            createDigestVerifier({ expected: facts.digest, size: facts.size, what }),
            createWriteStream(temp),
          );
          await cache.adopt(temp, facts.digest, facts.size);
        } finally {
          await rm(temp, { force: true });
        }
      }
      return { ...facts, path: cache.blobPath(facts.digest) };
    },

    settled: () => cache.settled(),
    client: deps.client,

    withBudget({ signal }) {
      const deadline = AbortSignal.timeout(deps.taskBudget.timeoutMs);
      const taskSignal = signal ? AbortSignal.any([signal, deadline]) : deadline;
      // Every request of the task listens on it at once, as many as the client runs in parallel;
      // each removes its listener when it ends.
      setMaxListeners(0, taskSignal);
      return buildRegistry({ ...deps, task: { signal: taskSignal, read: 0 } });
    },
  };

  /** The referrers of a subject in the image's repository, remembered for a while (they can be added later). */
  async function referrersOf(ref: ImageReference, subject: string): Promise<Descriptor[]> {
    if (ref.kind !== "registry") return [];
    const key = `referrers ${ref.registry}/${ref.repository} ${subject}`;
    const remembered = await recall(referrersRecordSchema, key);
    if (remembered && deps.now() - remembered.checkedAt < deps.referrersMaxAgeMs) return remembered.manifests;
    checkTask(`referrers of ${formatImageReference(ref)}`);
    const manifests = await client.listReferrers(ref, subject, requestOptions);
    cache.writeRecord(key, { checkedAt: deps.now(), manifests });
    return manifests;
  }

  async function referrerFacts(query: ReferrerQuery): Promise<ReferrerFacts> {
    const { image, artifactType, title } = query;
    const name = formatImageReference(image.pinned);
    if (image.pinned.kind !== "registry")
      return { found: false, reason: `${name} is an OCI layout, which keeps no referrers` };
    // The subject is the manifest the reference names, as openshift-tests looks it up: the index of
    // a multi-arch image, else the image itself.
    const subject = image.indexDigest ?? image.digest;
    const matches: Array<{ referrer: string; layer: Descriptor }> = [];
    for (const listed of await referrersOf(image.pinned, subject)) {
      if (listed.artifactType !== undefined && listed.artifactType !== artifactType) continue;
      const what = `referrer ${listed.digest} of ${name}`;
      if (listed.size > MAX_CONFIG_BYTES)
        throw new RegistryError("too-large", `${what}: its manifest is ${listed.size} bytes`);
      const raw = await fetchManifest(withDigest(image.pinned, listed.digest));
      const artifact = parseArtifactManifest({ bytes: raw.bytes, what });
      // A registry may list more than what refers to the subject: the artifact itself must say so.
      const layer = artifact.layers.length === 1 ? artifact.layers[0]! : undefined;
      if (
        artifact.subject === subject &&
        artifact.artifactType === artifactType &&
        layer?.mediaType === query.layerMediaType &&
        layer.annotations?.[TITLE_ANNOTATION] === title
      )
        matches.push({ referrer: listed.digest, layer });
    }
    if (matches.length > 1) {
      throw new RegistryError(
        "bad-response",
        `${name}: ${matches.length} ${artifactType} referrers of ${subject} are titled ${title} (${matches.map((m) => m.referrer).join(", ")}); expected one`,
      );
    }
    const [match] = matches;
    if (!match)
      return { found: false, reason: `no ${artifactType} referrer titled ${title} refers to ${subject}` };
    return {
      found: true,
      referrer: match.referrer,
      subject,
      digest: match.layer.digest,
      size: match.layer.size,
    };
  }

  /** What is known about a path of an image digest is remembered: it can never change. */
  async function lookUp(
    image: ResolvedImage,
    path: string,
    options: { needContent: boolean },
  ): Promise<FileFacts> {
    const target = normalizeImagePath(path, `path ${path}`);
    const key = `file ${image.digest} ${target}`;
    const record = await recall(lookupRecordSchema, key);
    if (record) {
      if (!record.found || !options.needContent || (await cache.has(record.digest))) return record;
    }
    const result = await searchLayers(image, target, options.needContent);
    cache.writeRecord(key, result);
    return result;
  }
}

function abandonReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof RegistryError) return reason.message;
  return reason instanceof Error && reason.name === "TimeoutError"
    ? "abandoned because the deadline passed"
    : "abandoned because it was cancelled";
}

/** The directory with links resolved (a link must not lead out of an allowed directory). */
async function canonicalDir(dir: string): Promise<string> {
  return realpath(dir).catch(() => resolve(dir));
}
