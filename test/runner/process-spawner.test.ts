import { spawn, type ChildProcess } from "node:child_process";
import { chmod, lstat, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeBinary } from "../../src/ote/invoke-binary.ts";
import { runTests } from "../../src/ote/run-tests.ts";
import {
  connectProcessSpawner,
  startProcessSpawner,
  type ProcessSpawner,
} from "../../src/runner/process-spawner.ts";
import { writeAdversarialBinary } from "../helpers/adversarial-binary.ts";
import { buildSpawner } from "../helpers/build-spawner.ts";
import { describeRunTestsBehaviour } from "../helpers/run-tests-behaviour.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;
let executable: string;
let spawner: ProcessSpawner;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeAdversarialBinary(dir.path, { floodMiB: 8 });
  executable = await buildSpawner(join(dir.path, "netstress-spawner"));
  spawner = await startProcessSpawner({ executable });
}, 60_000);
afterAll(async () => {
  await spawner.close();
  await dir.remove();
});

async function script(name: string, body: string): Promise<string> {
  const path = join(dir.path, name);
  await writeFile(path, body);
  await chmod(path, 0o755);
  return path;
}

/** Alive, and not a zombie waiting for a parent that will never reap it. */
async function isRunning(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

describe("the process spawner", () => {
  it("is the native one when built", () => {
    expect(spawner.kind).toBe("native");
  });

  describeRunTestsBehaviour("runTests through it", {
    dir: () => dir,
    binary: () => binary,
    start: () => spawner.start,
  });

  it("hands arguments and environment to the test verbatim: spaces, quotes, newlines, empty, $, *", async () => {
    const echo = await script(
      "echo-args",
      `#!${process.execPath}\nconsole.log(JSON.stringify({ argv: process.argv.slice(2), v: process.env.ODD, cwd: process.cwd() }));\n`,
    );
    const args = [
      "a b",
      `"double" 'single'`,
      "line\nbreak",
      "",
      "$HOME `id` $(id)",
      "*",
      "tab\there",
      "ünï ☃",
    ];
    const odd = "x=y\nsecond line; $PATH";
    const outcome = await invokeBinary({
      binary: echo,
      args,
      timeoutMs: 20_000,
      env: { ODD: odd },
      sandbox: { cwd: dir.path },
      start: spawner.start,
    });
    expect(outcome.exitCode).toBe(0);
    expect(JSON.parse(outcome.lines[0]!)).toEqual({ argv: args, v: odd, cwd: dir.path });
  });

  it("gives each test the shared environment plus its own variables, its own winning, through either starter", async () => {
    const printEnv = await script(
      "print-env",
      `#!${process.execPath}\nconsole.log(JSON.stringify({ shared: process.env.SHARED, own: process.env.OWN, both: process.env.BOTH}));\n`,
    );
    const shared = { SHARED: "s", BOTH: "from shared" };
    const fallback = await startProcessSpawner({ executable: join(dir.path, "no-such-spawner") });
    for (const start of [spawner.start, fallback.start]) {
      const seen = [];
      // The same env object twice, as a run passes it: what the spawner caches must not leak between tests.
      for (const extraEnv of [{ OWN: "1" }, { OWN: "2", BOTH: "from the test" }] as Record<
        string,
        string
      >[]) {
        const outcome = await invokeBinary({
          binary: printEnv,
          args: [],
          timeoutMs: 20_000,
          env: shared,
          extraEnv,
          start,
        });
        seen.push(JSON.parse(outcome.lines[0]!));
      }
      expect(seen).toEqual([
        { shared: "s", own: "1", both: "from shared" },
        { shared: "s", own: "2", both: "from the test" },
      ]);
    }
  });

  it("tells which tests could not start while others it started meanwhile run on", async () => {
    const slow = await script("slow-ok", `#!/bin/sh\nsleep 0.3\necho done\n`);
    const garbage = await script("not-a-program", "\u007fELF garbage that no kernel loads\n");
    const unreadable = join(dir.path, "not-executable");
    await writeFile(unreadable, "#!/bin/sh\necho never\n", { mode: 0o644 });
    const invoke = (binary: string) =>
      invokeBinary({
        binary,
        args: [],
        timeoutMs: 20_000,
        env: { PATH: "/usr/bin:/bin" },
        start: spawner.start,
      });
    const [ok, missing, noexec, denied] = await Promise.all([
      invoke(slow),
      invoke(join(dir.path, "no-such-binary")),
      invoke(garbage),
      invoke(unreadable),
    ]);
    expect(ok).toMatchObject({ exitCode: 0, lines: ["done"] });
    expect(missing.spawnError?.code).toBe("ENOENT");
    expect(noexec.spawnError?.code).toBe("ENOEXEC");
    // Root may open any file, but not execute one without an execute bit.
    expect(denied.spawnError?.code).toBe("EACCES");
  });

  it("kills the whole process tree at the timeout, descendants included", async () => {
    const pidFile = join(dir.path, "grandchild.pid");
    const forks = await script("forks-and-hangs", `#!/bin/sh\nsleep 600 &\necho $! > '${pidFile}'\nwait\n`);
    const started = Date.now();
    const [outcome] =
      // sh and its background job do not answer the interrupt: SIGABRT, after the grace, does.
      (
        await runTests({
          binary: forks,
          names: ["x"],
          timeoutMs: 1_000,
          interruptGraceMs: 500,
          start: spawner.start,
        })
      ).outcomes;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(outcome).toMatchObject({ result: "failed", harnessError: "timeout" });
    const grandchild = Number(await readFile(pidFile, "utf8"));
    expect(await waitUntil(async () => !(await isRunning(grandchild)), 10_000)).toBe(true);
  });

  it.skipIf(process.getuid?.() !== 0)("runs the test as the sandbox's user and group", async () => {
    const outcome = await invokeBinary({
      binary: "/bin/sh",
      args: ["-c", "id -u; id -g; id -G"],
      timeoutMs: 20_000,
      env: { PATH: "/usr/bin:/bin" },
      sandbox: { cwd: "/", uid: 65534, gid: 65534 },
      start: spawner.start,
    });
    // No supplementary group of the runner's is kept.
    expect(outcome.lines).toEqual(["65534", "65534", "65534"]);
  });

  it("when it dies, reports the tests it was running as lost, kills them, and starts the next with Node's spawn", async () => {
    const notices: string[] = [];
    const own = await startProcessSpawner({ executable, onNotice: (m) => notices.push(m) });
    const pidFile = join(dir.path, "orphan.pid");
    // A test that kills its parent — the spawner — and carries on.
    const killer = await script(
      "kills-its-parent",
      `#!/bin/sh\necho $$ > '${pidFile}'\nkill -9 $PPID\nexec sleep 600\n`,
    );
    const [lost] = (await runTests({ binary: killer, names: ["x"], timeoutMs: 60_000, start: own.start }))
      .outcomes;
    expect(lost).toMatchObject({ result: "failed", harnessError: "crashed" });
    expect(lost?.error).toMatch(
      /was lost: the process spawner died: it exited \(SIGKILL\); its process group was killed/,
    );
    const orphan = Number(await readFile(pidFile, "utf8"));
    expect(await waitUntil(async () => !(await isRunning(orphan)), 10_000)).toBe(true);

    const [next] = (
      await runTests({
        binary,
        names: ["[sig-network] adversarial passes"],
        timeoutMs: 20_000,
        start: own.start,
      })
    ).outcomes;
    expect(next?.result).toBe("passed");
    expect(own.kind).toBe("node");
    expect(notices).toEqual([
      expect.stringMatching(/process spawner died.*remaining tests start with Node's spawn/),
    ]);
    await own.close();
  });

  it("falls back to Node's spawn, saying once how to build it, when there is no spawner", async () => {
    const notices: string[] = [];
    const none = await startProcessSpawner({
      executable: join(dir.path, "not-built"),
      onNotice: (m) => notices.push(m),
    });
    expect(none.kind).toBe("node");
    expect(notices).toEqual([
      expect.stringMatching(/Node's spawn.*no process spawner at .*not-built.*build-spawner\.sh/),
    ]);
    const [outcome] = (
      await runTests({
        binary,
        names: ["[sig-network] adversarial passes"],
        timeoutMs: 20_000,
        start: none.start,
      })
    ).outcomes;
    expect(outcome?.result).toBe("passed");
  });

  it("falls back when the spawner speaks another protocol version, saying to rebuild it", async () => {
    const notices: string[] = [];
    const stale = await script("stale-spawner", "#!/bin/sh\necho 'ready 0'\nexec cat >/dev/null\n");
    const fallback = await startProcessSpawner({ executable: stale, onNotice: (m) => notices.push(m) });
    expect(fallback.kind).toBe("node");
    expect(notices).toEqual([expect.stringMatching(/speaks "ready 0", not "ready 2": rebuild it/)]);
  });
});

/** `netstress-spawner --listen PATH`, as a build-farm pod's tests container runs it. */
function listening(
  socket: string,
  extra: string[] = [],
): { child: ChildProcess; exited: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(executable, ["--listen", socket, ...extra], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stderr })),
  );
  return { child, exited };
}

