import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { MAX_SLOTS } from "./lab-address-plan.ts";
import { LabError } from "./lab-error.ts";
import { LAB_NAME, parseLabName, type LabName } from "./lab-name.ts";

/** Where running labs leave what `lab down` and `lab status` need (tmpfs: gone after a reboot, as the namespaces are). */
export const LAB_STATE_DIR = "/run/netstress-lab";

const stateSchema = z.object({
  name: z
    .string()
    .regex(LAB_NAME)
    .transform((name) => parseLabName(name)),
  slot: z.number().int(),
  pid: z.number().int(),
  build: z.enum(["released", "pr"]),
  startedAt: z.string(),
  kubeconfigPath: z.string(),
  apiUrl: z.string(),
  nodes: z.array(z.object({ name: z.string(), ip: z.string(), podCIDR: z.string() })),
});
export type LabState = z.infer<typeof stateSchema>;

export const labDir = (name: LabName, root = LAB_STATE_DIR) => join(root, name);
const slotFile = (slot: number, root: string) => join(root, "slots", String(slot));

/** Is a process of this id alive (and ours to signal)? */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function readLabState(name: LabName, root = LAB_STATE_DIR): Promise<LabState | undefined> {
  const text = await readFile(join(labDir(name, root), "state.json"), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = stateSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

export async function writeLabState(state: LabState, root = LAB_STATE_DIR): Promise<void> {
  await mkdir(labDir(state.name, root), { recursive: true });
  await writeFile(join(labDir(state.name, root), "state.json"), `${JSON.stringify(state, null, 2)}\n`);
}

/** The names of labs with a state directory (running or left over). */
export async function listLabNames(root = LAB_STATE_DIR): Promise<LabName[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && LAB_NAME.test(e.name)).map((e) => parseLabName(e.name));
}

/**
 * Claims the lowest free slot (address range) for a lab, atomically (an exclusive create), so
 * that labs started at once get distinct ranges. A slot whose lab is gone — no live process, no
 * namespaces left (`hasLeftovers`) — is taken over.
 */
export async function claimSlot(options: {
  name: LabName;
  hasLeftovers: (name: LabName) => Promise<boolean>;
  root?: string;
}): Promise<number> {
  const root = options.root ?? LAB_STATE_DIR;
  await mkdir(join(root, "slots"), { recursive: true });
  for (let slot = 0; slot < MAX_SLOTS; slot += 1) {
    const file = slotFile(slot, root);
    const owner = await readFile(file, "utf8").catch(() => undefined);
    if (owner !== undefined) {
      // A slot file that names no lab is nobody's.
      const lab = LAB_NAME.test(owner) ? parseLabName(owner) : undefined;
      const state = lab && (await readLabState(lab, root));
      const alive = state !== undefined && processAlive(state.pid);
      if (lab && lab !== options.name && (alive || (await options.hasLeftovers(lab)))) continue;
      await rm(file, { force: true });
    }
    try {
      await writeFile(file, options.name, { flag: "wx" });
      return slot;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new LabError(
    `all ${MAX_SLOTS} lab address ranges are taken: stop a lab (netstress lab status lists them, netstress lab down --name N removes one)`,
    { code: "BadLabOptions" },
  );
}

/** Forgets a lab: its state directory and its slot. */
export async function releaseLab(name: LabName, root = LAB_STATE_DIR): Promise<void> {
  const state = await readLabState(name, root);
  await rm(labDir(name, root), { recursive: true, force: true });
  for (let slot = 0; slot < MAX_SLOTS; slot += 1) {
    if (state && state.slot !== slot) continue;
    const file = slotFile(slot, root);
    if ((await readFile(file, "utf8").catch(() => undefined)) === name) await rm(file, { force: true });
  }
}
