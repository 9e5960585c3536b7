import { generateKeyPairSync } from "node:crypto";

let key: string | undefined;

/** A real RSA private key, so Probot signs real app JWTs in tests (made once per test file). */
export function githubAppKey(): string {
  key ??= generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  }).privateKey;
  return key;
}
