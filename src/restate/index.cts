/**
 * `agentchart/restate` required from CommonJS (a worker TypeScript compiled to CommonJS, or
 * plain `require`): the same exports as `index.ts`, with the session objects made by the Restate
 * SDK's CommonJS build, the one the worker's own `require("@restatedev/restate-sdk")` serves
 * them with (see sdk.ts). The rest of the package is loaded as ES modules (`require` of an ES
 * module: Node 22.12 and later).
 */
import restate = require("@restatedev/restate-sdk");
import sessionObject = require("./session-object.js");
import type { RestateSdk } from "./sdk.js";

export * from "./api.js";

/**
 * The Restate objects of agent sessions served by this worker (see `createAgentSessions` of the
 * ES module entry), made with the SDK's CommonJS build.
 *
 * @example
 * const restate = require("@restatedev/restate-sdk");
 * const { createAgentSessions } = require("agentchart/restate");
 * const sessions = createAgentSessions({ agent: () => ({ initialState: { model, tools }, streamFn }) });
 * restate.serve({ services: sessions.services, port: 9080 });
 */
export function createAgentSessions(options: sessionObject.AgentSessionsOptions): sessionObject.AgentSessions {
	// The CommonJS build's declarations (.d.cts) are the ES module build's, seen by TypeScript as other types.
	return sessionObject.createAgentSessionsWith(restate as unknown as RestateSdk, options);
}
