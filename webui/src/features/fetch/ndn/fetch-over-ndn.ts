// Fetching files over NDN in the browser with NDNts, through the local forwarder's WebSocket
// face (docs/protocol.md section 8): RDR discovery of `<name>/32=metadata`, then the segments
// `<name>/v=<version>/seg=<n>`, each checked against its DigestSha256, the whole file hashed
// as it arrives. This module is loaded only when a user fetches (a chunk of its own).
import { consume } from "@ndn/endpoint";
import { Forwarder } from "@ndn/fw";
import { Data, digestSigning, Name } from "@ndn/packet";
import { makeDiscoveryInterest } from "@ndn/rdr";
import { fetch as fetchSegments } from "@ndn/segmented-object";
import { Decoder } from "@ndn/tlv";
import { WsTransport } from "@ndn/ws-transport";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

const CONTENT_TYPE_NACK = 3;
const TLV_NAME = 0x07;
const TLV_SIZE = 0xf502;
const TLV_SHA256 = 0xf510;
const TLV_SHA256_PENDING = 0xf512;

export class NdnFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NdnFetchError";
  }
}

export interface FileMetadata {
  /** `<name>/v=<version>` */
  versioned: Name;
  size: number | null;
  /** the producer's whole-file SHA-256, when it has computed it */
  sha256: string | null;
}

export function parseMetadata(content: Uint8Array): FileMetadata {
  const decoder = new Decoder(content);
  let versioned: Name | undefined;
  let size: number | null = null;
  let digest: string | null = null;
  while (!decoder.eof) {
    const tlv = decoder.read();
    if (tlv.type === TLV_NAME && !versioned) versioned = tlv.decoder.decode(Name);
    else if (tlv.type === TLV_SIZE) size = tlv.nni;
    else if (tlv.type === TLV_SHA256 && tlv.length === 32) digest = bytesToHex(tlv.value);
    else if (tlv.type === TLV_SHA256_PENDING) digest = null;
  }
  if (!versioned) throw new NdnFetchError("the producer's metadata names no version");
  return { versioned, size, sha256: digest };
}

export interface Progress {
  received: number;
  total: number | null;
  phase: "discovering" | "fetching";
}

export interface FetchedFile {
  blob: Blob;
  sha256: string;
  versionedName: string;
  producerSha256: string | null;
}

export interface NdnSession {
  fetchFile(name: string, options: { signal?: AbortSignal; size?: number | null; onProgress?: (p: Progress) => void }): Promise<FetchedFile>;
  close(): void;
}

/** Connect to the forwarder's WebSocket face; one connection serves many files. */
export async function openSession(forwarderUrl: string, connectTimeout = 4000): Promise<NdnSession> {
  const fw = Forwarder.create();
  let face: Awaited<ReturnType<typeof WsTransport.createFace>>;
  try {
    face = await WsTransport.createFace({ fw }, forwarderUrl, { connectTimeout });
  } catch (error) {
    throw new NdnFetchError(
      `cannot connect to the forwarder at ${forwarderUrl} (${(error as Error).message || "refused"}): start it with \`ndnsci forwarder start\``,
    );
  }
  return {
    fetchFile: (name, options) => fetchFile(fw, name, options),
    close: () => face.close(),
  };
}

async function discover(fw: Forwarder, name: Name, signal?: AbortSignal): Promise<FileMetadata> {
  const interest = makeDiscoveryInterest(name);
  interest.lifetime = 1000;
  let data: Data;
  try {
    data = await consume(interest, { fw, retx: 2, signal, describe: `metadata ${name}` });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new NdnFetchError(
      `no producer answered for ${name.toString()}: is \`ndnsci serve\` running with a prefix that covers it?`,
    );
  }
  if (data.contentType === CONTENT_TYPE_NACK) {
    throw new NdnFetchError(`the producer refused ${name.toString()}: ${new TextDecoder().decode(data.content) || "no reason given"}`);
  }
  return parseMetadata(data.content);
}

async function fetchFile(
  fw: Forwarder,
  uri: string,
  { signal, size, onProgress }: { signal?: AbortSignal; size?: number | null; onProgress?: (p: Progress) => void },
): Promise<FetchedFile> {
  const name = new Name(uri);
  onProgress?.({ received: 0, total: size ?? null, phase: "discovering" });
  const metadata = await discover(fw, name, signal);
  const total = metadata.size ?? size ?? null;
  const hash = sha256.create();
  const chunks: Uint8Array[] = [];
  let received = 0;
  let lastReport = 0;
  const result = fetchSegments(metadata.versioned, { fw, verifier: digestSigning, signal, retxLimit: 10 });
  try {
    for await (const chunk of result.chunks()) {
      hash.update(chunk);
      chunks.push(chunk);
      received += chunk.byteLength;
      const now = performance.now();
      if (now - lastReport > 100) {
        lastReport = now;
        onProgress?.({ received, total, phase: "fetching" });
      }
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new NdnFetchError(`transfer of ${uri} stopped after ${received} bytes: ${(error as Error).message}`);
  }
  onProgress?.({ received, total, phase: "fetching" });
  return {
    blob: new Blob(chunks as BlobPart[], { type: "application/octet-stream" }),
    sha256: bytesToHex(hash.digest()),
    versionedName: metadata.versioned.toString(),
    producerSha256: metadata.sha256,
  };
}
