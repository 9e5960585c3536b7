import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { authorizeActor, authorizeOnPullRequest } from "../../src/trust/authorize-actor.ts";
import { untrustedReply } from "../../src/trust/untrusted-reply.ts";
import { testOctokit } from "../helpers/github-octokit.ts";

const api = "https://api.github.com";
const org = { login: "openshift", type: "Organization" };

beforeEach(() => nock.disableNetConnect());
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

describe("authorizeActor", () => {
  it("trusts a member of the owning organization without asking for repository permission", async () => {
    const scope = nock(api).get("/orgs/openshift/members/alice").reply(204);
    const result = await authorizeActor({
      octokit: testOctokit(),
      owner: org,
      repo: "ovn-kubernetes",
      actor: { login: "alice", type: "User" },
      trustedApps: [],
    });
    expect(result).toEqual({ trusted: true, via: "org-member" });
    scope.done();
  });

  it.each([
    ["write", true],
    ["admin", true],
    ["read", false],
    ["none", false],
  ])("trusts a non-member collaborator with %s permission: %s", async (permission, trusted) => {
    const scope = nock(api)
      .get("/orgs/openshift/members/bob")
      .reply(404)
      .get("/repos/openshift/ovn-kubernetes/collaborators/bob/permission")
      .reply(200, { permission, user: { login: "bob" } });
    const result = await authorizeActor({
      octokit: testOctokit(),
      owner: org,
      repo: "ovn-kubernetes",
      actor: { login: "bob", type: "User" },
      trustedApps: [],
    });
    expect(result.trusted).toBe(trusted);
    scope.done();
  });

  it("does not trust a stranger GitHub does not know as a collaborator", async () => {
    const scope = nock(api)
      .get("/orgs/openshift/members/eve")
      .reply(404)
      .get("/repos/openshift/ovn-kubernetes/collaborators/eve/permission")
      .reply(404, { message: "Not Found" });
    const result = await authorizeActor({
      octokit: testOctokit(),
      owner: org,
      repo: "ovn-kubernetes",
      actor: { login: "eve", type: "User" },
      trustedApps: [],
    });
    expect(result).toEqual({ trusted: false });
    scope.done();
  });

  it("trusts apps by configured name only, with no API lookups", async () => {
    const args = { octokit: testOctokit(), owner: org, repo: "r", trustedApps: ["Renovate[bot]"] };
    expect(await authorizeActor({ ...args, actor: { login: "renovate[bot]", type: "Bot" } })).toEqual({
      trusted: true,
      via: "trusted-app",
    });
    expect(await authorizeActor({ ...args, actor: { login: "other[bot]", type: "Bot" } })).toEqual({
      trusted: false,
    });
  });

  it("asks only for collaborator permission in a user-owned repository", async () => {
    const scope = nock(api)
      .get("/repos/alice/sandbox/collaborators/alice/permission")
      .reply(200, { permission: "admin" });
    const result = await authorizeActor({
      octokit: testOctokit(),
      owner: { login: "alice", type: "User" },
      repo: "sandbox",
      actor: { login: "alice", type: "User" },
      trustedApps: [],
    });
    expect(result).toEqual({ trusted: true, via: "collaborator" });
    scope.done();
  });

  it("surfaces GitHub errors other than not-found instead of guessing", async () => {
    nock(api).get("/orgs/openshift/members/alice").reply(500, { message: "boom" });
    await expect(
      authorizeActor({
        octokit: testOctokit(),
        owner: org,
        repo: "r",
        actor: { login: "alice", type: "User" },
        trustedApps: [],
      }),
    ).rejects.toMatchObject({ status: 500 });
  });
});

describe("authorizeOnPullRequest", () => {
  const approval = { approver: "alice", headSha: "a".repeat(40), at: "2026-12-01T00:00:00Z" };
  const untrusted = (login: string) =>
    nock(api)
      .get(`/orgs/openshift/members/${login}`)
      .reply(404)
      .get(`/repos/openshift/r/collaborators/${login}/permission`)
      .reply(200, { permission: "read" });
  const ask = (input: {
    actor: string;
    headSha?: string;
    approval?: typeof approval;
    approvePushes?: "once" | "every";
  }) =>
    authorizeOnPullRequest({
      octokit: testOctokit(),
      owner: org,
      repo: "r",
      actor: { login: input.actor, type: "User" },
      trustedApps: [],
      pullRequest: { author: "newcomer", headSha: input.headSha ?? approval.headSha },
      approval: input.approval,
      approvePushes: input.approvePushes ?? "every",
    });

  it("lets the author of a PR a member approved run, checking the approver again", async () => {
    const scope = untrusted("newcomer").get("/orgs/openshift/members/alice").reply(204);
    expect(await ask({ actor: "newcomer", approval })).toEqual({ trusted: true, via: "ok-to-test" });
    scope.done();
  });

  it("needs approving again after a push (approve_pushes: every), not with approve_pushes: once", async () => {
    const later = "b".repeat(40);
    let scope = untrusted("newcomer");
    expect(await ask({ actor: "newcomer", approval, headSha: later })).toEqual({ trusted: false });
    scope.done();
    scope = untrusted("newcomer").get("/orgs/openshift/members/alice").reply(204);
    expect(await ask({ actor: "newcomer", approval, headSha: later, approvePushes: "once" })).toEqual({
      trusted: true,
      via: "ok-to-test",
    });
    scope.done();
  });

  it("ends with the approver's membership, and never stands without a recorded approval", async () => {
    let scope = untrusted("newcomer").get("/orgs/openshift/members/alice").reply(404);
    scope = scope.get("/repos/openshift/r/collaborators/alice/permission").reply(200, { permission: "read" });
    expect(await ask({ actor: "newcomer", approval })).toEqual({ trusted: false });
    scope.done();
    scope = untrusted("newcomer");
    expect(await ask({ actor: "newcomer" })).toEqual({ trusted: false });
    scope.done();
  });

  it("does not extend the approval to other untrusted commenters", async () => {
    const scope = untrusted("drive-by");
    expect(await ask({ actor: "drive-by", approval })).toEqual({ trusted: false });
    scope.done();
  });
});

describe("untrustedReply", () => {
  it("says who may run and that /ok-to-test exists", () => {
    const reply = untrustedReply({ login: "newcomer", owner: "openshift", isAuthor: true });
    expect(reply).toContain("@newcomer");
    expect(reply).toContain("members of the openshift organization");
    expect(reply).toContain("collaborators with write access");
    expect(reply).toContain("`/ok-to-test`");
    expect(reply).toContain("Nothing was run.");
  });
});
