/** e_machine values of the architectures OpenShift ships, plus common strangers for messages. */
const ELF_MACHINES: Record<number, string> = {
  0x03: "386",
  0x08: "mips",
  0x14: "ppc",
  0x15: "ppc64le",
  0x16: "s390x",
  0x28: "arm",
  0x3e: "amd64",
  0xb7: "arm64",
  0xf3: "riscv64",
};

/**
 * The architecture an ELF header names, "unknown(0xNN)" for a machine we do not know, or undefined
 * when the bytes are not an ELF header (scripts, for instance, run anywhere).
 */
export function elfArch(header: Uint8Array): string | undefined {
  if (header.length < 20) return undefined;
  if (header[0] !== 0x7f || header[1] !== 0x45 || header[2] !== 0x4c || header[3] !== 0x46) return undefined;
  const littleEndian = header[5] === 1;
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const machine = view.getUint16(18, littleEndian);
  if (machine === 0x15 && !littleEndian) return "ppc64";
  return ELF_MACHINES[machine] ?? `unknown(0x${machine.toString(16)})`;
}
