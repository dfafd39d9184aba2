import { describe, expect, it } from "vitest";
import {
  agentProxySupported,
  proxyAgentOptions,
  proxyOptionsFor,
  ServiceProxyError,
} from "./service-proxy.js";

describe("proxyAgentOptions", () => {
  it.each([
    { reason: "no proxy: a direct call", proxy: undefined, want: {} },
    {
      reason: "an http:// proxy names itself for both schemes, NO_PROXY already applied",
      proxy: "http://u:p@proxy.corp:3128",
      want: {
        proxyEnv: {
          HTTP_PROXY: "http://u:p@proxy.corp:3128",
          HTTPS_PROXY: "http://u:p@proxy.corp:3128",
        },
      },
    },
    {
      reason: "an https:// proxy",
      proxy: "https://proxy.corp",
      want: { proxyEnv: { HTTP_PROXY: "https://proxy.corp", HTTPS_PROXY: "https://proxy.corp" } },
    },
    {
      reason: "a socks5 proxy as socks5h: the proxy resolves the names, as for the API server",
      proxy: "socks5://u:p@bastion:1080",
      want: { socks: "socks5h://u:p@bastion:1080" },
    },
    {
      reason: "a socks5h proxy",
      proxy: "socks5h://bastion:1080",
      want: { socks: "socks5h://bastion:1080" },
    },
  ])("$reason", ({ proxy, want }) => {
    expect(proxyAgentOptions(proxy, "24.21.0")).toEqual(want);
  });

  it.each([
    {
      reason: "a scheme neither Node's agents nor socks5 tunnels take",
      proxy: "socks4://u:secret@h:1080",
      nodeVersion: "24.21.0",
      message: /unsupported proxy scheme "socks4" .*: http, https or socks5$/,
    },
    {
      reason: "a URL that does not parse",
      proxy: "http://u:secret@[bad",
      nodeVersion: "24.21.0",
      message: /does not parse/,
    },
    {
      reason: "a Node without the agents' proxy support",
      proxy: "http://u:secret@h:3128",
      nodeVersion: "22.19.0",
      message: /Node 22\.19\.0 cannot .* Node 22\.21\+ or 24\.5\+/,
    },
  ])("refuses $reason, without the URL or its password", ({ proxy, nodeVersion, message }) => {
    const thrown = (() => {
      try {
        proxyAgentOptions(proxy, nodeVersion);
      } catch (err) {
        return err as Error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ServiceProxyError);
    expect(thrown?.message).toMatch(message);
    expect(thrown?.message).not.toContain("secret");
  });

  it("takes a socks5 proxy on a Node whose agents cannot tunnel through an http one", () => {
    expect(proxyAgentOptions("socks5://h:1080", "22.19.0")).toEqual({
      socks: "socks5h://h:1080",
    });
  });
});

describe("agentProxySupported", () => {
  it.each([
    ["22.19.0", false],
    ["22.21.0", true],
    ["23.11.0", false],
    ["24.4.1", false],
    ["24.5.0", true],
    ["25.0.0", true],
  ])("Node %s: %s", (version, want) => {
    expect(agentProxySupported(version)).toBe(want);
  });
});

describe("proxyOptionsFor", () => {
  it("names what is called and the variable an https:// URL reads", () => {
    expect(() =>
      proxyOptionsFor("the service", "https://api.example.com", () => "ftp://h:21"),
    ).toThrow(/^the proxy of the service \(HTTPS_PROXY\): unsupported proxy scheme "ftp"/);
  });

  it("asks the resolver about the URL it calls", () => {
    const asked: string[] = [];
    proxyOptionsFor("the object storage", "http://s3.example.com:9000", (url) => {
      asked.push(url.host);
      return undefined;
    });
    expect(asked).toEqual(["s3.example.com:9000"]);
  });
});
