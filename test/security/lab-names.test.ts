import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LAB_STATE_DIR } from "@netstress/testbed/lab/lab-state.ts";
import { runNetstress } from "../helpers/run-netstress.ts";

const NAME_RULE = "a lab's name is a lower-case letter then up to 11 letters or digits";

// `lab down --name ..` would remove /run as root: every lab command that takes a name checks it
// before it builds a path or a namespace name from it. (A name that escapes the state directory
// is not run here: on a lab that did not check it, that test would remove what it points at.)
describe("every lab command checks the lab's name before it acts on it", () => {
  for (const name of ["a/b", "Lab", "lab_1", "twelveletters"]) {
    it(`lab down --name ${JSON.stringify(name)} is refused with exit status 2, removing nothing`, async () => {
      const result = await runNetstress(["lab", "down", "--name", name]);
      expect(result.stderr).toContain(
        `${NAME_RULE} (it prefixes every namespace), not ${JSON.stringify(name)}`,
      );
      expect(result.code).toBe(2);
      expect(result.stdout).not.toContain("removed");
    });
  }

  it("lab up refuses such a name the same way, before it needs root or touches anything", async () => {
    const result = await runNetstress(["lab", "up", "--name", "a/b"]);
    expect(result.stderr).toContain(`${NAME_RULE} (it prefixes every namespace), not "a/b"`);
    expect(result.code).toBe(2);
    expect(existsSync(`${LAB_STATE_DIR}/a`)).toBe(false);
  });
});
