/**
 * A tool only ever runs with arguments its own schema accepts, also when a run is restored with
 * tools that changed since it was stored (a deploy while a call waited for approval, or while it
 * ran). For random runs (replies calling `work` and `send`, `send` needing approval; every tool
 * execution mode), every snapshot taken as an event reached a listener is restored, through JSON,
 * with each tool's schema replaced at random: the same, one that accepts the arguments once
 * coerced, or one that rejects them. Calls waiting with arguments that no longer fit are approved
 * with arguments that do, or rejected, as a person would. Every call the restored run makes
 * passes its tool's schema, and the run ends with a transcript valid for a provider. The calls
 * waiting, as read from the stored snapshot with the new tools and from the restored agent's
 * snapshot (`pendingApprovalsOf`, what Restate's `state` answers), are the agent's `pendingApprovals`.
 * Both interpreters. `PROPERTY_RUNS` sets the runs, `PROPERTY_SEED` replays a seed.
 */
import fc from "fast-check";
import { type TSchema, Type } from "typebox";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent.js";
import type { AgentSnapshot } from "../../src/durable/snapshot.js";
import { pendingApprovalsOf } from "../../src/restate/session-view.js";
import { withInterpreter } from "../../src/machines/agent-logic.js";
import { createScriptedModel, type ScriptedBlock } from "../../src/providers/scripted.js";
import { validatorFor } from "../../src/tools/validate-arguments.js";
import type { AgentEvent, AgentTool, AnyAgentTool, PendingApproval, ToolExecutionMode } from "../../src/types/agent.js";
import type { StreamFn } from "../../src/types/stream.js";
import { expectValidTranscript, ok } from "../agent/helpers.js";

const NUM_RUNS = Number(process.env["PROPERTY_RUNS"] ?? 20);
const SEED = Number(process.env["PROPERTY_SEED"] ?? Date.now() % 2 ** 31);

/** How a tool's schema changed between the store and the restore, and arguments that fit it. */
const CHANGES = {
	same: { schema: () => Type.Object({ n: Type.Number() }), fitting: { n: 0 } },
	// Accepts the stored numbers once coerced to text.
	text: { schema: () => Type.Object({ n: Type.String() }), fitting: { n: "0" } },
	stricter: { schema: () => Type.Object({ n: Type.Number(), m: Type.Number() }), fitting: { n: 0, m: 1 } },
	// Rejects every call but the first of a reply (its argument is 0).
	bounded: { schema: () => Type.Object({ n: Type.Number({ maximum: 0 }) }), fitting: { n: 0 } },
} as const;
type Change = keyof typeof CHANGES;

interface Scenario {
	mode: ToolExecutionMode;
	replies: ("work" | "send")[][];
	workReplays: boolean;
	changes: { work: Change; send: Change };
}

const changeArb = fc.constantFrom<Change>("same", "text", "stricter", "bounded");
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
	mode: fc.constantFrom<ToolExecutionMode>("parallel", "sequential", "streaming"),
	replies: fc.array(fc.array(fc.constantFrom<"work" | "send">("work", "send"), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
	workReplays: fc.boolean(),
	changes: fc.record({ work: changeArb, send: changeArb }),
});

/** The model: its reply depends only on how many assistant messages the transcript has. */
function scriptedStreamFn(replies: Scenario["replies"]): StreamFn {
	return (model, context, options) => {
		const answered = context.messages.filter((message) => message.role === "assistant").length;
		const plan = replies[answered];
		const content: ScriptedBlock[] = plan ? plan.map((name, index) => ({ type: "toolCall", name, arguments: { n: index }, id: `t${answered}_${index}` })) : [{ type: "text", text: `answer ${answered}` }];
		return createScriptedModel([{ content }], { chunkSize: 3 }).streamFn(model, context, options);
	};
}

/** A call a tool got, and whether its schema accepted the arguments. */
interface Ran {
	tool: string;
	args: unknown;
	fits: boolean;
}

/** The two tools over these schemas; every execution is logged with whether its arguments fit. */
function toolsWith(scenario: Scenario, schemas: { work: TSchema; send: TSchema }, ran: Ran[]): AnyAgentTool[] {
	const tool = (name: "work" | "send", extra: Partial<AgentTool<TSchema>>): AnyAgentTool => ({
		name,
		label: name,
		description: `The ${name} tool`,
		parameters: schemas[name],
		async execute(id, args) {
			ran.push({ tool: name, args, fits: validatorFor(schemas[name]).Check(args) });
			await new Promise((resolve) => setTimeout(resolve, 1));
			return ok(`${name} ${id}`);
		},
		...extra,
	});
	return [tool("work", scenario.workReplays ? { replay: "safe" } : {}), tool("send", { needsApproval: true })];
}

