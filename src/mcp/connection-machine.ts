/**
 * The connection to one MCP server, as a statechart:
 *
 * ```
 * connecting ──done──▶ ready (tools-current ⇄ refreshing-tools) ──session.lost──▶ reconnecting
 *     │ error / timeout: retry left? ─▶ reconnecting ──after backoff──▶ connecting
 *     └──────────────── no retry left ─▶ failed ──reconnect──▶ connecting
 * close (from any of them) ─▶ closing ──▶ closed
 * ```
 *
 * The chart owns the session: it opens one in `connecting`, watches it in `ready`, retires
 * it on the way to `reconnecting` or `failed`, and closes it in `closing`. Tool calls do not
 * pass through the chart (many run at once, and a call is not a change of connection
 * state); they read the snapshot, and go through only in `ready`.
 */
import { and, assign, setup } from "xstate";
import {
	closeSessionActor,
	listToolsActor,
	openSessionActor,
	watchSessionActor,
	type OpenedSession,
	type OpenSession,
	type SessionWatchEvent,
} from "./connection-actors.js";
import { errorMessage } from "./errors.js";
import type { McpSession } from "./session.js";
import { backoffDelay, type ConnectionSettings } from "./settings.js";
import type { McpToolInfo } from "./types.js";

/** What a connection starts from. */
export interface McpConnectionInput {
	/** The server's key in `servers`. */
	server: string;
	settings: ConnectionSettings;
	/** Creates and connects a session (the transport is the caller's business). */
	openSession: OpenSession;
}

/**
 * How long a server must stay ready before its reconnection attempts start again from the first
 * (delay `initialDelayMs`): one lost sooner counts as one more failed attempt.
 */
export const STABLE_AFTER_MS = 10_000;

/** The connection's data. */
export interface McpConnectionContext {
	server: string;
	settings: ConnectionSettings;
	openSession: OpenSession;
	/** The session in use (ready) or last used; undefined once retired. */
	session: McpSession | undefined;
	/** The server's tools as last listed; kept while reconnecting, so the model's tool list stays put. */
	tools: readonly McpToolInfo[];
	/** Reconnection attempts since the server was last ready for {@link STABLE_AFTER_MS}. */
	attempts: number;
	/** Why the last attempt failed or the connection was lost. */
	lastError: string | undefined;
}

/** Events the connection handles: its children's, and the two its owner sends. */
export type McpConnectionEvent = SessionWatchEvent | { type: "reconnect" } | { type: "close" };

/** The error of a failed child (`xstate.error.actor.*`), as `recordError`'s parameter. */
const childError = ({ event }: { event: { error: unknown } }): unknown => event.error;

/**
 * The connection statechart. `McpConnection` runs it; `mcpConnectionChart` (in
 * `agentchart/mcp`) is the same definition typed by its shape, for diagrams.
 *
 * @example
 * const actor = createActor(mcpConnectionMachine, {
 *   input: { server: "everything", settings: resolveConnectionSettings({}), openSession: (signal) => openAndConnect(signal) },
 * }).start();
 * actor.getSnapshot().value; // "connecting"
 */
