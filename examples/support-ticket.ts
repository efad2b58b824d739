/**
 * Embedding the agent machine as a child actor: a support-ticket workflow.
 *
 * The pattern, in four parts:
 * 1. **Invoke** `agentMachine` with a `systemId`, inside the state that lasts as long as the
 *    agent is needed (`open`); leaving that state stops the agent and all its children.
 * 2. **Listen** with a tiny adapter actor (`fromCallback`) invoked next to it: it looks the
 *    agent up by `systemId` and relays the emitted AgentEvents the parent cares about
 *    (`agent_end`, tool calls) as ordinary events with `sendBack`. XState v5 parents do not
 *    receive a child's `emit`ted events, so this is the bridge.
 * 3. **Command** with `sendTo("agent", ...)`: `prompt`, `steer`, `followUp`, `abort`.
 * 4. **Complete** on the relayed `agent_end`: the agent goes back to `idle` after a run (it
 *    only reaches its final state on `dispose`), so "the run finished" is an event, not
 *    `onDone`.
 *
 * The agent of such a ticket, as a plain `Agent`, is tested with `agentchart/testing` in
 * `examples/support-agent.ts` and `examples/support-agent.test.ts`.
 *
 * Run it: `npx tsx examples/support-ticket.ts`.
 */
import { type ActorRefFrom, assign, createActor, fromCallback, sendTo, setup } from "xstate";
import type { AgentMachineInput, AgentMessage, AssistantMessage, UserMessage } from "agentchart";
import { agentMachine } from "agentchart/machine";

/** The agent child, as the adapter sees it. */
export type AgentChild = ActorRefFrom<typeof agentMachine>;

/** Events the adapter relays from the agent to the parent. */
export type AgentRelayEvent =
	| { type: "agent.completed"; messages: AgentMessage[] }
	| { type: "agent.toolStarted"; toolName: string };

/** The id under which the agent child registers in the actor system. */
export const TICKET_AGENT_ID = "ticket-agent";

/**
 * Relays an agent child's emitted events to the actor that invokes this. Looks the agent up
 * by `systemId` when it starts: invoked actors start after the state is entered, by which
 * time the agent invoked beside it is registered.
 *
 * @example
 * invoke: [
 *   { id: "agent", systemId: "ticket-agent", src: "agent", input: ... },
 *   { id: "agentEvents", src: "agentEvents", input: { systemId: "ticket-agent" } },
 * ]
 */
export const agentEvents = fromCallback<AgentRelayEvent, { systemId: string }>(({ input, system, sendBack }) => {
	const agent = system.get(input.systemId) as AgentChild | undefined;
	if (!agent) throw new Error(`agentEvents: no actor with systemId "${input.systemId}"`);
	const subscriptions = [
		agent.on("agent_end", (event) => sendBack({ type: "agent.completed", messages: event.messages })),
		agent.on("tool_execution_start", (event) => sendBack({ type: "agent.toolStarted", toolName: event.toolName })),
	];
	return () => {
		for (const subscription of subscriptions) subscription.unsubscribe();
	};
});

function userMessage(text: string): UserMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

function lastAssistantText(messages: readonly AgentMessage[]): { text: string; stopReason?: string } {
	const last = [...messages].reverse().find((message): message is AssistantMessage => message.role === "assistant");
	if (!last) return { text: "" };
	const text = last.content.map((block) => (block.type === "text" ? block.text : "")).join("");
	return { text, stopReason: last.stopReason };
}

/** Input of the ticket workflow. */
export interface SupportTicketInput {
	/** What the agent runs with (model, tools, `config.streamFn`, system prompt). */
	agent: AgentMachineInput;
	/** Abort the agent when it has not answered within this many milliseconds. */
	timeoutMs: number;
}

/** Context of the ticket workflow. */
export interface SupportTicketContext {
	agentInput: AgentMachineInput;
	timeoutMs: number;
	question?: string;
	answer?: string;
	/** Tools the agent called, in order. */
	toolsUsed: string[];
	/** Customer replies forwarded to the agent as steering. */
	steered: number;
	/** Set when the timeout fired. */
	timedOut: boolean;
}

/** Events of the ticket workflow. */
export type SupportTicketEvent =
	| { type: "ticket.opened"; question: string }
	| { type: "customer.replied"; text: string }
	| AgentRelayEvent;

/** Output when the ticket closes. */
export interface SupportTicketOutput {
	outcome: "resolved" | "timed-out";
	answer: string;
	toolsUsed: string[];
	steered: number;
}

