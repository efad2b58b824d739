/**
 * What the attach tests share: an inspector attached to an agent now, recording its records,
 * and the page's model made from records as the visualizer makes it.
 */
import type { Agent } from "../../src/agent.js";
import { type AgentInspector, type AgentInspectorOptions, createAgentInspector } from "../../src/inspect/inspector.js";
import type { InspectionRecord } from "../../src/inspect/records.js";
import { toStatechartGraph } from "../../src/inspect/statechart-graph.js";
import { agentMachine } from "../../src/machines/agent-machine.js";
import { indexChart } from "../../visualizer/model/chart-index.js";
import { applyRecord, createRunModel } from "../../visualizer/model/run-model.js";
import type { AssistantEntry, RunModel } from "../../visualizer/model/types.js";

const chart = indexChart(toStatechartGraph(agentMachine));

/**
 * The page's model after `records`.
 *
 * @example
 * const model = modelOf(records); model.transcript.length;
 */
export function modelOf(records: readonly InspectionRecord[]): RunModel {
	const model = createRunModel(chart.graph.machineId);
	for (const record of records) applyRecord(model, record, chart);
	return model;
}

/**
 * The assistant entries of the page's transcript, oldest first.
 *
 * @example
 * const last = assistantsOf(modelOf(records)).at(-1);
 */
export function assistantsOf(model: RunModel): AssistantEntry[] {
	return model.transcript.filter((entry): entry is AssistantEntry => entry.kind === "assistant");
}

/**
 * An inspector, not attached yet, with every record it delivers.
 *
 * @example
 * const { inspector, records } = recordingInspector(); const detach = inspector.attach(agent.actor);
 */
export function recordingInspector(options?: AgentInspectorOptions): { inspector: AgentInspector; records: InspectionRecord[] } {
	const inspector = createAgentInspector(options);
	const records: InspectionRecord[] = [];
	inspector.subscribe((batch) => records.push(...batch));
	return { inspector, records };
}

/**
 * An inspector attached to `agent` now (and flushed at once unless `flush` is false), with every
 * record it delivers.
 *
 * @example
 * const { inspector, records } = attachRecording(agent); inspector.flush();
 */
export function attachRecording(agent: Agent, options?: AgentInspectorOptions, flush = true): { inspector: AgentInspector; records: InspectionRecord[] } {
	const { inspector, records } = recordingInspector(options);
	inspector.attach(agent.actor);
	if (flush) inspector.flush();
	return { inspector, records };
}
