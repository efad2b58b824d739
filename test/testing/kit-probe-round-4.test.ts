/**
 * The testing kit's fourth probe: walks run side by side in one process, agents that refuse their
 * own settings, factories that cannot restore, and reports that say what they left out.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Agent, type AgentOptions } from "../../src/agent.js";
import { createScriptedModel, toolCall } from "../../src/providers/scripted.js";
import { recordAgent } from "../../src/testing/agent-checks.js";
import { EventInvariants } from "../../src/testing/event-invariants.js";
import type { AgentEvent } from "../../src/types/agent.js";
import { exploreAgent } from "../../src/testing/explore.js";
import { fuzzAgent } from "../../src/testing/fuzz.js";
import type { AgentFactory } from "../../src/testing/walk/cast.js";
import { factory, lookup, ok, quiet } from "./user-agent.js";

const model = createScriptedModel([]).model;
const plain = factory(() => ({ initialState: { model, tools: [lookup()] } }));
/** A tool that leaves a rejected promise behind, nobody catching it. */
const dangling = factory(() => ({
	initialState: {
		model,
		tools: [
			lookup(async () => {
				void Promise.reject(new Error("dangling rejection of agent A"));
				return ok("ships tomorrow");
			}),
		],
	},
}));

describe("two walks in one process", () => {
	const mine = () => undefined;
	afterEach(() => void process.off("unhandledRejection", mine));

	it("refuses a walk started while another runs, and gives back the process's handlers and console.warn once", async () => {
		process.on("unhandledRejection", mine);
		const handlers = process.listeners("unhandledRejection");
		const warn = console.warn;
		const [first, second, third] = await Promise.allSettled([
			exploreAgent(dangling, { restores: false, shrink: false }),
			exploreAgent(plain, { restores: false }),
			fuzzAgent(plain, { runs: 2, seed: 1, ...quiet }),
		]);
		expect(first.status).toBe("fulfilled");
		// A's rejection is in A's report, and in no other.
		if (first.status === "fulfilled") expect(first.value.violations.map((each) => each.message).join("\n")).toMatch(/dangling rejection of agent A/);
		for (const refused of [second, third]) {
			expect(refused.status).toBe("rejected");
			if (refused.status === "rejected") expect(String(refused.reason)).toMatch(/another walk \(exploreAgent or fuzzAgent.*\) is running in this process; await it first/);
		}
		expect(process.listeners("unhandledRejection")).toEqual(handlers);
		expect(console.warn).toBe(warn);
	}, 120_000);

	it("lets a walk run once the one before it ended", async () => {
		await exploreAgent(plain, { restores: false, maxPaths: 1 });
		const report = await fuzzAgent(plain, { runs: 2, seed: 1, ...quiet });
		expect(report.ok, report.format()).toBe(true);
	}, 120_000);
});

