/**
 * Inspection: watch the agent statechart run. An O(1)-per-event inspector that speaks the
 * `@statelyai/inspect` wire format, NDJSON record/replay, the statechart as data, a Mermaid
 * diagram of it, its layout, and the local visualizer server.
 */
export { type AgentInspector, type AgentInspectorOptions, type InspectionListener, type InspectorStats, createAgentInspector } from "./inspector.js";
export {
	type ActorRecord,
	type ActorStatus,
	type DeltaSegment,
	type DeltaSummaryRecord,
	type DroppedRecord,
	type EmittedRecord,
	type EventRecord,
	type InspectionRecord,
	type MicrostepRecord,
	type SnapshotRecord,
	type SnapshotSummary,
	type TakenTransition,
	type RecordBase,
	type ToRecordOptions,
	type TurnPosition,
	STATELY_PROTOCOL_VERSION,
	summarizeSnapshot,
	toRecord,
} from "./records.js";
export {
	type AgentContextSummary,
	type PreviewJson,
	type PreviewLimits,
	type ToolCallSummary,
	EVENT_PREVIEW_LIMITS,
	previewValue,
	summarizeContext,
	summarizeEvent,
} from "./summarize.js";
export {
	type Recording,
	type StatelyInspectorLike,
	type StatelyWireCommon,
	type StatelyWireEvent,
	forwardToStately,
	parseRecording,
	readRecording,
	recordToNdjson,
	toStatelyEvent,
} from "./sinks.js";
export {
	type GuardReference,
	type StatechartEdge,
	type StatechartEdgeKind,
	type StatechartGraph,
	type StatechartNode,
	type StatechartNodeType,
	activeStateIds,
	describeGuard,
	toStatechartGraph,
} from "./statechart-graph.js";
export { DIAGRAM_END, DIAGRAM_START, extractDiagramBlock, replaceDiagramBlock, toMermaid } from "./mermaid.js";
export {
	type InitialMarker,
	type LaidOutState,
	type LaidOutTransition,
	type LayoutPoint,
	type StatechartLayout,
	type StatechartLayoutOptions,
	type TransitionLabelLine,
	LAYOUT_FONT,
	layoutStatechart,
} from "./layout.js";
export { RingBuffer } from "./ring-buffer.js";
export {
	type AttachVisualizerOptions,
	type AttachedVisualizer,
	type VisualizerServer,
	type VisualizerServerOptions,
	MAX_PAGE_BACKLOG_BYTES,
	VISUALIZER_HOST,
	attachVisualizer,
	startVisualizerServer,
} from "./visualizer-server.js";
