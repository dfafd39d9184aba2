import { describe, expect, it } from "vitest";
import { proxyFor } from "./kube-proxy.js";

const P = "http://proxy.corp:3128";

describe("proxyFor", () => {
  const cases: {
    reason: string;
    server: string;
    proxyUrl?: string;
    env: NodeJS.ProcessEnv;
    want: string | undefined;
  }[] = [
    {
      reason: "no proxy anywhere: direct",
      server: "https://api.corp:6443",
      env: {},
      want: undefined,
    },
    {
      reason: "the kubeconfig's proxy-url wins over the environment",
      server: "https://api.corp:6443",
      proxyUrl: "socks5://bastion:1080",
      env: { HTTPS_PROXY: P, NO_PROXY: "*" },
      want: "socks5://bastion:1080",
    },
    {
      reason: "HTTPS_PROXY for an https server",
      server: "https://api.corp:6443",
      env: { HTTPS_PROXY: P, HTTP_PROXY: "http://other:1" },
      want: P,
    },
    {
      reason: "lower case is read too, upper case first",
      server: "https://api.corp",
      env: { https_proxy: "http://lower:1", HTTPS_PROXY: P },
      want: P,
    },
    { reason: "lower case alone", server: "https://api.corp", env: { https_proxy: P }, want: P },
    {
      reason: "an https server does not use HTTP_PROXY (Go's rule)",
      server: "https://api.corp",
      env: { HTTP_PROXY: P },
      want: undefined,
    },
    {
      reason: "HTTP_PROXY for an http server",
      server: "http://api.corp:8001",
      env: { HTTP_PROXY: P, HTTPS_PROXY: "http://other:1" },
      want: P,
    },
    {
      reason: "a proxy without a scheme is http://",
      server: "https://api.corp",
      env: { HTTPS_PROXY: "proxy.corp:3128" },
      want: P,
    },
    {
      reason: "localhost is never proxied from the environment",
      server: "https://localhost:6443",
      env: { HTTPS_PROXY: P },
      want: undefined,
    },
    {
      reason: "loopback addresses are never proxied from the environment",
      server: "https://127.0.0.2:6443",
      env: { HTTPS_PROXY: P },
      want: undefined,
    },
    {
      reason: "IPv6 loopback neither",
      server: "https://[::1]:6443",
      env: { HTTPS_PROXY: P },
      want: undefined,
    },
    {
      reason: "loopback given as proxy-url is used",
      server: "https://127.0.0.1:6443",
      proxyUrl: P,
      env: {},
      want: P,
    },
    {
      reason: "NO_PROXY * turns the environment proxy off",
      server: "https://api.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: "*" },
      want: undefined,
    },
    {
      reason: "NO_PROXY names the host",
      server: "https://api.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: "other.corp, API.corp" },
      want: undefined,
    },
    {
      reason: "NO_PROXY domain covers its subdomains",
      server: "https://api.k8s.corp",
      env: { HTTPS_PROXY: P, no_proxy: "k8s.corp" },
      want: undefined,
    },
    {
      reason: "NO_PROXY .domain covers subdomains, not the domain itself",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: ".k8s.corp" },
      want: P,
    },
    {
      reason: "NO_PROXY *.domain is .domain",
      server: "https://api.k8s.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: "*.k8s.corp" },
      want: undefined,
    },
    {
      reason: "a NO_PROXY suffix must end at a dot",
      server: "https://notk8s.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: "k8s.corp" },
      want: P,
    },
    {
      reason: "NO_PROXY with a port matches that port only",
      server: "https://api.corp:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:443" },
      want: P,
    },
    {
      reason: "NO_PROXY with the default port of the scheme",
      server: "https://api.corp",
      env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:443" },
      want: undefined,
    },
    {
      reason: "NO_PROXY CIDR covers an address in it",
      server: "https://10.1.2.3:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "192.168.0.0/16,10.0.0.0/8" },
      want: undefined,
    },
    {
      reason: "NO_PROXY CIDR leaves other addresses",
      server: "https://11.1.2.3:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "10.0.0.0/8" },
      want: P,
    },
    {
      reason: "NO_PROXY address matches that address",
      server: "https://10.1.2.3:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "10.1.2.3" },
      want: undefined,
    },
    {
      reason: "NO_PROXY IPv6 CIDR covers an IPv6 server",
      server: "https://[fd00::10]:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "10.0.0.0/8,fd00::/8" },
      want: undefined,
    },
    {
      reason: "NO_PROXY IPv6 CIDR leaves IPv4 servers",
      server: "https://10.1.2.3:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "fd00::/8" },
      want: P,
    },
    {
      reason: "NO_PROXY [IPv6]:port matches that address and port",
      server: "https://[fd00::10]:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "[fd00::10]:6443" },
      want: undefined,
    },
    {
      reason: "NO_PROXY [IPv6]:port leaves another port",
      server: "https://[fd00::10]:443",
      env: { HTTPS_PROXY: P, NO_PROXY: "[fd00::10]:6443" },
      want: P,
    },
    {
      reason: "NO_PROXY IPv6 address without brackets",
      server: "https://[fd00::10]:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "FD00::10" },
      want: undefined,
    },
    {
      reason: "NO_PROXY host:port matches that port of the host",
      server: "https://api.corp:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "api.corp:6443" },
      want: undefined,
    },
    {
      reason: "NO_PROXY .domain:port for subdomains on that port",
      server: "https://api.k8s.corp:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: ".k8s.corp:6443" },
      want: undefined,
    },
    {
      reason: "a proxy with credentials is kept whole (the connection sends Proxy-Authorization)",
      server: "https://api.corp",
      env: { HTTPS_PROXY: "http://user:p%40ss@proxy.corp:3128" },
      want: "http://user:p%40ss@proxy.corp:3128",
    },
    {
      reason: "socks5h is socks5 (the proxy resolves names either way)",
      server: "https://api.corp",
      env: { HTTPS_PROXY: "socks5h://u:p@bastion:1080" },
      want: "socks5://u:p@bastion:1080",
    },
    {
      reason: "socks5h as proxy-url too",
      server: "https://api.corp",
      proxyUrl: "SOCKS5H://bastion:1080",
      env: {},
      want: "socks5://bastion:1080",
    },
    {
      reason: "a scheme in upper case is read in lower case",
      server: "https://api.corp",
      env: { HTTPS_PROXY: "SOCKS5://bastion:1080" },
      want: "socks5://bastion:1080",
    },
    {
      reason: "a NO_PROXY domain never matches an address",
      server: "https://10.1.2.3:6443",
      env: { HTTPS_PROXY: P, NO_PROXY: "3" },
      want: P,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(proxyFor(new URL(c.server), c.proxyUrl, c.env)).toBe(c.want);
    });
  }

  it("refuses a scheme it cannot use, without quoting the URL", () => {
    const server = new URL("https://api.corp");
    const url = "socks4://user:s3cret-pw@bastion:1080";
    expect(() => proxyFor(server, url, {})).toThrow('unsupported proxy scheme "socks4"');
    expect(() => proxyFor(server, undefined, { HTTPS_PROXY: url })).toThrow(/socks4/);
    const err = (() => {
      try {
        proxyFor(server, url, {});
      } catch (e) {
        return String(e);
      }
      return "";
    })();
    expect(err).not.toContain("s3cret");
  });

  it("refuses a user or password that is not percent-encoded (a bare %), without quoting it, as Go's url.Parse does", () => {
    const server = new URL("https://api.corp");
    const message = 'the proxy\'s user or password is not percent-encoded: write "%" as "%25"';
    for (const proxy of ["http://aidc:50%off@proxy:3128", "socks5://50%of:pw@bastion:1080"]) {
      expect(() => proxyFor(server, proxy, {})).toThrow(message);
      expect(() => proxyFor(server, undefined, { HTTPS_PROXY: proxy })).toThrow(message);
    }
    expect(proxyFor(server, "http://aidc:50%25off@proxy:3128", {})).toBe(
      "http://aidc:50%25off@proxy:3128",
    );
  });
});
