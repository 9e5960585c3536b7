import { z } from "zod";

/**
 * A build-farm capability: something a cluster offers beyond its node architectures (ipv6,
 * ovn-ic, baremetal …), named in the farm configuration and required by repositories.
 */
export const capabilitySchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._/-]*$/, "a capability: lowercase letters, digits, '.', '_', '/' and '-'");
