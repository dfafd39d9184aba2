/**
 * Another S3 server's answers in front of the project's S3 server (MinIO,
 * src/controlplane/s3-server.ts): a request an answer of the fixture matches gets that
 * answer, as the other server gave it (test/fixtures/s3/<server>-<version>-<case>.json);
 * every other request goes to MinIO with its Host header, so its signature holds.
 */
import { readFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** One captured answer and the requests it is given to. */
export interface S3Answer {
  method: string;
  /** "service": the bucket list (`/`); "bucket": a bucket's own path; "object": a key. */
  path: "service" | "bucket" | "object";
  /**
   * A query parameter the request carries (`versioning`, `lifecycle`...); "": none at
   * all (a CreateBucket, not a PutBucketTagging); any request when absent.
   */
  query?: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The answers of test/fixtures/s3/`name`.json. */
export async function s3Fixture(name: string): Promise<S3Answer[]> {
  const file = join(import.meta.dirname, "..", "fixtures", "s3", `${name}.json`);
  return JSON.parse(await readFile(file, "utf8")) as S3Answer[];
}

function pathOf(url: string): S3Answer["path"] {
  const parts = new URL(url, "http://front").pathname.split("/").filter(Boolean);
  return parts.length === 0 ? "service" : parts.length === 1 ? "bucket" : "object";
}

/** A front of MinIO at `upstream` that gives `answers` where they match. */
export class S3Front {
  private server?: Server;
  /** `http://127.0.0.1:<port>` once started. */
  url = "";
  /** The requests answered from the fixture, as `METHOD path?query`. */
  readonly answered: string[] = [];
  /** Every request, as `METHOD path?query`. */
  readonly seen: string[] = [];

  constructor(
    private readonly upstream: string,
    private answers: readonly S3Answer[],
  ) {}

  /** Gives `answers` from now on. */
  use(answers: readonly S3Answer[]): void {
    this.answers = answers;
  }

  async start(): Promise<this> {
    const target = new URL(this.upstream);
    this.server = createServer((req, res) => {
      const url = req.url ?? "/";
      this.seen.push(`${req.method} ${url}`);
      const query = new URL(url, "http://front").searchParams;
      const answer = this.answers.find(
        (a) =>
          a.method === req.method &&
          a.path === pathOf(url) &&
          (a.query === undefined || (a.query === "" ? query.size === 0 : query.has(a.query))),
      );
      if (answer) {
        req.resume();
        req.on("end", () => {
          this.answered.push(`${req.method} ${url}`);
          const body = Buffer.from(answer.body);
          // A HEAD answer keeps its Content-Length (of the body a GET would have).
          const length = req.method === "HEAD" ? {} : { "content-length": String(body.length) };
          res.writeHead(answer.status, { ...answer.headers, ...length });
          res.end(req.method === "HEAD" ? undefined : body);
        });
        return;
      }
      const up = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: url,
          headers: req.headers,
        },
        (answered) => {
          res.writeHead(answered.statusCode ?? 502, answered.headers);
          answered.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}
