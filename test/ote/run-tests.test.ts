import { writeFile, chmod } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getInfo } from "../../src/ote/get-info.ts";
import { listTests } from "../../src/ote/list-tests.ts";
import { OteError } from "../../src/ote/ote-error.ts";
import { ADVERSARIAL, writeAdversarialBinary } from "../helpers/adversarial-binary.ts";
import { describeRunTestsBehaviour } from "../helpers/run-tests-behaviour.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  binary = await writeAdversarialBinary(dir.path, { floodMiB: 8 });
});
afterAll(() => dir.remove());

describeRunTestsBehaviour("runTests against a real OTE binary (Node's spawn)", {
  dir: () => dir,
  binary: () => binary,
  start: () => undefined,
});

describe("listTests and getInfo", () => {
  it("lists every test with its lifecycle", async () => {
    const specs = await listTests({ binary });
    expect(specs.map((s) => s.name)).toContain(ADVERSARIAL.hang);
    expect(specs.find((s) => s.name === ADVERSARIAL.informing)?.lifecycle).toBe("informing");
  });

  it("reads the multi-line info document", async () => {
    const info = await getInfo({ binary });
    expect(info.component.name).toBe("adversarial");
    expect(info.source.commit).toBe("0".repeat(40));
  });

  it("refuses a binary that lists nothing, saying so", async () => {
    const script = join(dir.path, "lists-nothing");
    await writeFile(script, "#!/bin/sh\necho 'no tests here'\n");
    await chmod(script, 0o755);
    await expect(listTests({ binary: script })).rejects.toThrow(OteError);
    await expect(listTests({ binary: script })).rejects.toThrow(/listed no tests/);
  });

  it("says how listing failed when the binary exits non-zero", async () => {
    const script = join(dir.path, "list-fails");
    await writeFile(script, "#!/bin/sh\necho 'flag provided but not defined: -o' >&2\nexit 3\n");
    await chmod(script, 0o755);
    await expect(listTests({ binary: script })).rejects.toThrow(
      /exited with code 3: flag provided but not defined/,
    );
  });
});
