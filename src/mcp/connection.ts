import { createActor, type Actor, type SnapshotFrom } from "xstate";
import type { ActorSystemLike, InspectableActorRef, SubscriptionLike } from "../types/actor-shapes.js";
import type { McpCallResult } from "./content.js";
import { mcpConnectionMachine } from "./connection-machine.js";
import { errorMessage, McpSessionClosedError } from "./errors.js";
import { loadMcpSdk } from "./sdk.js";
import type { McpCallOptions } from "./call-options.js";
import { McpSession } from "./session.js";
import { resolveConnectionSettings } from "./settings.js";
import type { McpClientInfo, McpConnectionState, McpServerConfig, McpServerStatus, McpToolInfo } from "./types.js";

/**
 * Where the connection statechart is: a top-level state, or `{ ready: "tools-current" }` /
 * `{ ready: "refreshing-tools" }`.
 *
 * @example
 * const value: McpConnectionStateValue = { ready: "tools-current" };
 */
export type McpConnectionStateValue =
	| Exclude<McpConnectionState, "ready">
	| { readonly ready: "tools-current" | "refreshing-tools" };

/**
 * A snapshot of a connection's actor, the parts meant to be read.
 *
 * @example
 * const snapshot = mcp.actorOf("everything")?.getSnapshot(); // { status: "active", value: { ready: "tools-current" } }
 */
export interface McpConnectionSnapshot {
	/** "active" until the connection is closed ("done"). */
	readonly status: "active" | "done" | "error" | "stopped";
	readonly value: McpConnectionStateValue;
}

/**
 * The actor behind one server's connection, typed by what it offers (see
 * `types/actor-shapes.ts` for why not XState's types). It can be given to an inspector,
 * or subscribed to.
 *
 * @example
 * const actor = mcp.actorOf("everything");
 * actor?.subscribe((snapshot) => console.log(snapshot.value)); // "connecting", { ready: "tools-current" }, ...
 */
export interface McpConnectionActor extends InspectableActorRef {
	readonly system: ActorSystemLike;
	getSnapshot(): McpConnectionSnapshot;
	subscribe(observer: (snapshot: McpConnectionSnapshot) => void): SubscriptionLike;
}

type ConnectionSnapshot = SnapshotFrom<typeof mcpConnectionMachine>;

function stateOf(snapshot: ConnectionSnapshot): McpConnectionState {
	const value = snapshot.value;
	return typeof value === "string" ? value : "ready";
}

/**
 * One server's connection: its statechart actor, the sessions it opened, and the call path.
 * Internal; users reach it through `McpServers`.
 *
 * @example
 * const connection = new McpConnection("everything", { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] });
 * connection.start();
 * await connection.firstOutcome();
 * const result = await connection.callTool("echo", { message: "hi" });
 * await connection.close();
 */
export class McpConnection {
	private readonly actor: Actor<typeof mcpConnectionMachine>;
	/** Every session opened and not yet known closed: `close()` waits for all of them. */
	private readonly sessions = new Set<McpSession>();

	constructor(
		readonly server: string,
		private readonly config: McpServerConfig,
		private readonly clientInfo?: McpClientInfo,
	) {
		this.actor = createActor(mcpConnectionMachine, {
			id: `mcp:${server}`,
			input: { server, settings: resolveConnectionSettings(config), openSession: (signal) => this.openSession(signal) },
		});
	}

	private async openSession(signal: AbortSignal): Promise<McpSession> {
		for (const session of this.sessions) if (session.isClosed) this.sessions.delete(session);
		const sdk = await loadMcpSdk();
		// A close while the SDK loaded must not be followed by a start.
		signal.throwIfAborted();
		const session = new McpSession(this.server, this.config, sdk, this.clientInfo);
		this.sessions.add(session);
		await session.connect(signal);
		return session;
	}

	/** Starts connecting. */
	start(): void {
		this.actor.start();
	}

	/** The actor, as users may see it. */
	get publicActor(): McpConnectionActor {
		return this.actor as unknown as McpConnectionActor;
	}