/**
 * A support ticket handled by an embedded agent: `ticket.opened` prompts it, a
 * `customer.replied` while it works steers it, its `agent_end` resolves the ticket, and a
 * timeout aborts it (the ticket then closes as `timed-out` with whatever the agent had).
 *
 * @example
 * const scripted = createScriptedModel([{ content: "Try turning it off and on again." }]);
 * const ticket = createActor(supportTicketMachine, {
 *   input: { agent: { model: scripted.model, config: { streamFn: scripted.streamFn } }, timeoutMs: 5000 },
 * }).start();
 * ticket.send({ type: "ticket.opened", question: "My router blinks red." });
 * // later: ticket.getSnapshot().output → { outcome: "resolved", answer: "Try turning it off and on again.", ... }
 */
export const supportTicketMachine = setup({
	types: {
		context: {} as SupportTicketContext,
		events: {} as SupportTicketEvent,
		input: {} as SupportTicketInput,
		output: {} as SupportTicketOutput,
	},
	actors: { agent: agentMachine, agentEvents },
	delays: {
		ticketTimeout: ({ context }) => context.timeoutMs,
	},
	actions: {
		recordQuestion: assign({
			question: ({ event }) => (event.type === "ticket.opened" ? event.question : undefined),
		}),
		promptAgent: sendTo("agent", ({ context }) => ({
			type: "prompt" as const,
			messages: [userMessage(context.question ?? "")],
		})),
		steerAgent: sendTo("agent", ({ event }) => ({
			type: "steer" as const,
			message: userMessage(event.type === "customer.replied" ? event.text : ""),
		})),
		countSteer: assign({ steered: ({ context }) => context.steered + 1 }),
		abortAgent: sendTo("agent", { type: "abort" as const }),
		markTimedOut: assign({ timedOut: true }),
		recordTool: assign({
			toolsUsed: ({ context, event }) => (event.type === "agent.toolStarted" ? [...context.toolsUsed, event.toolName] : context.toolsUsed),
		}),
		recordAnswer: assign({
			answer: ({ event }) => (event.type === "agent.completed" ? lastAssistantText(event.messages).text : undefined),
		}),
	},
}).createMachine({
	id: "supportTicket",
	context: ({ input }) => ({ agentInput: input.agent, timeoutMs: input.timeoutMs, toolsUsed: [], steered: 0, timedOut: false }),
	initial: "waiting",
	states: {
		waiting: {
			description: "No ticket yet.",
			on: { "ticket.opened": { target: "open", actions: "recordQuestion" } },
		},
		open: {
			description: "The agent lives here; leaving this state stops it.",
			invoke: [
				{ id: "agent", systemId: TICKET_AGENT_ID, src: "agent", input: ({ context }) => context.agentInput },
				{ id: "agentEvents", src: "agentEvents", input: { systemId: TICKET_AGENT_ID } },
			],
			on: { "agent.toolStarted": { actions: "recordTool" } },
			initial: "answering",
			states: {
				answering: {
					entry: "promptAgent",
					on: {
						"customer.replied": { actions: ["steerAgent", "countSteer"] },
						"agent.completed": { target: "#supportTicket.resolved", actions: "recordAnswer" },
					},
					after: { ticketTimeout: "aborting" },
				},
				aborting: {
					description: "Abort sent; the agent closes its run and reports agent_end.",
					entry: ["markTimedOut", "abortAgent"],
					on: { "agent.completed": { target: "#supportTicket.timedOut", actions: "recordAnswer" } },
				},
			},
		},
		resolved: { type: "final" },
		timedOut: { type: "final" },
	},
	output: ({ context }) => ({
		outcome: context.timedOut ? "timed-out" : "resolved",
		answer: context.answer ?? "",
		toolsUsed: context.toolsUsed,
		steered: context.steered,
	}),
});

async function demo(): Promise<void> {
	const { createScriptedModel, toolCall } = await import("agentchart");
	const scripted = createScriptedModel(
		[{ content: [toolCall("lookup_order", { id: "A-17" })] }, { content: "Your order A-17 ships tomorrow." }],
		{ chunkSize: 8, delayMs: 5 },
	);
	const { Type } = await import("typebox");
	const lookup = {
		name: "lookup_order",
		label: "Order lookup",
		description: "Finds an order by id.",
		parameters: Type.Object({ id: Type.String() }),
		execute: async () => ({ content: [{ type: "text" as const, text: "A-17: packed, ships tomorrow" }], details: {} }),
	};
	const ticket = createActor(supportTicketMachine, {
		input: { agent: { model: scripted.model, tools: [lookup], config: { streamFn: scripted.streamFn } }, timeoutMs: 5000 },
	});
	ticket.subscribe((snapshot) => console.log("ticket:", JSON.stringify(snapshot.value)));
	ticket.start();
	ticket.send({ type: "ticket.opened", question: "Where is my order A-17?" });
	await new Promise<void>((resolve) => ticket.subscribe({ complete: () => resolve() }));
	console.log("output:", ticket.getSnapshot().output);
}

if (import.meta.url === `file://${process.argv[1]}`) void demo();
