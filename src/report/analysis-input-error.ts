/** The inputs of an analysis cannot be read: a missing file, a directory without results, bad history. */
export class AnalysisInputError extends Error {
  override readonly name = "AnalysisInputError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
