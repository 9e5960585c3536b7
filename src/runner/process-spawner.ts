import { spawn, type ChildProcessByStdio } from "node:child_process";
import { access, constants as fsConstants } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { ProcessEvents, StartProcess, StartRequest } from "../ote/start-process.ts";
import { startWithNodeSpawn } from "../ote/start-with-node-spawn.ts";

/** Built from native/spawner.c by scripts/build-spawner.sh; never committed. */
export const SPAWNER_EXECUTABLE = fileURLToPath(new URL("./native/netstress-spawner", import.meta.url));

const PROTOCOL_VERSION = 1;
const READY_TIMEOUT_MS = 10_000;
const STDERR_TAIL_CHARS = 2_000;

export interface ProcessSpawner {
  /** `native`: the spawner process starts the tests; `node`: Node's spawn does (the fallback). */
  readonly kind: "native" | "node";
  readonly start: StartProcess;
  /** Ends the spawner; every test it started must have ended. */
  close: () => Promise<void>;
}

interface Pending {
  events: ProcessEvents;
  /** `ended`: the spawner reaped it and killed what was left of its group. */
  handle: { pid?: number; signal?: NodeJS.Signals; ended?: boolean };
  binary: string;
}

type SpawnerChild = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * Starts the runner's process spawner: a small native process that forks the test binaries, so
 * that a test start does not copy the page tables of the runner's 100+ MB heap (which costs more
 * than a short test itself). Tests keep every semantic of Node's spawn: own process group, stdin
 * closed, env, cwd, uid/gid, arguments verbatim. Where the spawner is not built, does not start or
 * dies, tests start with Node's spawn and `onNotice` is told once why; tests the dying spawner was
 * running are reported lost (their process groups are killed).
 */
export async function startProcessSpawner(
  options: { executable?: string; onNotice?: (message: string) => void } = {},
): Promise<ProcessSpawner> {
  const executable = options.executable ?? SPAWNER_EXECUTABLE;
  const fallback = (why: string): ProcessSpawner => {
    options.onNotice?.(
      `test processes start with Node's spawn, about 1–2 ms more of the runner's CPU per test: ${why}`,
    );
    return { kind: "node", start: startWithNodeSpawn, close: async () => {} };
  };
  try {
    await access(executable, fsConstants.X_OK);
  } catch {
    return fallback(
      `no process spawner at ${executable} (build it with \`bash scripts/build-spawner.sh\`, which needs a C compiler)`,
    );
  }
  const child: SpawnerChild = spawn(executable, [], { stdio: ["pipe", "pipe", "pipe"], env: {} });
  let stderrTail = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<string>((resolve) => {
    child.on("error", (error) => resolve(`it could not be started (${error.message})`));
    // "close", not "exit": replies still in the pipe are read before the spawner counts as gone.
    child.on("close", (code, signal) =>
      resolve(`it exited (${signal ?? `code ${code}`})${stderrTail ? `: ${stderrTail.trim()}` : ""}`),
    );
  });
  // A request written after the spawner died is answered by the exit handling below.
  child.stdin.on("error", () => {});

  const ready = await new Promise<string | undefined>((resolve) => {
    let head = "";
    const timer = setTimeout(
      () => resolve(`it did not say it was ready within ${READY_TIMEOUT_MS} ms`),
      READY_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      const nl = head.indexOf("\n");
      if (nl === -1) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      const line = head.slice(0, nl);
      resolve(
        line === `ready ${PROTOCOL_VERSION}`
          ? undefined
          : `it speaks "${line}", not "ready ${PROTOCOL_VERSION}": rebuild it with \`bash scripts/build-spawner.sh\``,
      );
    };
    child.stdout.on("data", onData);
    void exited.then((why) => {
      clearTimeout(timer);
      resolve(why);
    });
  });
  if (ready !== undefined) {
    child.kill("SIGKILL");
    return fallback(`the process spawner ${executable} is unusable: ${ready}`);
  }
  return new NativeSpawner(child, exited, options.onNotice);
}

class NativeSpawner implements ProcessSpawner {
  kind: "native" | "node" = "native";
  private readonly pending = new Map<number, Pending>();
  /** Encoded environments by object: runs pass the same env object to many tests. */
  private readonly encodedEnvs = new WeakMap<NodeJS.ProcessEnv, EncodedEnv>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  private closing = false;

  constructor(
    private readonly child: SpawnerChild,
    private readonly exited: Promise<string>,
    private readonly onNotice: ((message: string) => void) | undefined,
  ) {
    child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
    void exited.then((why) => this.died(why));
    // An idle spawner left open never keeps the process alive; one with a test to report on does
    // (see hold), or the process could end before reading a test's end.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as { unref?: () => void }).unref?.();
  }

  /** Keeps the event loop alive exactly while a request awaits its end. */
  private hold(): void {
    if (this.pending.size === 0 && !this.closing) this.child.unref();
    else this.child.ref();
  }

  readonly start: StartProcess = (request, events) => {
    if (this.kind === "node") return startWithNodeSpawn(request, events);
    const id = this.nextId++;
    const handle: Pending["handle"] = {};
    this.child.stdin.write(encodeRequest(id, request, this.encodedEnvs));
    this.pending.set(id, { events, handle, binary: request.binary });
    this.hold();
    return {
      killGroup(signal) {
        if (handle.pid === undefined) {
          // Not started yet: signalled as soon as it is.
          handle.signal = signal;
          return;
        }
        if (!handle.ended) killGroup(handle.pid, signal);
      },
    };
  };

