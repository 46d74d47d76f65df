/**
 * @pactd/hdtp-host: a thin HDTP 1.0 / PACT 2.2 MCP host on the official
 * TypeScript MCP SDK (@modelcontextprotocol/sdk), with pactd making every
 * trust decision. The SDK serves the MCP session; tools/list and
 * tools/call go to pactd's hdtp.v1.HostService and its answers are
 * written byte for byte; the host runs only content tools. Sealed-only
 * posture: the host's TLS never needs the leaf key (docs/hdtp-hosts.md).
 */
export { Host, MAX_BODY_BYTES, readBounded, sortRequest, type HostConfig } from "./host.js";
export { Refusal, type Call, type Tool } from "./tools.js";
export { firstEventData, type OutboundCall, type Result } from "./outbound.js";
export { OutboundCallSchema } from "./gen/hdtp/v1/host_pb.js";
