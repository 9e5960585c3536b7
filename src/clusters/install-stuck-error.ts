import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";

/**
 * Hive says an install will never finish — its release image failed verification, its cloud
 * credentials were refused, a requirement is missing — so another attempt would meet the same fate.
 */
export class InstallStuckError extends ClustersUnavailableError {}