/** A person's rule: a call whose id ends in 0 is approved (with arguments that fit, when its own no longer do), the others rejected. */
function decide(agent: Agent, scenario: Scenario): void {
	for (const call of agent.pendingApprovals) {
		if (!call.toolCallId.endsWith("_0")) void agent.reject(call.toolCallId, "rule");
		else if (call.argsProblem === undefined) void agent.approve(call.toolCallId);
		else void agent.approve(call.toolCallId, { arguments: CHANGES[scenario.changes[call.toolName as "work" | "send"]].fitting });
	}
}

function approver(agent: () => Agent | undefined, scenario: Scenario): (event: AgentEvent) => void {
	return (event) => {
		if (event.type !== "approval_requested") return;
		const target = agent();
		if (target) queueMicrotask(() => target.pendingApprovals.length > 0 && decide(target, scenario));
	};
}

/** The run without a restore, with a snapshot as each event reached a listener. */
async function snapshotsOf(scenario: Scenario, interpreter: "agentchart" | "xstate"): Promise<AgentSnapshot[]> {
	const snapshots: AgentSnapshot[] = [];
	const base = { work: CHANGES.same.schema(), send: CHANGES.same.schema() };
	let agent: Agent | undefined;
	agent = withInterpreter(interpreter, () =>
		new Agent({ initialState: { model: createScriptedModel([]).model, tools: toolsWith(scenario, base, []) }, streamFn: scriptedStreamFn(scenario.replies), toolExecution: scenario.mode, listeners: [approver(() => agent, scenario)] }),
	);
	agent.subscribe(() => void snapshots.push(JSON.parse(JSON.stringify((agent as Agent).snapshot())) as AgentSnapshot));
	await agent.prompt("go");
	return snapshots;
}

/** Restores the snapshot with the changed tools and lets it finish (a run that never ends fails). */
async function finishedWithChangedTools(snapshot: AgentSnapshot, scenario: Scenario, interpreter: "agentchart" | "xstate", ran: Ran[]): Promise<Agent> {
	const schemas = { work: CHANGES[scenario.changes.work].schema(), send: CHANGES[scenario.changes.send].schema() };
	const tools = toolsWith(scenario, schemas, ran);
	let agent: Agent | undefined;
	agent = withInterpreter(interpreter, () =>
		Agent.restore(JSON.parse(JSON.stringify(snapshot)) as AgentSnapshot, {
			initialState: { tools },
			streamFn: scriptedStreamFn(scenario.replies),
			toolExecution: scenario.mode,
			listeners: [approver(() => agent, scenario)],
		}),
	);
	// A stored session's view (Restate's `state`) says what the restored agent says: read from the
	// stored snapshot with the new tools, and from the restored agent's snapshot. (Each may list a
	// call the other does not: the restore applies a decision in the snapshot's journal, and asks
	// about a call that the snapshot caught before its question.)
	const waiting = JSON.parse(JSON.stringify(agent.pendingApprovals)) as PendingApproval[];
	for (const viewed of pendingApprovalsOf(snapshot, tools)) {
		const listed = waiting.find((call) => call.toolCallId === viewed.toolCallId);
		if (listed) expect(JSON.parse(JSON.stringify(viewed))).toEqual(listed);
	}
	expect(pendingApprovalsOf(JSON.parse(JSON.stringify(agent.snapshot())) as AgentSnapshot)).toEqual(waiting);
	decide(agent, scenario);
	let timer: NodeJS.Timeout | undefined;
	const hung = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), 5_000)));
	const ended = await Promise.race([agent.waitForIdle().then(() => "ended" as const), hung]);
	clearTimeout(timer);
	expect(ended, `the restored run did not end; waiting: ${JSON.stringify(agent.pendingApprovals)}`).toBe("ended");
	return agent;
}

describe.each(["agentchart", "xstate"] as const)("restored with changed tools (%s interpreter)", (interpreter) => {
	it("runs every tool call with arguments its tool's schema accepts, and ends with a valid transcript", async () => {
		console.log(`property seed (changed tools, ${interpreter}): ${SEED}  (PROPERTY_SEED=${SEED} to replay)`);
		await fc.assert(
			fc.asyncProperty(scenarioArb, async (scenario) => {
				for (const snapshot of await snapshotsOf(scenario, interpreter)) {
					const ran: Ran[] = [];
					const agent = await finishedWithChangedTools(snapshot, scenario, interpreter, ran);
					expect(ran.filter((call) => !call.fits)).toEqual([]);
					expectValidTranscript(agent.state.messages);
					agent.dispose();
				}
			}),
			{ numRuns: NUM_RUNS, seed: SEED },
		);
	}, Math.max(120_000, NUM_RUNS * 1_000));
});
