import { chmod, chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BinarySandbox } from "../ote/binary-sandbox.ts";

/** Who binaries run as when the bot runs as root: nobody/nogroup, unless the operator says otherwise. */
export const UNPRIVILEGED = { uid: 65534, gid: 65534 } as const;

export interface LocalSandbox {
  /** Where and as whom the shard's binaries run. */
  spec: BinarySandbox;
  /** HOME and TMPDIR of the binaries: their private working directory. */
  home: string;
  /** Where the shard's binaries are unpacked when they run as another user (else undefined: the shared cache). */
  binDir: string | undefined;
  remove(): Promise<void>;
}

/**
 * A shard's private working directory under the system's temporary directory. When the bot runs
 * as root, the binaries run as an unprivileged user: the directory is theirs, and the binaries are
 * unpacked beside it where that user can execute them (the bot's data directory may not be
 * reachable for it). Removed when the shard ends.
 */
export async function createLocalSandbox(options: {
  runAs?: { uid: number; gid: number };
}): Promise<LocalSandbox> {
  const root = await mkdtemp(join(tmpdir(), "netstress-sandbox-"));
  const home = join(root, "home");
  await mkdir(home, { mode: 0o700 });
  const user = options.runAs;
  let binDir: string | undefined;
  if (user) {
    // Others may pass through the root to their directories, but not list it.
    await chmod(root, 0o711);
    await chown(home, user.uid, user.gid);
    binDir = join(root, "bin");
    await mkdir(binDir, { mode: 0o755 });
  }
  return {
    spec: { cwd: home, ...(user ? { uid: user.uid, gid: user.gid } : {}) },
    home,
    binDir,
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
