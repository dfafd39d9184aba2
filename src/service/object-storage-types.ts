/**
 * The shapes of the object storage client (object-storage.ts): where the storage is and
 * how to sign for it, and each bucket feature in the canonical shape the Bucket
 * controller compares with its spec. Types only: importing them loads no S3 client.
 */

import type { ProxyResolver } from "./service-proxy.js";

/** An S3 access key pair, with its session token when the pair is temporary (STS). */
export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** Sent signed as `x-amz-security-token`; temporary credentials are refused without it. */
  sessionToken?: string;
}

/** Where the object storage is and how to sign for it. */
export interface ObjectStorageOptions {
  /** The S3 endpoint (`{object_storage_url}`). */
  endpoint: string;
  /** The region requests are signed for. */
  region: string;
  /** The current key pair; called for every request, so a rotated Secret takes effect. */
  credentials: () => Promise<S3Credentials>;
  /** Where the credentials come from (e.g. "the Secret ops/s3-keys"), named when they are refused. */
  credentialsSource?: string;
  /** Told when the storage refuses the credentials: their source renews them (web identity). */
  credentialsRefused?: () => void;
  /** Timeout of one HTTP attempt. Default 10 s. */
  timeoutMs?: number;
  /**
   * Keep-alive connections idle this long are closed, and never reused, before the
   * server closes them (the service client's `service.idleSocketTimeoutMs`, 4 s by
   * default: docs/service-assumptions.md section 3): a request written on a connection
   * the server is closing fails with ECONNRESET. Default DEFAULT_IDLE_SOCKET_TIMEOUT_MS.
   */
  idleSocketTimeoutMs?: number;
  /** The proxy of the endpoint (HTTPS_PROXY... as the composition reads them); default none. */
  proxyFor?: ProxyResolver;
  /**
   * Asked right before each attempt is sent, as the service client's `mayCall`; false
   * stops it unsent (a leader whose Lease may have passed to another replica). Default:
   * always true.
   */
  mayCall?: () => boolean;
}

/** One lifecycle rule, as the Bucket spec states it. */
export interface LifecycleRule {
  id: string;
  /** Key prefix the rule applies to ("" for every object). */
  prefix: string;
  enabled: boolean;
  /** Days after which current versions expire. */
  expirationDays?: number;
  /** Days after which noncurrent versions are removed. */
  noncurrentVersionExpirationDays?: number;
}

/** One CORS rule. */
export interface CorsRule {
  allowedOrigins: string[];
  allowedMethods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds?: number;
}

/** Versioning state of a bucket: never enabled, on, or paused. */
export type VersioningState = "Off" | "Enabled" | "Suspended";

/** One bucket of the account, from the bucket list. */
export interface ListedBucket {
  name: string;
  creationDate?: Date;
}

/** Whether a bucket exists, as a HEAD answers it (not whose it is: the account's list tells). */
export type BucketPresence = "Absent" | "Present" | "Forbidden";

/**
 * Where an account's object storage is and how to read its key pair (a connection's:
 * `ConnectionClients.resolve` of controllers/connections/client.ts; the default one's:
 * config/object-storage.ts).
 */
export interface ObjectStorageSettings {
  endpoint: string;
  region?: string;
  /**
   * The key pair as it is now (a rotated Secret is used at the next call), registered
   * with the redactor before it is returned; throws an Error saying what is missing.
   */
  credentials(): Promise<S3Credentials>;
  /** Where the credentials come from, named when the object storage refuses them. */
  source?: string;
  /**
   * Drops the credentials kept, when the object storage refused them: the next call
   * gets new ones (web identity's, whose STS renews them); absent when only a changed
   * source brings new ones.
   */
  refused?(): void;
  /**
   * Reads the credentials every refresh interval, also while no request is made, and
   * calls `onChange` when they differ from the last read (the default connection's
   * mounted files: a held object waits for no request); returns what stops it.
   */
  watch?(onChange: () => void): () => void;
  /** Whether a Bucket may write the key pair into its spec.exportTo Secret (default no). */
  exportCredentials?: boolean;
}
