import { spawn } from "node:child_process";
import { access, constants as fsConstants } from "node:fs/promises";
import { createConnection, type Socket } from "node:net";
import { constants as osConstants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { ProcessEvents, StartProcess, StartRequest } from "../ote/start-process.ts";
import { startWithNodeSpawn } from "../ote/start-with-node-spawn.ts";
import { RunnerError } from "./runner-error.ts";

/** Built from native/spawner.c by scripts/build-spawner.sh; never committed. */
export const SPAWNER_EXECUTABLE = fileURLToPath(new URL("./native/netstress-spawner", import.meta.url));

const PROTOCOL_VERSION = 2;
const READY_TIMEOUT_MS = 10_000;
const STDERR_TAIL_CHARS = 2_000;
/** The tests container may start after the runner's: its spawner's socket appears when it does. */
const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;
const CONNECT_RETRY_MS = 100;

export interface ProcessSpawner {
  /** `native`: the spawner process starts the tests; `node`: Node's spawn does (the fallback). */
  readonly kind: "native" | "node";
  readonly start: StartProcess;
  /**
   * Aborted, with the reason, when no test can start any more: the spawner behind a socket went
   * away (there is no fallback to the runner's own container). Never aborted for a child spawner.
   */
  readonly gone: AbortSignal;
  /** Ends the spawner; every test it started must have ended. */
  close: () => Promise<void>;
}

interface Pending {
  events: ProcessEvents;
  /** `ended`: the spawner reaped it and killed what was left of its group. */
  handle: { pid?: number; ended?: boolean };
  binary: string;
}

/** How the runner and its spawner talk: a child's stdin and stdout, or one Unix socket. */
interface SpawnerChannel {
  requests: Writable;
  replies: Readable;
  /** Resolves, saying why, once the spawner is gone and every reply it sent has been read. */
  ended: Promise<string>;
  /** Keeps the event loop alive (true) or not (false) for the spawner's sake. */
  hold: (held: boolean) => void;
  /**
   * The spawner is the runner's child, in its PID namespace: should it die, the runner kills the
   * groups it started and goes on with Node's spawn. A spawner in another container is neither.
   */
  local: boolean;
}

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
    return {
      kind: "node",
      start: startWithNodeSpawn,
      gone: new AbortController().signal,
      close: async () => {},
    };
  };
  try {
    await access(executable, fsConstants.X_OK);
  } catch {
    return fallback(
      `no process spawner at ${executable} (build it with \`bash scripts/build-spawner.sh\`, which needs a C compiler)`,
    );
  }
  const child = spawn(executable, [], { stdio: ["pipe", "pipe", "pipe"], env: {} });
  let stderrTail = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
  });
  const ended = new Promise<string>((resolve) => {
    child.on("error", (error) => resolve(`it could not be started (${error.message})`));
    // "close", not "exit": replies still in the pipe are read before the spawner counts as gone.
    child.on("close", (code, signal) =>
      resolve(`it exited (${signal ?? `code ${code}`})${stderrTail ? `: ${stderrTail.trim()}` : ""}`),
    );
  });
  // A request written after the spawner died is answered by the exit handling below.
  child.stdin.on("error", () => {});
  const channel: SpawnerChannel = {
    requests: child.stdin,
    replies: child.stdout,
    ended,
    local: true,
    hold(held) {
      // An idle spawner left open never keeps the process alive; one with a test to report on does,
      // or the process could end before reading a test's end.
      if (held) child.ref();
      else child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) {
        const handle = stream as { ref?: () => void; unref?: () => void };
        if (held) handle.ref?.();
        else handle.unref?.();
      }
    },
  };
  const ready = await readyLine(channel);
  if (ready !== undefined) {
    child.kill("SIGKILL");
    return fallback(`the process spawner ${executable} is unusable: ${ready}`);
  }
  return new NativeSpawner(channel, options.onNotice);
}

/**
 * Connects to a process spawner listening at `socketPath` (`netstress-spawner --listen`, the tests
 * container of a build-farm pod), retrying while its socket is not there yet or refuses, up to
 * `connectTimeoutMs`. There is no fallback: a test never starts in the runner's own container,
 * whose key signs the record stream. Throws a RunnerError when the spawner cannot be reached.
 */
