/**
 * What `agentchart/restate` exports besides `createAgentSessions`, one list for both of its
 * entries: `index.ts` (imported: an ES module worker) and `index.cts` (required: a CommonJS
 * worker), which each add `createAgentSessions` bound to the Restate SDK build of their kind
 * (see sdk.ts). Nothing here loads the SDK.
 */
export type { AgentSessions, AgentSessionsOptions, AgentSessionHandlers } from "./session-object.js";
export { createSessionClient, watchSession, SessionCallError, SessionBodyTooLargeError, SessionUnreachableError, type CallOptions, type SentCall, type SessionClient, type SessionClientOptions, type SessionHandle } from "./client.js";
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
