import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Paths of the PEM files a local control plane needs. */
export interface ControlPlaneCerts {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

async function openssl(cwd: string, args: string[]): Promise<void> {
  await run("openssl", args, { cwd });
}

/**
 * Generates, with the openssl CLI, a CA, a serving certificate for 127.0.0.1, ::1 and
 * localhost, an admin client certificate in group system:masters, and an RSA key pair
 * that signs service-account tokens. Files are written into `dir`.
 */
export async function generateCerts(dir: string): Promise<ControlPlaneCerts> {
  const p = (name: string) => join(dir, name);
  const certs: ControlPlaneCerts = {
    caCert: p("ca.crt"),
    caKey: p("ca.key"),
    serverCert: p("server.crt"),
    serverKey: p("server.key"),
    adminCert: p("admin.crt"),
    adminKey: p("admin.key"),
    serviceAccountKey: p("sa.key"),
    serviceAccountPub: p("sa.pub"),
  };
  const days = "3650";
  await openssl(dir, [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    certs.caKey,
    "-out",
    certs.caCert,
    "-days",
    days,
    "-subj",
    "/CN=aidc-operator-local-ca",
  ]);
  await writeFile(
    p("server.ext"),
    "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  await writeFile(p("client.ext"), "extendedKeyUsage=clientAuth\n");
  const leaf = async (name: string, subject: string, ext: string) => {
    await openssl(dir, [
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      p(`${name}.key`),
      "-out",
      p(`${name}.csr`),
      "-subj",
      subject,
    ]);
    await openssl(dir, [
      "x509",
      "-req",
      "-in",
      p(`${name}.csr`),
      "-CA",
      certs.caCert,
      "-CAkey",
      certs.caKey,
      "-CAcreateserial",
      "-out",
      p(`${name}.crt`),
      "-days",
      days,
      "-extfile",
      p(ext),
    ]);
  };
  await leaf("server", "/CN=kube-apiserver", "server.ext");
  await leaf("admin", "/O=system:masters/CN=aidc-admin", "client.ext");
  await openssl(dir, ["genrsa", "-out", certs.serviceAccountKey, "2048"]);
  await openssl(dir, [
    "rsa",
    "-in",
    certs.serviceAccountKey,
    "-pubout",
    "-out",
    certs.serviceAccountPub,
  ]);
  return certs;
}

/**
 * Writes a kubeconfig for the admin (group system:masters) of the API server at
 * `server`, with the certificates inlined, readable by its owner only.
 */
export async function writeAdminKubeconfig(
  path: string,
  server: string,
  c: ControlPlaneCerts,
): Promise<void> {
  const b64 = async (p: string) => (await readFile(p)).toString("base64");
  const kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "aidc-local",
        cluster: { server, "certificate-authority-data": await b64(c.caCert) },
      },
    ],
    users: [
      {
        name: "aidc-admin",
        user: {
          "client-certificate-data": await b64(c.adminCert),
          "client-key-data": await b64(c.adminKey),
        },
      },
    ],
    contexts: [{ name: "aidc-local", context: { cluster: "aidc-local", user: "aidc-admin" } }],
    "current-context": "aidc-local",
  };
  // JSON is valid YAML: kubectl and client-node both read it.
  await writeFile(path, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
}
