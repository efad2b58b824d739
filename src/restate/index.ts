/**
 * `agentchart/restate`: agent sessions on Restate, for when one process is not enough. A session
 * is a keyed Restate virtual object; each model call and each tool call is a journaled step, so
 * a worker that dies mid-run is replaced by another that resumes without running finished steps
 * again. See docs/restate.md.
 *
 * Worker side (Node 22+, `@restatedev/restate-sdk` installed): {@link createAgentSessions}.
 * Client side (any runtime with fetch): {@link createSessionClient}, {@link watchSession}
 * (also importable alone from `agentchart/restate/client`). Live events: {@link createEventHub},
 * {@link createHttpEventSink}.
 */
import * as restate from "@restatedev/restate-sdk";
import { type AgentSessions, type AgentSessionsOptions, createAgentSessionsWith } from "./session-object.js";

export * from "./api.js";

/**
 * The Restate objects of agent sessions served by this worker. Needs Node 22 or newer (the
 * Restate SDK uses `Promise.withResolvers`). Imported, it makes them with the SDK's ES module
 * build; required from CommonJS, with its CommonJS build: the one the worker serves them with.
 *
 * @example
 * import * as restate from "@restatedev/restate-sdk";
 * import { createAgentSessions } from "agentchart/restate";
 * const sessions = createAgentSessions({ agent: () => ({ initialState: { model, tools }, streamFn }) });
 * restate.serve({ services: sessions.services, port: 9080 });
 */
export function createAgentSessions(options: AgentSessionsOptions): AgentSessions {
	return createAgentSessionsWith(restate, options);
}
