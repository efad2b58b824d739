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
export { createAgentSessions, type AgentSessions, type AgentSessionsOptions, type AgentSessionHandlers } from "./session-object.js";
export { createSessionClient, watchSession, SessionCallError, type CallOptions, type SentCall, type SessionClient, type SessionClientOptions, type SessionHandle } from "./client.js";
export { createEventHub, type EventHub, type EventHubOptions } from "./event-hub.js";
export { createHttpEventSink, sessionEventOf, type SessionEvent, type SessionEventEnvelope, type SessionEventSink, type SlimAssistantMessageEvent } from "./session-events.js";
export { describeSession, isWaitingForApproval, pendingApprovalsOf } from "./session-view.js";
export { replayEvents } from "./journaled-model.js";
export type {
	AbortResult,
	ApproveInput,
	PromptInput,
	QueuedInput,
	QueuedMessage,
	QueuedResult,
	RejectInput,
	RunInProgress,
	RunResult,
	SessionState,
	SessionStatus,
	StoredSnapshot,
} from "./session-types.js";
