import { defineConfig } from "vitest/config";

/**
 * Two projects: `unit` (pure logic and loopback-only servers, tests beside the code)
 * and `integration` (a real kube-apiserver + etcd started once by the global setup,
 * plus the service emulator). `npm test` runs both.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/unit/**/*.test.ts"],
          environment: "node",
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          setupFiles: ["test/support/sweep-namespaces.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Tests share one control plane; files run one at a time so that the
          // operator processes they start do not compete for two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
