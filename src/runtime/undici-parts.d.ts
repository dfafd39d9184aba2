// undici's Pool, which the Kubernetes connection (kube-connection.ts) imports by file
// rather than through undici's index: the index loads fetch, WebSocket, caches and
// mocks as well (~12 MiB more at start). Typed by undici's own declaration.
declare module "undici/lib/dispatcher/pool.js" {
  import { Pool } from "undici";
  export default Pool;
}

// undici's connector, which that Pool builds from an options object, for the
// connection's own (kube-connector.ts).
declare module "undici/lib/core/connect.js" {
  import { buildConnector } from "undici";
  export default buildConnector;
}
