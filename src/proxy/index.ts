/**
 * `xstate-agent-loop/proxy`: the stream proxy, both sides. `streamProxy` (also exported from the
 * root, as in pi) runs in browsers; `createStreamProxyHandler` is the Node `http` server side.
 */
export { streamProxy, proxyStreamFn, type ProxyStreamOptions } from "./client.js";
export { createStreamProxyHandler, type StreamProxyHandler, type StreamProxyHandlerOptions } from "./server.js";
export {
  PROXY_STREAM_PATH,
  PROXY_OPTION_KEYS,
  toProxyEvent,
  pickProxyOptions,
  type ProxyAssistantMessageEvent,
  type ProxyOptionKey,
  type ProxyStreamOptionFields,
} from "./wire.js";
export { ProxyProtocolError } from "./rebuild.js";
