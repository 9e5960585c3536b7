import { generateKeyPair, randomBytes, sign } from "node:crypto";
import { promisify } from "node:util";
import forge from "node-forge";

/** A CA of one simulated API server and the server certificate it signed, PEM-encoded. */
export interface ServingCertificate {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const generateRsa = promisify(generateKeyPair);
const DAY_MS = 24 * 60 * 60 * 1000;

interface RsaKeys {
  publicKey: forge.pki.PublicKey;
  /** The private key, PKCS#8 PEM. */
  pem: string;
}

async function rsaKeys(): Promise<RsaKeys> {
  const { privateKey, publicKey } = await generateRsa("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), pem: privateKey };
}

/**
 * RSA key generation costs 0.1–1 s of CPU, too much for a benchmark of 200 clusters, so the two
 * key pairs are made once per process; every server still gets a CA certificate of its own (its own
 * name and serial), which trusts no other server's certificate.
 */
let processKeys: Promise<{ ca: RsaKeys; server: RsaKeys }> | undefined;

/**
 * Signs as forge's `cert.sign` does (sha256WithRSAEncryption over the TBSCertificate's DER), but
 * with Node's native RSA: forge's JavaScript RSA costs tens of milliseconds per signature.
 */
function signCertificate(cert: forge.pki.Certificate, caKeyPem: string): void {
  const oid = forge.pki.oids.sha256WithRSAEncryption!;
  cert.signatureOid = oid;
  cert.siginfo.algorithmOid = oid;
  // getTBSCertificate is forge's own (cert.sign uses it) but missing from its type definitions.
  const tbs = (
    forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
  ).getTBSCertificate(cert);
  (cert as forge.pki.Certificate & { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), "binary");
  cert.signature = sign("sha256", der, caKeyPem).toString("binary");
}

function certificate(options: {
  subject: string;
  publicKey: forge.pki.PublicKey;
  issuer: forge.pki.CertificateField[];
  extensions: object[];
  validDays: number;
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = options.publicKey;
  // A positive serial: the top bit clear.
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + options.validDays * DAY_MS);
  cert.setSubject([{ name: "commonName", value: options.subject }]);
  cert.setIssuer(options.issuer);
  cert.setExtensions(options.extensions);
  return cert;
}

/**
 * A fresh CA and a server certificate for 127.0.0.1 (and `ipAddresses`) and localhost signed by it, so that a
 * kubeconfig can carry `certificate-authority-data` and clients verify the server as they would
 * a real cluster's (kubectl sends no bearer token over plain HTTP).
 */
export async function generateServingCertificate(options: {
  name: string;
  validDays?: number;
  /** IP addresses it is valid for besides 127.0.0.1. */
  ipAddresses?: string[];
}): Promise<ServingCertificate> {
  const validDays = options.validDays ?? 30;
  processKeys ??= Promise.all([rsaKeys(), rsaKeys()]).then(([ca, server]) => ({ ca, server }));
  const { ca: caKeys, server: serverKeys } = await processKeys;
  const caName = `${options.name}-ca-${randomBytes(4).toString("hex")}`;
  const ca = certificate({
    subject: caName,
    publicKey: caKeys.publicKey,
    issuer: [{ name: "commonName", value: caName }],
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: "subjectKeyIdentifier" },
    ],
    validDays,
  });
  signCertificate(ca, caKeys.pem);
  const server = certificate({
    subject: options.name,
    publicKey: serverKeys.publicKey,
    issuer: ca.subject.attributes,
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 7, ip: "127.0.0.1" },
          ...(options.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
          { type: 2, value: "localhost" },
        ],
      },
    ],
    validDays,
  });
  signCertificate(server, caKeys.pem);
  return {
    caPem: forge.pki.certificateToPem(ca),
    certPem: forge.pki.certificateToPem(server),
    keyPem: serverKeys.pem,
  };
}
