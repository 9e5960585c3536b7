/** Webhook payloads with the fields GitHub sends that the bot reads (and a few it ignores). */
export const INSTALLATION_ID = 4242;
export const OWNER = { login: "openshift", type: "Organization", id: 1 };
export const REPO = "ovn-kubernetes";
export const HEAD_SHA = "a".repeat(40);

const repository = { id: 2, name: REPO, full_name: `${OWNER.login}/${REPO}`, owner: OWNER, private: false };
const user = (login: string, type = "User") => ({ login, type, id: login.length });

export function commentPayload(options: {
  body: string;
  author?: string;
  authorType?: string;
  pr?: number;
  onIssue?: boolean;
  viaAppId?: number;
}) {
  const author = user(options.author ?? "alice", options.authorType);
  return {
    action: "created",
    installation: { id: INSTALLATION_ID },
    repository,
    sender: author,
    issue: {
      number: options.pr ?? 7,
      title: "Fix NodePort reachability",
      ...(options.onIssue ? {} : { pull_request: { url: "https://api.github.com/repos/x/y/pulls/7" } }),
    },
    comment: {
      id: 99,
      body: options.body,
      user: author,
      performed_via_github_app: options.viaAppId ? { id: options.viaAppId } : null,
    },
  };
}

export function pullRequestPayload(options: {
  action: string;
  headSha?: string;
  author?: string;
  labels?: string[];
  draft?: boolean;
  pr?: number;
  /** Who caused the event (pushed, labelled); the author by default. */
  sender?: string;
  /** The label a `labeled` event added. */
  label?: string;
}) {
  const author = user(options.author ?? "alice");
  return {
    action: options.action,
    number: options.pr ?? 7,
    installation: { id: INSTALLATION_ID },
    repository,
    sender: options.sender ? user(options.sender) : author,
    ...(options.label ? { label: { name: options.label } } : {}),
    pull_request: {
      number: options.pr ?? 7,
      head: { sha: options.headSha ?? HEAD_SHA, ref: "fix" },
      base: { ref: "master" },
      user: author,
      labels: (options.labels ?? []).map((name) => ({ name })),
      draft: options.draft ?? false,
      state: options.action === "closed" ? "closed" : "open",
    },
  };
}

export function checkRunPayload(options: {
  action: "requested_action" | "rerequested";
  runId: string;
  appId: number;
  identifier?: string;
  sender?: string;
}) {
  return {
    action: options.action,
    installation: { id: INSTALLATION_ID },
    repository,
    sender: user(options.sender ?? "alice"),
    check_run: { id: 1, external_id: options.runId, head_sha: HEAD_SHA, app: { id: options.appId } },
    ...(options.identifier ? { requested_action: { identifier: options.identifier } } : {}),
  };
}

export function checkSuitePayload(options: { appId: number; prs: number[]; sender?: string }) {
  return {
    action: "rerequested",
    installation: { id: INSTALLATION_ID },
    repository,
    sender: user(options.sender ?? "alice"),
    check_suite: {
      head_sha: HEAD_SHA,
      app: { id: options.appId },
      pull_requests: options.prs.map((number) => ({ number })),
    },
  };
}

/** A `merge_group.checks_requested` delivery, shaped like GitHub's webhook example. */
export function mergeGroupPayload(options: {
  pr: number;
  headSha: string;
  baseRef?: string;
  sender?: string;
}) {
  const base = options.baseRef ?? "main";
  return {
    action: "checks_requested",
    merge_group: {
      head_sha: options.headSha,
      head_ref: `refs/heads/gh-readonly-queue/${base}/pr-${options.pr}-${HEAD_SHA}`,
      base_sha: "c".repeat(40),
      base_ref: `refs/heads/${base}`,
      head_commit: {
        id: options.headSha,
        tree_id: "d".repeat(40),
        message: `Merge pull request #${options.pr} from alice/fix\n\nFix NodePort reachability`,
        timestamp: "2026-12-01T10:00:00Z",
        author: { name: "Alice", email: "alice@example.com" },
        committer: { name: "GitHub", email: "noreply@github.com" },
      },
    },
    repository,
    organization: { login: OWNER.login, id: OWNER.id },
    installation: { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI0Mg==" },
    sender: user(options.sender ?? "alice"),
  };
}
