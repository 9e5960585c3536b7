import type { LocatedFailure } from "../report/located-failures.ts";

/** One check-run annotation, as GitHub's "update a check run" takes it. */
export interface CheckRunAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: "notice" | "warning" | "failure";
  title: string;
  message: string;
}

/** GitHub's limits: 50 annotations per request, 64 KiB per message, 255 characters per title. */
export const ANNOTATIONS_PER_REQUEST = 50;
const MESSAGE_LIMIT = 65_000;
const TITLE_LIMIT = 255;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Annotations on the PR repository's own files (pure). A spec's code locations are the paths its
 * binary was built from (`/go/src/github.com/<owner>/<repo>/<path>:<line>`, or the module path
 * with -trimpath); the innermost one inside the repository, outside vendor/, is annotated.
 * Locations elsewhere (another repository, a Go module cache copy `<repo>@<version>`) are not.
 */
export function checkRunAnnotations(
  failures: readonly LocatedFailure[],
  repository: { owner: string; repo: string },
): CheckRunAnnotation[] {
  const inRepository = new RegExp(
    `(?:^|/)github\\.com/${escapeRegExp(repository.owner)}/${escapeRegExp(repository.repo)}/(.+):(\\d+)$`,
    "i",
  );
  const annotations: CheckRunAnnotation[] = [];
  for (const failure of failures) {
    const location = failure.codeLocations
      .map((text) => inRepository.exec(text))
      .filter((match) => match !== null && !match[1]!.startsWith("vendor/") && Number(match[2]) > 0)
      .at(-1);
    if (!location) continue;
    const line = Number(location[2]);
    annotations.push({
      path: location[1]!,
      start_line: line,
      end_line: line,
      annotation_level: "failure",
      title: failure.test.length > TITLE_LIMIT ? `${failure.test.slice(0, TITLE_LIMIT - 1)}…` : failure.test,
      message: failure.message.slice(0, MESSAGE_LIMIT),
    });
  }
  return annotations;
}
