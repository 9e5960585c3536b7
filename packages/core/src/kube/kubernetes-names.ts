import { z } from "zod";

/** RFC 1123 label: names Kubernetes uses in DNS and labels (namespaces, clusters here). */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: names of Secrets, ServiceAccounts and the like. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const dnsLabelSchema = z
  .string()
  .max(63)
  .regex(DNS_LABEL, "lowercase letters, digits and '-' (RFC 1123 label)");
export const dnsSubdomainSchema = z
  .string()
  .max(253)
  .regex(DNS_SUBDOMAIN, "lowercase letters, digits, '-' and '.' (RFC 1123 subdomain)");
