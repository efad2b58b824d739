// @ts-nocheck
import { fromCallback, fromPromise } from "xstate";
import type { McpSession } from "./session.js";
import type { McpToolInfo } from "./types.js";

/**
 * The side-effecting children of the connection statechart. Each is cancellable by stopping
 * it, and each declares the events it sends, so the chart's event type is built from them
 * rather than the other way round.
 */

/** Creates a session and runs its handshake; rejects (with the session closed) on failure or abort. */
export type OpenSession = (signal: AbortSignal) => Promise<McpSession>;

/** What `openSessionActor` delivers: a connected session and its tools. */
export interface OpenedSession {
	session: McpSession;
	tools: McpToolInfo[];
}

/**
 * Opens a session and lists its tools. If the actor is stopped before its result is
 * delivered (a `close` or the connect timeout), the session it opened is closed: a result
 * that arrives after a stop is dropped by XState, and with it any other way to reach the
 * session and its process.
 */
export const openSessionActor = fromPromise<OpenedSession, { open: OpenSession }>(async ({ input, signal }) => {
	const session = await input.open(signal);
	signal.addEventListener("abort", () => void session.close(), { once: true });
	try {
		const tools = await session.listTools(signal);
		signal.throwIfAborted();
		return { session, tools };
	} catch (error) {
		await session.close();
		throw error;
	}
});

/** Lists a session's tools again, after `notifications/tools/list_changed`. */
export const listToolsActor = fromPromise<McpToolInfo[], { session: McpSession | undefined }>(({ input, signal }) => {
	if (!input.session) return Promise.reject(new Error("no session to list tools of"));
	return input.session.listTools(signal);
});

/** Closes a session, resolving when it (and its process) is gone. */
export const closeSessionActor = fromPromise<void, { session: McpSession | undefined }>(async ({ input }) => {
	await input.session?.close();
});

/** The events a watched session sends to the chart, tagged with the session's id. */
export type SessionWatchEvent =
	| { type: "session.lost"; sessionId: number; reason: string }
	| { type: "tools.changed"; sessionId: number };

/** Relays a session's loss and its tool list changes to the chart while the session is ready. */
export const watchSessionActor = fromCallback<SessionWatchEvent, { session: McpSession | undefined }>(({ input, sendBack }) => {
	const session = input.session;
	if (!session) throw new Error("no session to watch");
	return session.watch({
		lost: (reason) => sendBack({ type: "session.lost", sessionId: session.id, reason }),
		toolsChanged: () => sendBack({ type: "tools.changed", sessionId: session.id }),
	});
});
