/**
 * The real S3 server of the Bucket tests (MinIO, src/controlplane/s3-server.ts) on a
 * free port with a temporary data directory, its key pair in a credentials directory
 * as a mounted Secret would hold it, and an S3 client of the test's own (what a user
 * would do outside the cluster).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { LocalS3Server, type LocalS3ServerOptions } from "../../src/controlplane/s3-server.js";
import { ObjectStorageClient } from "../../src/service/object-storage.js";

/** A running S3 server for one test file. */
export interface TestS3 {
  server: LocalS3Server;
  /** The directory holding `accessKeyId` and `secretAccessKey` (the operator reads it). */
  credentialsDir: string;
  /** The operator config's `objectStorage` for this server. */
  config: Record<string, unknown>;
  /** A client with the current root keys, for what a user does outside the cluster. */
  client(): ObjectStorageClient;
  /** The SDK's own client with the current root keys, for S3 calls the operator never makes. */
  sdk(): S3Client;
  /**
   * Writes a key pair into the credentials directory (a rotated Secret), with the session
   * token of temporary credentials or without one; resolves once the operator can no
   * longer hold a pair it read before (its `credentialsRefreshMs`).
   */
  writeCredentials(
    accessKeyId: string,
    secretAccessKey: string,
    sessionToken?: string,
  ): Promise<void>;
  stop(): Promise<void>;
}

/** How long the operator keeps the pair it read from the credentials directory. */
const CREDENTIALS_REFRESH_MS = 200;

/** Starts MinIO (of `options`) and writes its keys into a fresh credentials directory. */
export async function startTestS3(options?: LocalS3ServerOptions): Promise<TestS3> {
  const server = await new LocalS3Server(options).start();
  const credentialsDir = await mkdtemp(join(tmpdir(), "aidc-s3-keys-"));
  const writeCredentials = async (
    accessKeyId: string,
    secretAccessKey: string,
    sessionToken?: string,
  ) => {
    await writeFile(join(credentialsDir, "accessKeyId"), accessKeyId);
    await writeFile(join(credentialsDir, "secretAccessKey"), secretAccessKey);
    const token = join(credentialsDir, "sessionToken");
    await (sessionToken ? writeFile(token, sessionToken) : rm(token, { force: true }));
  };
  await writeCredentials(server.accessKeyId, server.secretAccessKey);
  // A pair the operator read just before a write is kept CREDENTIALS_REFRESH_MS.
  const rotate = async (accessKeyId: string, secretAccessKey: string, sessionToken?: string) => {
    await writeCredentials(accessKeyId, secretAccessKey, sessionToken);
    await new Promise((r) => setTimeout(r, CREDENTIALS_REFRESH_MS + 50));
  };
  const clients: { close(): void }[] = [];
  return {
    server,
    credentialsDir,
    config: {
      endpoint: server.url,
      allowInsecureHttp: true,
      credentialsDir,
      credentialsRefreshMs: CREDENTIALS_REFRESH_MS,
      timeoutMs: 5_000,
    },
    client() {
      const c = new ObjectStorageClient({
        endpoint: server.url,
        region: server.region,
        credentials: async () => ({
          accessKeyId: server.accessKeyId,
          secretAccessKey: server.secretAccessKey,
        }),
      });
      clients.push(c);
      return c;
    },
    sdk() {
      const c = new S3Client({
        endpoint: server.url,
        region: server.region,
        forcePathStyle: true,
        credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      });
      clients.push({ close: () => c.destroy() });
      return c;
    },
    writeCredentials: rotate,
    async stop() {
      for (const c of clients) c.close();
      await server.stop();
      await rm(credentialsDir, { recursive: true, force: true });
    },
  };
}