describe("the process spawner behind a Unix socket (a build-farm pod's tests container)", () => {
  let remote: ProcessSpawner;
  beforeAll(async () => {
    const socket = join(dir.path, "spawner.sock");
    // The runner may start first: it waits for the socket to appear.
    const connecting = connectProcessSpawner({ socketPath: socket });
    await new Promise((resolve) => setTimeout(resolve, 300));
    listening(socket);
    remote = await connecting;
  }, 60_000);
  afterAll(async () => {
    await remote.close();
  });

  it("accepts the runner's connection on a socket only its user may open, and takes no second", async () => {
    expect(remote.kind).toBe("native");
    // Accepted and removed: nobody else connects to it.
    await expect(lstat(join(dir.path, "spawner.sock"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  describeRunTestsBehaviour("runTests through it", {
    dir: () => dir,
    binary: () => binary,
    start: () => remote.start,
  });

  it("kills the whole process tree at the timeout through its kill request", async () => {
    const pidFile = join(dir.path, "socket-grandchild.pid");
    const forks = await script("socket-forks", `#!/bin/sh\nsleep 600 &\necho $! > '${pidFile}'\nwait\n`);
    const [outcome] = (
      await runTests({
        binary: forks,
        names: ["x"],
        timeoutMs: 1_000,
        interruptGraceMs: 500,
        start: remote.start,
      })
    ).outcomes;
    expect(outcome).toMatchObject({ result: "failed", harnessError: "timeout" });
    const grandchild = Number(await readFile(pidFile, "utf8"));
    expect(await waitUntil(async () => !(await isRunning(grandchild)), 10_000)).toBe(true);
  });

  it("ends when the runner's connection does, killing every test it runs, with exit 0", async () => {
    const socket = join(dir.path, "ending.sock");
    const own = listening(socket);
    const spawner = await connectProcessSpawner({ socketPath: socket });
    const pidFile = join(dir.path, "left-running.pid");
    const hangs = await script("hangs", `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 600\n`);
    const running = invokeBinary({ binary: hangs, args: [], timeoutMs: 600_000, start: spawner.start });
    expect(
      await waitUntil(async () => (await readFile(pidFile, "utf8").catch(() => "")) !== "", 10_000),
    ).toBe(true);
    own.child.kill("SIGKILL");
    // The spawner going away loses the test, and every later one: no fallback to the runner's container.
    expect((await running).lost).toMatch(/the process spawner went away: .*its process group was killed/);
    expect(spawner.gone.aborted).toBe(true);
    const later = await invokeBinary({ binary: hangs, args: [], timeoutMs: 10_000, start: spawner.start });
    expect(later.lost).toMatch(/the process spawner went away/);
    await spawner.close();

    // A runner that closes its connection ends a spawner with tests running: they go with it.
    const again = join(dir.path, "closing.sock");
    const second = listening(again);
    const closing = await connectProcessSpawner({ socketPath: again });
    await writeFile(pidFile, "");
    void invokeBinary({ binary: hangs, args: [], timeoutMs: 600_000, start: closing.start });
    expect(await waitUntil(async () => (await readFile(pidFile, "utf8")) !== "", 10_000)).toBe(true);
    const pid = Number(await readFile(pidFile, "utf8"));
    await closing.close();
    expect((await second.exited).code).toBe(0);
    expect(await waitUntil(async () => !(await isRunning(pid)), 10_000)).toBe(true);
  });

  it("ends with exit 0, saying so, when no runner connects within --accept-timeout", async () => {
    const socket = join(dir.path, "nobody.sock");
    const started = Date.now();
    const { code, stderr } = await listening(socket, ["--accept-timeout", "1"]).exited;
    expect(code).toBe(0);
    expect(stderr).toMatch(/no runner connected to .*nobody\.sock within 1 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("replaces a stale socket but never a file, and listens with mode 0600", async () => {
    const stale = join(dir.path, "stale.sock");
    // A spawner killed before its runner came leaves its socket behind.
    const killed = listening(stale);
    expect(
      await waitUntil(async () => (await lstat(stale).catch(() => undefined)) !== undefined, 10_000),
    ).toBe(true);
    killed.child.kill("SIGKILL");
    await killed.exited;
    const own = listening(stale);
    expect(
      await waitUntil(
        async () => ((await stat(stale).catch(() => undefined))?.mode ?? 0) % 0o1000 === 0o600,
        10_000,
      ),
    ).toBe(true);
    const spawner = await connectProcessSpawner({ socketPath: stale });
    await spawner.close();
    expect((await own.exited).code).toBe(0);

    const file = join(dir.path, "not-a-socket");
    await writeFile(file, "keep me");
    const refused = await listening(file).exited;
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/not-a-socket: something is there that is not a stale socket/);
    expect(await readFile(file, "utf8")).toBe("keep me");
  });

  it("fails the runner, saying so, when no spawner listens: tests never start in its own container", async () => {
    await expect(
      connectProcessSpawner({ socketPath: join(dir.path, "never.sock"), connectTimeoutMs: 500 }),
    ).rejects.toThrow(
      /cannot reach the process spawner at .*never\.sock within 500 ms \(ENOENT\); tests start only through it/,
    );
  });
});