	/** The tools as the server last listed them. */
	get tools(): readonly McpToolInfo[] {
		return this.actor.getSnapshot().context.tools;
	}

	/**
	 * The connection's status.
	 *
	 * @example
	 * connection.status().state; // "ready"
	 */
	status(): McpServerStatus {
		const snapshot = this.actor.getSnapshot();
		const state = stateOf(snapshot);
		const { context } = snapshot;
		const status: McpServerStatus = {
			server: this.server,
			state,
			refreshingTools: snapshot.matches({ ready: "refreshing-tools" }),
			attempts: context.attempts,
			// The connection knows only the listing; ConnectedMcpServers counts what is offered.
			toolCount: context.tools.length,
			listedToolCount: context.tools.length,
		};
		if (context.lastError !== undefined) status.lastError = context.lastError;
		const pid = state === "ready" ? context.session?.pid : undefined;
		if (pid !== undefined) status.pid = pid;
		return status;
	}

	/** Calls `listener` after every change of the connection's snapshot. */
	subscribe(listener: () => void): SubscriptionLike {
		return this.actor.subscribe({ next: listener, error: listener, complete: listener });
	}

	/** Resolves once the first attempt has succeeded or failed (the chart has left `connecting`). */
	firstOutcome(): Promise<void> {
		return new Promise((resolve) => {
			const check = () => {
				const snapshot = this.actor.getSnapshot();
				if (snapshot.status !== "active" || !snapshot.matches("connecting")) {
					subscription?.unsubscribe();
					resolve();
					return true;
				}
				return false;
			};
			let subscription: SubscriptionLike | undefined;
			if (check()) return;
			subscription = this.subscribe(check);
		});
	}

	/**
	 * Calls one of the server's tools (by its own name). Fails at once when the server is
	 * not `ready`, without sending anything.
	 */
	async callTool(tool: string, args: Readonly<Record<string, unknown>>, options: McpCallOptions = {}): Promise<McpCallResult> {
		const snapshot = this.actor.getSnapshot();
		const session = snapshot.context.session;
		if (snapshot.status !== "active" || !snapshot.matches("ready") || !session || session.isLost) throw this.notConnectedError();
		try {
			return await session.callTool(tool, args, options);
		} catch (error) {
			if (options.signal?.aborted) throw new Error(`MCP tool call cancelled: ${errorMessage(options.signal.reason ?? error)}`, { cause: error });
			if (error instanceof McpSessionClosedError) {
				throw new Error(`MCP server "${this.server}" was closed by the application during the call (close()); the tool may or may not have run`, { cause: error });
			}
			if (session.isConnectionLoss(error)) {
				throw new Error(
					`MCP server "${this.server}" was disconnected during the call (${errorMessage(error)}); the tool may or may not have run`,
					{ cause: error },
				);
			}
			throw new Error(`MCP server "${this.server}": ${errorMessage(error)}`, { cause: error });
		}
	}

	private notConnectedError(): Error {
		const status = this.status();
		const state = status.state === "reconnecting" ? `reconnecting, attempt ${status.attempts + 1} pending` : status.state;
		const why = status.lastError ? `; last error: ${status.lastError}` : "";
		return new Error(`MCP server "${this.server}" is not connected (${state}${why}); the tool was not called`);
	}

	/** Tries to connect now: from `failed`, or cutting a backoff wait short. */
	reconnect(): void {
		this.actor.send({ type: "reconnect" });
	}

	/** Closes the connection and every session it opened; resolves when their processes have exited. */
	async close(): Promise<void> {
		if (this.actor.getSnapshot().status === "active") {
			this.actor.send({ type: "close" });
			await new Promise<void>((resolve) => {
				const check = () => {
					if (this.actor.getSnapshot().status === "active") return;
					subscription?.unsubscribe();
					resolve();
				};
				let subscription: SubscriptionLike | undefined;
				subscription = this.subscribe(check);
				check();
			});
		}
		// Sessions retired while reconnecting may still be closing; none may outlive this.
		await Promise.all([...this.sessions].map((session) => session.close()));
		this.sessions.clear();
	}
}