  async close(): Promise<void> {
    if (this.kind === "node") return;
    this.closing = true;
    // Held open until it has gone, or the process could end with this promise pending.
    this.child.ref();
    this.child.stdin.end();
    await this.exited;
  }

  private died(why: string): void {
    if (this.closing) return;
    this.kind = "node";
    const reason = `the process spawner died: ${why}`;
    this.onNotice?.(`${reason}; the remaining tests start with Node's spawn`);
    for (const [id, { events, handle }] of this.pending) {
      this.pending.delete(id);
      if (handle.pid !== undefined) killGroup(handle.pid, "SIGKILL");
      events.lost(`${reason}; its process group was killed`);
    }
  }

  /** Replies: "pid ID PID", "fail ID ERRNO", "out ID FD LEN" + LEN bytes, "exit ID CODE SIGNAL". */
  private read(chunk: Buffer): void {
    const data = this.buffered.length > 0 ? Buffer.concat([this.buffered, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      const nl = data.indexOf(10, offset);
      if (nl === -1) break;
      const fields = data.toString("latin1", offset, nl).split(" ");
      const entry = this.pending.get(Number(fields[1]));
      if (fields[0] === "out") {
        const length = Number(fields[3]);
        if (data.length < nl + 1 + length) break;
        const bytes = data.subarray(nl + 1, nl + 1 + length);
        if (fields[2] === "1") entry?.events.stdout(bytes);
        else entry?.events.stderr(bytes);
        offset = nl + 1 + length;
        continue;
      }
      offset = nl + 1;
      if (!entry) continue;
      if (fields[0] === "pid") {
        entry.handle.pid = Number(fields[2]);
        if (entry.handle.signal) killGroup(entry.handle.pid, entry.handle.signal);
      } else if (fields[0] === "fail") {
        this.pending.delete(Number(fields[1]));
        this.hold();
        entry.handle.ended = true;
        entry.events.error(errnoException(Number(fields[2]), entry.binary));
      } else if (fields[0] === "exit") {
        this.pending.delete(Number(fields[1]));
        this.hold();
        entry.handle.ended = true;
        const signal = Number(fields[3]);
        entry.events.close(signal === 0 ? Number(fields[2]) : null, signal === 0 ? null : signalName(signal));
      }
    }
    // Output is handed on as views of the chunk; what is left over is copied, not kept alive with it.
    this.buffered = offset === data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(offset));
  }
}

/** NUL-terminated NAME=value entries and how many. */
interface EncodedEnv {
  bytes: Buffer;
  count: number;
}

function encodeRequest(
  id: number,
  request: StartRequest,
  cache: WeakMap<NodeJS.ProcessEnv, EncodedEnv>,
): Buffer {
  const extra = request.extraEnv ?? {};
  const overridden = Object.keys(extra).some((name) => request.env[name] !== undefined);
  let shared = overridden ? undefined : cache.get(request.env);
  if (!shared) {
    shared = encodeEnv(overridden ? { ...request.env, ...extra } : request.env, request.binary);
    if (!overridden) cache.set(request.env, shared);
  }
  const own = overridden ? { bytes: Buffer.alloc(0), count: 0 } : encodeEnv(extra, request.binary);
  const fields = [request.sandbox?.cwd ?? "", request.binary, request.binary, ...request.args];
  const head = Buffer.from(fields.map((field) => `${checkNoNul(field, request.binary)}\0`).join(""), "utf8");
  const bodyLength = head.length + own.bytes.length + shared.bytes.length;
  const uid = request.sandbox?.uid ?? -1;
  const gid = request.sandbox?.gid ?? -1;
  const header = `spawn ${id} ${uid} ${gid} ${request.args.length + 1} ${own.count + shared.count} ${bodyLength}\n`;
  return Buffer.concat([Buffer.from(header, "latin1"), head, own.bytes, shared.bytes]);
}

function encodeEnv(env: NodeJS.ProcessEnv, binary: string): EncodedEnv {
  let text = "";
  let count = 0;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    text += `${checkNoNul(`${name}=${value}`, binary)}\0`;
    count += 1;
  }
  return { bytes: Buffer.from(text, "utf8"), count };
}

function checkNoNul(field: string, binary: string): string {
  if (field.includes("\0")) {
    throw new TypeError(`cannot start ${binary}: an argument or variable contains a NUL byte`);
  }
  return field;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));
const SIGNAL_NAMES = new Map(
  Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/** The error Node's spawn would give, so that a binary that cannot start reads the same. */
function errnoException(errno: number, binary: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `errno ${errno}`;
  return Object.assign(new Error(`spawn ${binary} ${code}`), {
    code,
    errno: -errno,
    syscall: `spawn ${binary}`,
    path: binary,
  });
}

function signalName(signal: number): NodeJS.Signals {
  // Real-time signals have no name of their own.
  return SIGNAL_NAMES.get(signal) ?? (`SIGRT${signal}` as NodeJS.Signals);
}
