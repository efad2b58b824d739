/**
 * One process of the crash test (see crash-run.ts): it loads a session from the file store, lets
 * a restored run (or manual compaction) go on, sends what the session still lacks (compacting it
 * before each task after the first, when told to), and exits 0 with `done` once the session is
 * complete. The parent kills it with SIGKILL at random points; it may also tear one
 * of its own writes and kill itself in the middle of it (`tearWrite`).
 *
 * It runs on plain Node against the built package (`import "agentchart"` resolves to dist/), so
 * it is what a user's process is. It reports what it is doing on stdout, one line each, for the
 * parent to tell where a kill landed, and writes what its tools and its person did to a side
 * file that survives it.
 */
import { appendFileSync, writeSync } from "node:fs";
import fsPromises, { appendFile, mkdir, writeFile } from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { Type } from "typebox";
import { Agent, type AgentStore, type AgentTool, type AgentToolResult, type ScriptedReply, type SummarizeRequest, createFileStore, createScriptedModel, toolCall } from "agentchart";
import { seededRandom as generator } from "../../../src/util/seeded-random.js";
import { type CrashSummary, expandSummaries } from "./summaries.js";

/** What the parent passes, as JSON in argv[2]. */
export interface WorkerArgs {
	root: string;
	sessionId: string;
	/** The side file: one line per tool execution and approval decision, appended synchronously. */
	sideFile: string;
	seed: number;
	toolExecution: "parallel" | "sequential" | "streaming";
	fsync: "always" | "snapshots" | "never";
	/** How many prompts the session sends ("task 0", "task 1", …); each gets one follow-up. */
	prompts: number;
	/** Tear the n-th write to the store (1-based), then die in the middle of it. */
	tearWrite?: number | undefined;
	/** A slow disk: each file the store opens takes up to this many ms to open (a write is that much longer on its way). */
	slowDiskMs?: number | undefined;
	/** Compact the session (`agent.compact()`) before each task after the first. */
	compact?: boolean | undefined;
	/**
	 * The person is away: questions are answered only after {@link AWAY_MS}. Given to a process
	 * the next one will take the session from while it lives: its runs waiting for a person write
	 * nothing, so only the store's watch (`watchTakeover`) can tell it that it lost the session.
	 */
	personAway?: boolean | undefined;
	/**
	 * Queue each task's follow-up at the turn that ends its run (no tool calls), not at its first
	 * turn. A follow-up saves a snapshot; queued early it put one after the tool results, so a
	 * restart never found the results only in the journal after a snapshot from before them (the
	 * case of two restarts in a row while the next model call streams, which once left a session no
	 * load accepted).
	 */
	lateFollowUp?: boolean | undefined;
}

/** How long an away person takes to answer: longer than the crash run lets a process taken over alive go on (its STOPS_WITHIN_MS). */
const AWAY_MS = 45_000;

const args = JSON.parse(process.argv[2] ?? "{}") as WorkerArgs;

const random = generator(args.seed);
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const slowDiskMs = args.slowDiskMs;
if (slowDiskMs !== undefined) {
	// The store's own `open` (a live binding of node:fs/promises) is this one once the builtins' exports are synced.
	const realOpen = fsPromises.open;
	fsPromises.open = (async (...opened: Parameters<typeof realOpen>) => {
		await sleep(between(0, slowDiskMs));
		return realOpen(...opened);
	}) as typeof realOpen;
	syncBuiltinESMExports();
}

/** Reports to the parent, synchronously, so that a line written is a line the parent gets. */
function report(line: string): void {
	writeSync(1, `${line}\n`);
}
/** Records what happened outside the agent (the parent's ground truth). */
function record(line: string): void {
	appendFileSync(args.sideFile, `${line}\n`);
}

const taskArgs = Type.Object({ task: Type.String() });
type TaskArgs = { task: string };

/** A tool that records each execution, reports progress halfway, and takes a random while. */
function sideEffectTool(name: string, extra: Partial<AgentTool<typeof taskArgs, unknown>> = {}): AgentTool<typeof taskArgs, unknown> {
	return {
		name,
		label: name,
		description: `${name} for a task`,
		parameters: taskArgs,
		async execute(toolCallId, params: TaskArgs, _signal, onUpdate): Promise<AgentToolResult<unknown>> {
			record(`exec ${name} ${toolCallId}`);
			report(`tool-start ${toolCallId}`);
			await sleep(between(2, 40));
			onUpdate?.({ content: [{ type: "text", text: `${name} halfway` }], details: {} });
			await sleep(between(2, 40));
			report(`tool-end ${toolCallId}`);
			return { content: [{ type: "text", text: `${name} done for ${params.task}` }], details: {} };
		},
		...extra,
	};
}