describe("an agent that refuses its own settings", () => {
	const refusing: [string, AgentFactory, RegExp][] = [
		["compaction enabled \"yes\"", factory(() => ({ initialState: { model }, compaction: { enabled: "yes" } as never })), /agent\.compaction has enabled "yes"/],
		["compaction reserveTokens NaN", factory(() => ({ initialState: { model }, compaction: { enabled: true, reserveTokens: Number.NaN } })), /reserveTokens NaN/],
		["toolExecution \"bogus\"", factory(() => ({ initialState: { model, tools: [lookup()] }, toolExecution: "bogus" as never })), /toolExecution/],
		["approvalTimeoutMs -1", factory(() => ({ initialState: { model, tools: [lookup()] }, approvalTimeoutMs: -1 })), /approvalTimeoutMs/],
	];
	for (const [setting, make, named] of refusing) {
		it(`makes exploreAgent and fuzzAgent throw that nothing could be tested, with the agent's error: ${setting}`, async () => {
			for (const walk of [() => exploreAgent(make, { restores: false }), () => fuzzAgent(make, { runs: 1, seed: 1, ...quiet })]) {
				const thrown = await walk().then(
					() => undefined,
					(error: unknown) => error,
				);
				expect(String(thrown)).toMatch(/your agent refused the kit's prompt, so nothing of it could be tested: /);
				expect(String(thrown)).toMatch(named);
			}
		}, 60_000);
	}
});

describe("a factory that throws when given a snapshot", () => {
	it("is reported by exploreAgent as a snapshot violation with its path, as fuzzAgent reports it", async () => {
		const unrestorable: AgentFactory = (kit) => {
			if (kit.snapshot) throw new Error("cannot restore: schema v2");
			return new Agent(kit.options({ initialState: { model } }));
		};
		const report = await exploreAgent(unrestorable);
		const found = report.violations.find((each) => each.rule === "snapshot");
		expect(found?.message, report.format()).toMatch(/your factory threw when given kit\.snapshot to restore: .*cannot restore: schema v2/);
		expect(found?.path.at(-1)).toBe("agentchart.testing.restore");
	}, 120_000);
});

describe("a walk cut short by maxPaths", () => {
	it("says how many planned paths it did not run, and still prints its restores line", async () => {
		const whole = await exploreAgent(plain, { maxPaths: 2, shrink: false });
		expect(whole.paths).toBe(2);
		expect(whole.planned).toBeGreaterThan(2);
		const text = whole.format();
		expect(text).toContain(`maxPaths: ran 2 of the ${whole.planned} planned paths; ${whole.planned - 2} were cut, so the coverage below counts only the paths run`);
		expect(text).toMatch(/\n {2}restores: from \d+\/\d+ kinds of state/);
	}, 120_000);

	it("prints no maxPaths line when every planned path ran, and no restores line without restores", async () => {
		const report = await exploreAgent(factory(() => ({ initialState: { model } })), { restores: false });
		expect(report.planned).toBe(report.paths);
		expect(report.format()).not.toMatch(/maxPaths:|restores:/);
	}, 120_000);
});

describe("recordAgent on a run under way", () => {
	/** An agent whose model asks for a refund a person must approve, then says it is done. */
	function refundAgent(): AgentOptions {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "c1" })] }, { content: "refunded" }, { content: "again" }], { delayMs: 1 });
		const approved: ReturnType<typeof lookup> = { ...lookup(), needsApproval: true };
		return { initialState: { model: scripted.model, tools: [approved] }, streamFn: scripted.streamFn };
	}
	async function waitingForApproval(agent: Agent): Promise<void> {
		const asked = new Promise<void>((resolve) => agent.subscribe((event) => void (event.type === "approval_requested" && resolve())));
		void agent.prompt("refund c1").catch(() => undefined);
		await asked;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}

	it("reports nothing while a call waits for approval, and nothing once the run ended", async () => {
		const agent = new Agent(refundAgent());
		const recording = recordAgent(agent);
		await waitingForApproval(agent);
		expect(recording.check()).toEqual([]);
		agent.approve(agent.pendingApprovals[0]?.callKey ?? "");
		await agent.waitForIdle();
		expect(recording.check()).toEqual([]);
		agent.dispose();
	});

	it("reports nothing for a correct run of an agent restored while a call waits, and checks the runs after it", async () => {
		const options = refundAgent();
		const first = new Agent(options);
		await waitingForApproval(first);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
		first.dispose();
		const restored = Agent.restore(snapshot, options);
		const recording = recordAgent(restored);
		restored.approve(restored.pendingApprovals[0]?.toolCallId ?? "");
		await restored.waitForIdle();
		expect(recording.check()).toEqual([]);
		await restored.prompt("once more");
		expect(recording.check()).toEqual([]);
		expect(recording.events.filter((event) => event.type === "agent_start")).toHaveLength(1);
		restored.dispose();
	});

	it("judges what an event of the run joined under way says by itself: a result after the restore that is not plain JSON is reported, as in the next run", async () => {
		const scripted = createScriptedModel([{ content: [toolCall("lookup_order", { id: "c1" })] }, { content: "refunded" }, { content: [toolCall("lookup_order", { id: "c2" })] }, { content: "again" }], { delayMs: 1 });
		// Its first result is plain JSON; later ones hold a Date, which agent.snapshot() cannot write as it is.
		let calls = 0;
		const dated = lookup(async () => ({ content: [{ type: "text" as const, text: "ok" }], details: calls++ === 0 ? { at: 0 } : { at: new Date(0) } }));
		const approved: ReturnType<typeof lookup> = { ...dated, needsApproval: true };
		const options: AgentOptions = { initialState: { model: scripted.model, tools: [approved] }, streamFn: scripted.streamFn };
		const first = new Agent(options);
		await waitingForApproval(first);
		const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
		first.dispose();
		calls = 1;
		const restored = Agent.restore(snapshot, options);
		const recording = recordAgent(restored);
		restored.approve(restored.pendingApprovals[0]?.callKey ?? "");
		await restored.waitForIdle();
		expect(recording.check().map((each) => each.rule)).toEqual(["snapshot"]);
		const later = recordAgent(restored);
		const second = restored.prompt("once more");
		await new Promise((resolve) => setTimeout(resolve, 20));
		restored.approve(restored.pendingApprovals[0]?.callKey ?? "");
		await second;
		expect(later.check().map((each) => each.rule)).toEqual(["snapshot"]);
		restored.dispose();
	});

	it("judges the run joined under way by no pairing rule, and the next run by every rule", () => {
		const invariants = new EventInvariants();
		invariants.joinRunUnderWay();
		invariants.onEvent({ type: "turn_end" } as AgentEvent);
		invariants.onEvent({ type: "agent_end", messages: [] } as AgentEvent);
		expect(invariants.violations).toEqual([]);
		invariants.onEvent({ type: "turn_end" } as AgentEvent);
		expect(invariants.violations.map((each) => each.message)).toEqual(["turn_end: turn_end outside a turn"]);
	});
});
