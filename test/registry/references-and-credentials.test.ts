import { describe, expect, it } from "vitest";
import { formatImageReference, parseImageReference } from "../../src/registry/image-reference.ts";
import { authFilePaths, credentialLookup, parseAuthFile } from "../../src/registry/registry-credentials.ts";
import { parseWwwAuthenticate } from "../../src/registry/www-authenticate.ts";

const DIGEST = `sha256:${"ab".repeat(32)}`;

describe("image references", () => {
  it.each([
    ["quay.io/org/repo:tag", { registry: "quay.io", repository: "org/repo", tag: "tag" }],
    [`quay.io/org/repo@${DIGEST}`, { registry: "quay.io", repository: "org/repo", digest: DIGEST }],
    [
      `quay.io/org/repo:4.18@${DIGEST}`,
      { registry: "quay.io", repository: "org/repo", tag: "4.18", digest: DIGEST },
    ],
    ["registry:5000/ns/name", { registry: "registry:5000", repository: "ns/name", tag: "latest" }],
    ["localhost/app:v1", { registry: "localhost", repository: "app", tag: "v1" }],
    ["busybox", { registry: "docker.io", repository: "library/busybox", tag: "latest" }],
    ["someone/tool:1.0", { registry: "docker.io", repository: "someone/tool", tag: "1.0" }],
    ["index.docker.io/library/alpine:3", { registry: "docker.io", repository: "library/alpine", tag: "3" }],
  ])("%s", (text, expected) => {
    expect(parseImageReference(text)).toEqual({ kind: "registry", ...expected });
  });

  it.each([
    ["oci:/tmp/layout", { dir: "/tmp/layout" }],
    ["oci:/tmp/layout:release", { dir: "/tmp/layout", tag: "release" }],
    [`oci:./out/pr@${DIGEST}`, { dir: "./out/pr", digest: DIGEST }],
  ])("%s", (text, expected) => {
    expect(parseImageReference(text)).toEqual({ kind: "oci-layout", ...expected });
  });

  it("formats back to a reference that parses to the same thing", () => {
    for (const text of [
      "quay.io/a/b:c",
      `registry:5000/x@${DIGEST}`,
      "oci:/d:t",
      `oci:/d@${DIGEST}`,
      "busybox",
    ]) {
      const ref = parseImageReference(text);
      expect(parseImageReference(formatImageReference(ref))).toEqual(ref);
    }
  });

  it.each([
    ["", /it is empty/],
    ["quay.io/Org/Repo:tag", /"Org" is not a valid repository name component/],
    ["quay.io/org/repo:bad tag", /contains whitespace/],
    ["quay.io/org/repo@sha256:short", /is not a digest/],
    ["quay.io//repo", /repository name is empty/],
    ["quay.io/org/repo:-tag", /"-tag" is not a valid tag/],
    ["oci:", /directory is empty/],
  ])("refuses %j", (text, message) => {
    expect(() => parseImageReference(text)).toThrow(message);
  });
});

describe("registry credentials", () => {
  const file = parseAuthFile({
    source: "test",
    text: JSON.stringify({
      auths: {
        "https://index.docker.io/v1/": { auth: Buffer.from("hub:hubpw").toString("base64") },
        "quay.io": { auth: Buffer.from("quay:generic").toString("base64") },
        "quay.io/openshift-release-dev": { username: "release", password: "specific" },
      },
    }),
  });
  const lookup = credentialLookup([file]);

  it("prefers the most specific key, as podman does", () => {
    expect(lookup("quay.io", "openshift-release-dev/ocp-release")).toEqual({
      username: "release",
      password: "specific",
    });
    expect(lookup("quay.io", "other/repo")).toEqual({ username: "quay", password: "generic" });
    expect(lookup("docker.io", "library/busybox")).toEqual({ username: "hub", password: "hubpw" });
    expect(lookup("registry.example", "x")).toBeUndefined();
  });

  it("uses REGISTRY_AUTH_FILE alone when it is set, else containers and docker auth files", () => {
    expect(authFilePaths({ REGISTRY_AUTH_FILE: "/secret/pull.json" }, "/home/u")).toEqual([
      "/secret/pull.json",
    ]);
    expect(authFilePaths({ XDG_RUNTIME_DIR: "/run/user/1" }, "/home/u")).toEqual([
      "/run/user/1/containers/auth.json",
      "/home/u/.docker/config.json",
    ]);
  });

  it("says which auth file is broken", () => {
    expect(() => parseAuthFile({ source: "/secret/pull.json", text: "{nope" })).toThrow(
      /\/secret\/pull\.json is not JSON/,
    );
  });
});

describe("WWW-Authenticate", () => {
  it("parses bearer parameters, including quoted commas, and several challenges", () => {
    expect(
      parseWwwAuthenticate(
        'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push", Basic realm="x"',
      ),
    ).toEqual([
      {
        scheme: "bearer",
        params: {
          realm: "https://auth.example/token",
          service: "registry.example",
          scope: "repository:a/b:pull,push",
        },
      },
      { scheme: "basic", params: { realm: "x" } },
    ]);
  });
});