const tools = [sideEffectTool("charge"), sideEffectTool("lookup", { replay: "safe" }), sideEffectTool("deploy", { needsApproval: true })];

/** A new id for each call the model makes, as a real model's: a request made again gets new ones. */
const callId = (name: string) => `${name}-${Math.floor(random() * 2 ** 32).toString(36)}`;

/** The model: what it answers depends only on the conversation, never on how often it was asked. */
const model = createScriptedModel(
	Array.from({ length: 1000 }, () => (context: { messages: readonly { role: string; content: unknown }[] }): ScriptedReply => {
		const messages = context.messages;
		let lastUser = -1;
		for (let index = messages.length - 1; index >= 0; index--) {
			if (messages[index]?.role === "user") {
				lastUser = index;
				break;
			}
		}
		const asked = textOf(messages[lastUser]?.content);
		const answered = messages.slice(lastUser + 1).filter((message) => message.role === "assistant").length;
		if (asked.startsWith("task ")) {
			if (answered === 0) {
				return {
					content: [
						{ type: "text", text: `Working on ${asked}: charging, looking it up and deploying it now.` },
						toolCall("charge", { task: asked }, callId("charge")),
						toolCall("lookup", { task: asked }, callId("lookup")),
						toolCall("deploy", { task: asked }, callId("deploy")),
					],
				};
			}
			return { content: `The work on ${asked} is finished.` };
		}
		if (answered === 0) return { content: [{ type: "text", text: `Noted: ${asked}.` }, toolCall("charge", { task: asked }, callId("charge"))] };
		return { content: `Done with ${asked}.` };
	}),
	{ chunkSize: 6, delayMs: 3 },
);

/**
 * The summariser: takes a while, and writes down everything it summarises (as JSON), so that the
 * checker can put the summarised messages back and check the whole session (see crash-run.ts,
 * expandSummaries). The instructions say which task the compaction came before.
 */
const compaction = {
	enabled: true,
	keepRecentTokens: 1,
	async summarize(request: SummarizeRequest): Promise<string> {
		// As long as a model's summary takes (compared with the rest of this test's steps): kills land in it.
		await sleep(between(30, 250));
		const summary: CrashSummary = { instructions: request.instructions, previous: request.previousSummary, messages: request.messages, turnPrefix: request.turnPrefix };
		return JSON.stringify(summary);
	},
};

/** Whether the transcript starts with a summary made before `task` (a compaction a crash interrupted is made again by the load). */
function compactedBefore(task: number): boolean {
	const first = agent.state.messages[0] as { role?: string; summary?: string } | undefined;
	return first?.role === "compactionSummary" && (first.summary ?? "").includes(`before task ${task}`);
}

function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (Array.isArray(content)) return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("");
	return "";
}

/** The file store, reporting its writes; one of them torn when `tearWrite` says so. */
function reportingStore(): AgentStore {
	const inner = createFileStore(args.root, { fsync: args.fsync });
	// Where the store writes the session (its own files directory once it opened it), asked at the tear.
	const filesOf = () => inner.filesOf(args.sessionId);
	let writes = 0;
	// No queue of its own: the agent hands a write over only once the one before it is done, so a
	// torn write lands after every earlier one, as in a real crash mid-write (the crash test checks
	// that guarantee of the engine's instead of providing it).
	const tear = async (file: string, text: string, append: boolean) => {
		report("write-start torn");
		// The first part of what would have been written, then death: as a crash in the middle of the write leaves it.
		const part = text.slice(0, between(1, Math.max(1, text.length - 1)));
		// Made by the store when it opened the session; made here too in case its open failed.
		const dir = filesOf();
		await mkdir(dir, { recursive: true });
		if (append) await appendFile(join(dir, file), part);
		else await writeFile(join(dir, file), part);
		process.kill(process.pid, "SIGKILL");
		await sleep(10_000);
	};
	return {
		// Passed on: without them the session has no writer here, and a process that loads it beside this one does not fence this one.
		open: (sessionId) => inner.open?.(sessionId),
		// And without it a run waiting for a person here would wait on after another process took the session.
		watchTakeover: (sessionId, onTakenOver) => inner.watchTakeover?.(sessionId, onTakenOver) ?? (() => {}),
		sessionKey: (sessionId) => inner.sessionKey?.(sessionId) ?? sessionId,
		load: (sessionId, options) => inner.load(sessionId, options),
		saveSnapshot(sessionId, snapshot) {
			if (++writes === args.tearWrite) return tear("snapshot.json.tmp", JSON.stringify({ crc: "00000000", snapshot: JSON.stringify(snapshot) }), false);
			report("write-start snapshot");
			return Promise.resolve(inner.saveSnapshot(sessionId, snapshot)).then(() => report("write-end snapshot"));
		},
		appendJournal(sessionId, entry) {
			if (++writes === args.tearWrite) return tear("journal.jsonl", `00000000\t${JSON.stringify(entry)}\n`, true);
			report(`write-start journal ${entry.kind} ${entry.phase}`);
			return Promise.resolve(inner.appendJournal(sessionId, entry)).then(() => report(`write-end journal ${entry.kind} ${entry.phase}`));
		},
	};
}

