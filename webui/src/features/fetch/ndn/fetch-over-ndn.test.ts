// @vitest-environment node
// (NDNts checks `instanceof Uint8Array`, which jsdom's separate realm breaks)
import { Version } from "@ndn/naming-convention2";
import { Name } from "@ndn/packet";
import { Encoder } from "@ndn/tlv";
import { describe, expect, it } from "vitest";
import { NdnFetchError, parseMetadata } from "./fetch-over-ndn";

// the metadata content `ndnsci serve` writes (docs/protocol.md section 8)
function content(...fields: [number, Uint8Array][]): Uint8Array {
  const versioned = new Name("/CMIP5/a.nc").append(Version, 1795307174575604);
  return Encoder.encode([versioned, ...fields.map(([type, value]) => [type, value] as [number, Uint8Array])]);
}

describe("parseMetadata", () => {
  it("reads the versioned name, the size and the producer's SHA-256", () => {
    const digest = new Uint8Array(32).fill(0xab);
    const meta = parseMetadata(content([0xf500, Uint8Array.of(0x1f, 0x40)], [0xf502, Uint8Array.of(0, 0, 0, 0, 0, 0, 0x5e, 0xfa)], [0xf510, digest]));
    expect(meta.versioned.equals(new Name("/CMIP5/a.nc").append(Version, 1795307174575604))).toBe(true);
    expect(meta.size).toBe(24314);
    expect(meta.sha256).toBe("ab".repeat(32));
  });

  it("has no digest while the producer is still hashing", () => {
    expect(parseMetadata(content([0xf512, new Uint8Array()])).sha256).toBeNull();
  });

  it("refuses metadata without a name", () => {
    expect(() => parseMetadata(Encoder.encode([0xf502, Uint8Array.of(1)]))).toThrow(NdnFetchError);
  });
});