export const mcpConnectionMachine = setup({
	types: {
		context: {} as McpConnectionContext,
		events: {} as McpConnectionEvent,
		input: {} as McpConnectionInput,
	},
	actors: {
		openSession: openSessionActor,
		listTools: listToolsActor,
		closeSession: closeSessionActor,
		watchSession: watchSessionActor,
	},
	delays: {
		backoffDelay: ({ context }) => (context.settings.reconnect === false ? 0 : backoffDelay(context.settings.reconnect, context.attempts + 1)),
		connectTimeout: ({ context }) => context.settings.connectTimeoutMs,
		stableAfter: STABLE_AFTER_MS,
	},
	guards: {
		isCurrentSession: ({ context, event }) => "sessionId" in event && event.sessionId === context.session?.id,
		mayReconnect: ({ context }) => context.settings.reconnect !== false && context.attempts < context.settings.reconnect.maxAttempts,
	},
	actions: {
		useOpenedSession: assign((_, opened: OpenedSession) => ({ session: opened.session, tools: opened.tools, lastError: undefined })),
		useListedTools: assign((_, tools: McpToolInfo[]) => ({ tools })),
		recordError: assign((_, error: unknown) => ({ lastError: errorMessage(error) })),
		recordConnectTimeout: assign(({ context }) => ({ lastError: `no answer within ${context.settings.connectTimeoutMs} ms` })),
		recordLoss: assign(({ event }) => (event.type === "session.lost" ? { lastError: `connection lost: ${event.reason}` } : {})),
		countAttempt: assign(({ context }) => ({ attempts: context.attempts + 1 })),
		resetAttempts: assign({ attempts: 0 }),
		// Not awaited here: `closing` awaits the current session, and the owner awaits every session it opened.
		retireSession: ({ context }) => void context.session?.close(),
		forgetSession: assign({ session: undefined }),
	},
}).createMachine({
	id: "mcpConnection",
	context: ({ input }) => ({
		server: input.server,
		settings: input.settings,
		openSession: input.openSession,
		session: undefined,
		tools: [],
		attempts: 0,
		lastError: undefined,
	}),
	initial: "connecting",
	states: {
		connecting: {
			description:
				"Starting the server process (stdio) or opening an HTTP session, then the MCP handshake and the first tool listing. Calls fail at once.",
			invoke: {
				id: "open-session",
				src: "openSession",
				input: ({ context }) => ({ open: context.openSession }),
				onDone: { target: "ready", actions: { type: "useOpenedSession", params: ({ event }) => event.output } },
				onError: [
					{ guard: "mayReconnect", target: "reconnecting", actions: { type: "recordError", params: childError } },
					{ target: "failed", actions: { type: "recordError", params: childError } },
				],
			},
			after: {
				connectTimeout: [
					{ guard: "mayReconnect", target: "reconnecting", actions: "recordConnectTimeout" },
					{ target: "failed", actions: "recordConnectTimeout" },
				],
			},
			on: { close: "closing" },
		},
		ready: {
			description: "Connected: the tools are listed and calls go through. A lost process or HTTP session leads to reconnecting.",
			invoke: {
				id: "watch-session",
				src: "watchSession",
				input: ({ context }) => ({ session: context.session }),
				onError: [
					{ guard: "mayReconnect", target: "reconnecting", actions: { type: "recordError", params: childError } },
					{ target: "failed", actions: { type: "recordError", params: childError } },
				],
			},
			// A server that dies soon after it is ready (a missing key, a crash at its first request)
			// has not recovered: its attempts count on, so the backoff grows and maxAttempts applies.
			after: { stableAfter: { actions: "resetAttempts" } },
			initial: "tools-current",
			states: {
				"tools-current": {
					description: "The tool list is as the server last listed it.",
					on: { "tools.changed": { guard: "isCurrentSession", target: "refreshing-tools" } },
				},
				"refreshing-tools": {
					description: "The server said its tools changed (notifications/tools/list_changed): listing them again. Calls still go through.",
					invoke: {
						id: "list-tools",
						src: "listTools",
						input: ({ context }) => ({ session: context.session }),
						onDone: { target: "tools-current", actions: { type: "useListedTools", params: ({ event }) => event.output } },
						// The old list stays; a lost session is reported separately by the watcher.
						onError: { target: "tools-current", actions: { type: "recordError", params: childError } },
					},
					after: { connectTimeout: { target: "tools-current", actions: "recordConnectTimeout" } },
					// A change during the listing may be missing from it: list once more from the start.
					on: { "tools.changed": { guard: "isCurrentSession", target: "refreshing-tools", reenter: true } },
				},
			},
			on: {
				"session.lost": [
					{ guard: and(["isCurrentSession", "mayReconnect"]), target: "reconnecting", actions: "recordLoss" },
					{ guard: "isCurrentSession", target: "failed", actions: "recordLoss" },
				],
				close: "closing",
			},
		},
		reconnecting: {
			description:
				"The connection was lost or an attempt failed: the old session is closed, and the next attempt waits out a backoff delay that doubles each time. Calls fail at once.",
			entry: ["retireSession", "forgetSession"],
			after: { backoffDelay: { target: "connecting", actions: "countAttempt" } },
			on: {
				reconnect: { target: "connecting", actions: "resetAttempts" },
				close: "closing",
			},
		},
		failed: {
			description: "Gave up: reconnection is off, or every attempt failed. Calls fail at once; `reconnect` starts over.",
			entry: ["retireSession", "forgetSession"],
			on: {
				reconnect: { target: "connecting", actions: "resetAttempts" },
				close: "closing",
			},
		},
		closing: {
			description: "close() was called: closing the session and waiting for the server process to exit.",
			invoke: {
				id: "close-session",
				src: "closeSession",
				input: ({ context }) => ({ session: context.session }),
				onDone: { target: "closed", actions: "forgetSession" },
				onError: { target: "closed", actions: [{ type: "recordError", params: childError }, "forgetSession"] },
			},
		},
		closed: {
			type: "final",
			description: "Closed for good. Calls fail at once.",
		},
	},
});
