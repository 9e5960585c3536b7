import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { chmod, copyFile, mkdir, open, rename, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { hostArch, type Arch } from "@netstress/core/arch/arch.ts";
import { elfArch } from "./elf-arch.ts";
import { OteError } from "./ote-error.ts";

export interface PrepareBinaryOptions {
  path: string;
  /** Where unpacked binaries are kept, named by the digest of what they were unpacked from. */
  cacheDir: string;
  /** The arch the binary will run on; an ELF binary of another machine is refused. */
  arch?: Arch;
  /** Decompressed size limit: a gzip bomb stops here. */
  maxBytes?: number;
  /** Copy a plain binary into cacheDir too (it runs as a user who may not reach where it is). */
  copy?: boolean;
}

export interface PreparedBinary {
  /** Executable path to invoke. */
  path: string;
  /** sha256 of the file as delivered (the .gz when gzipped). */
  sha256: string;
  /** ELF architecture, or undefined for scripts. */
  elfArch?: string;
}

/**
 * Makes a delivered test binary runnable: unpacks `*.gz`, marks it executable, and refuses an ELF
 * binary built for another machine with a message naming both.
 */
export async function prepareBinary(options: PrepareBinaryOptions): Promise<PreparedBinary> {
  const { path, arch = hostArch(), maxBytes = 2 * 1024 ** 3 } = options;
  const info = await stat(path).catch((cause: unknown) => {
    throw new OteError(`test binary ${path} does not exist or cannot be read`, { binary: path, cause });
  });
  if (!info.isFile()) throw new OteError(`test binary ${path} is not a regular file`, { binary: path });

  const sha256 = await hashFile(path);
  let runnable = path;
  if (path.endsWith(".gz")) {
    await mkdir(options.cacheDir, { recursive: true });
    runnable = join(options.cacheDir, `${sha256.slice(0, 16)}-${basename(path, ".gz")}`);
    const exists = await stat(runnable).then(
      () => true,
      () => false,
    );
    if (!exists) await gunzipTo(path, runnable, maxBytes);
  } else if (options.copy) {
    await mkdir(options.cacheDir, { recursive: true });
    runnable = join(options.cacheDir, `${sha256.slice(0, 16)}-${basename(path)}`);
    await copyFile(path, runnable);
  }
  await chmod(runnable, 0o755).catch(() => {
    // A read-only location we may not chmod: spawning will say EACCES if it really cannot run.
  });

  const machine = elfArch(await readHeader(runnable));
  if (machine !== undefined && machine !== arch) {
    throw new OteError(
      `test binary ${path} is built for ${machine} but this run is for ${arch}; ` +
        `use the ${arch} image of the component or run on a ${machine} host`,
      { binary: path },
    );
  }
  return { path: runnable, sha256, ...(machine ? { elfArch: machine } : {}) };
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}

async function readHeader(path: string): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(64);
    const { bytesRead } = await handle.read(buffer, 0, 64, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function gunzipTo(source: string, target: string, maxBytes: number): Promise<void> {
  const partial = `${target}.partial-${process.pid}`;
  let written = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      written += chunk.length;
      if (written > maxBytes) callback(new Error(`decompressed size exceeds ${maxBytes} bytes`));
      else callback(null, chunk);
    },
  });
  try {
    await pipeline(
      createReadStream(source),
      createGunzip(),
      limit,
      createWriteStream(partial, { mode: 0o755 }),
    );
    await rename(partial, target);
  } catch (cause) {
    await rm(partial, { force: true });
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new OteError(`cannot unpack test binary ${source}: ${reason}`, { binary: source, cause });
  }
}