let agent: Agent;
const queued = new Set<string>();

/**
 * The person: answers after a while, at random (so that a decision made again after a crash
 * could differ: a stored decision must be the one that counts). The side file gets the choice
 * before it is sent, and the decision once `approve`/`reject` says it is stored.
 */
function decideLater(toolCallId: string): void {
	const after = between(0, 120);
	setTimeout(() => {
		if (!agent.pendingApprovals.some((pending) => pending.toolCallId === toolCallId)) return;
		const decision = random() < 0.7 ? "approve" : "reject";
		report(`approval-end ${toolCallId}`);
		record(`choose ${toolCallId} ${decision}`);
		const stored = decision === "approve" ? agent.approve(toolCallId) : agent.reject(toolCallId, "the person said no");
		// Refused once a process that started beside this one opened the session: not stored, so not decided.
		void stored.then(
			() => record(`decide ${toolCallId} ${decision}`),
			() => report(`approval-refused ${toolCallId}`),
		);
	}, args.personAway ? AWAY_MS : after);
}

// Summarised ones included: a task a compaction summarised away was sent.
const userTexts = () =>
	expandSummaries(agent.state.messages)
		.filter((message) => message.role === "user")
		.map((message) => textOf(message.content));

agent = await Agent.load({
	store: reportingStore(),
	sessionId: args.sessionId,
	initialState: { model: model.model, tools },
	streamFn: model.streamFn,
	toolExecution: args.toolExecution,
	...(args.compact ? { compaction } : {}),
	listeners: [
		(event) => {
			switch (event.type) {
				case "message_start":
					if (event.message.role === "assistant") report("stream-start");
					break;
				case "message_end":
					if (event.message.role === "assistant") report("stream-end");
					break;
				case "auto_compaction_start":
					report("compaction-start");
					break;
				case "auto_compaction_end":
					report("compaction-end");
					break;
				case "approval_requested":
					record(`requested ${event.toolCallId}`);
					report(`approval-start ${event.toolCallId}`);
					decideLater(event.toolCallId);
					break;
				case "turn_end": {
					if (args.lateFollowUp && event.message.role === "assistant" && event.message.content.some((block) => block.type === "toolCall")) break;
					// Each task gets a follow-up, queued while its run goes on.
					const task = userTexts().filter((text) => text.startsWith("task ")).at(-1);
					const followUp = task?.replace("task", "follow-up");
					if (followUp && !userTexts().includes(followUp) && !queued.has(followUp)) {
						queued.add(followUp);
						agent.followUp({ role: "user", content: followUp, timestamp: Date.now() });
					}
					break;
				}
			}
		},
	],
});
for (const message of agent.snapshot().machine.context.followUpQueue) queued.add(textOf(message.content));
// Restored waiting: asked before the crash, so not announced again; the crash run counts it as asked (its Watch).
for (const pending of agent.pendingApprovals) {
	report(`approval-start ${pending.toolCallId}`);
	decideLater(pending.toolCallId);
}
report(`ready ${agent.storeProblems.length > 0 ? `problems=${JSON.stringify(agent.storeProblems)}` : ""}`);

await agent.waitForIdle();
for (let task = 0; task < args.prompts; task++) {
	const text = `task ${task}`;
	const followUp = `follow-up ${task}`;
	if (!userTexts().includes(text)) {
		if (args.compact && task > 0 && !compactedBefore(task)) await agent.compact(`before task ${task}`);
		await agent.prompt(text);
	}
	else if (!userTexts().includes(followUp)) {
		// The follow-up was queued but not kept (the crash came first), or it waits in the queue.
		if (!queued.has(followUp)) {
			queued.add(followUp);
			agent.followUp({ role: "user", content: followUp, timestamp: Date.now() });
		}
		await agent.continue();
	}
	await agent.waitForIdle();
}
await agent.save();
report("done");
process.exit(0);