export async function connectProcessSpawner(options: {
  socketPath: string;
  connectTimeoutMs?: number;
  onNotice?: (message: string) => void;
}): Promise<ProcessSpawner> {
  const { socketPath } = options;
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const socket = await connectWithin(socketPath, timeoutMs);
  const ended = new Promise<string>((resolve) => {
    let why = "it closed the connection";
    socket.on("error", (error) => (why = `the connection failed (${error.message})`));
    socket.on("close", () => resolve(why));
  });
  const channel: SpawnerChannel = {
    requests: socket,
    replies: socket,
    ended,
    local: false,
    hold: (held) => (held ? socket.ref() : socket.unref()),
  };
  const ready = await readyLine(channel);
  if (ready !== undefined) {
    socket.destroy();
    throw new RunnerError(`the process spawner at ${socketPath} is unusable: ${ready}`);
  }
  return new NativeSpawner(channel, options.onNotice);
}

async function connectWithin(socketPath: string, timeoutMs: number): Promise<Socket> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = createConnection(socketPath);
        socket.once("error", reject);
        socket.once("connect", () => {
          socket.off("error", reject);
          resolve(socket);
        });
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const notYet = code === "ENOENT" || code === "ECONNREFUSED";
      if (!notYet || Date.now() >= deadline) {
        throw new RunnerError(
          `cannot reach the process spawner at ${socketPath}${notYet ? ` within ${timeoutMs} ms` : ""} (${code ?? (error as Error).message}); tests start only through it`,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, CONNECT_RETRY_MS));
    }
  }
}

/** The spawner's first line: undefined when it is "ready" in our protocol version, else why not. */
function readyLine(channel: SpawnerChannel): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
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
      channel.replies.off("data", onData);
      // Whatever came with it (nothing: the spawner waits for requests) would be lost here.
      const line = head.slice(0, nl);
      resolve(
        line === `ready ${PROTOCOL_VERSION}`
          ? undefined
          : `it speaks "${line}", not "ready ${PROTOCOL_VERSION}": rebuild it with \`bash scripts/build-spawner.sh\``,
      );
    };
    channel.replies.on("data", onData);
    void channel.ended.then((why) => {
      clearTimeout(timer);
      resolve(why);
    });
  });
}

class NativeSpawner implements ProcessSpawner {
  kind: "native" | "node" = "native";
  private readonly stopped = new AbortController();
  readonly gone = this.stopped.signal;
  private readonly pending = new Map<number, Pending>();
  /** Encoded environments by object: runs pass the same env object to many tests. */
  private readonly encodedEnvs = new WeakMap<NodeJS.ProcessEnv, EncodedEnv>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  private closing = false;

  constructor(
    private readonly channel: SpawnerChannel,
    private readonly onNotice: ((message: string) => void) | undefined,
  ) {
    channel.replies.on("data", (chunk: Buffer) => this.read(chunk));
    void channel.ended.then((why) => this.died(why));
    channel.hold(false);
  }

  /** Keeps the event loop alive exactly while a request awaits its end. */
  private hold(): void {
    this.channel.hold(this.pending.size > 0 || this.closing);
  }

  readonly start: StartProcess = (request, events) => {
    if (this.kind === "node") return startWithNodeSpawn(request, events);
    if (this.gone.aborted) {
      const reason = String(this.gone.reason);
      setImmediate(() => events.lost(reason));
      return { killGroup() {} };
    }
    const id = this.nextId++;
    const handle: Pending["handle"] = {};
    this.channel.requests.write(encodeRequest(id, request, this.encodedEnvs));
    this.pending.set(id, { events, handle, binary: request.binary });
    this.hold();
    return {
      // The spawner signals the group: it knows the test by its id before its pid is known here,
      // and across containers only it can.
      killGroup: (signal) => {
        if (!handle.ended && !this.gone.aborted)
          this.channel.requests.write(`kill ${id} ${osConstants.signals[signal]}\n`);
      },
    };
  };

  async close(): Promise<void> {
    if (this.kind === "node") return;
    this.closing = true;
    // Held open until it has gone, or the process could end with this promise pending.
    this.hold();
    this.channel.requests.end();
    await this.channel.ended;
  }

  private died(why: string): void {
    if (this.closing) return;
    const reason = `the process spawner ${this.channel.local ? "died" : "went away"}: ${why}`;
    if (this.channel.local) {
      this.kind = "node";
      this.onNotice?.(`${reason}; the remaining tests start with Node's spawn`);
    } else {
      this.onNotice?.(`${reason}; no further test can start`);
      this.stopped.abort(reason);
    }
    for (const [id, { events, handle }] of this.pending) {
      this.pending.delete(id);
      // A spawner in another container took its tests along (they are its container's processes).
      if (this.channel.local && handle.pid !== undefined) killGroup(handle.pid, "SIGKILL");
      events.lost(`${reason}; its process group was killed`);
    }
    this.hold();
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
