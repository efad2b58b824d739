/**
 * The actors still alive, each by its creation record and its latest snapshot, kept beside an
 * inspector's bounded history. Once a long session has pushed those records out of the history,
 * a page that connects late would otherwise not know which actor is the agent (it showed "no
 * agent seen" and an empty chart while the agent ran on): they are handed to it first.
 */
import type { ActorRecord, InspectionRecord, SnapshotRecord } from "./records.js";

interface LiveActor {
	actor: ActorRecord;
	snapshot?: SnapshotRecord | undefined;
}

/** Actors kept at most; the oldest created go first (a system that never stops what it spawns). */
const MAX_LIVE_ACTORS = 1000;

/**
 * Follows actors' lives from their records: an actor is alive from its `@xstate.actor` record
 * until a snapshot says it is over or its parent's snapshot no longer lists it (XState may say
 * nothing more about a child its parent stopped).
 *
 * @example
 * const live = new LiveActors();
 * for (const record of batch) live.note(record);
 * const history = [...live.before(ring[0].seq), ...ring];
 */
export class LiveActors {
	private readonly actors = new Map<string, LiveActor>();

	constructor(private readonly limit = MAX_LIVE_ACTORS) {}

	/** Updates what is known from one record (in `seq` order). */
	note(record: InspectionRecord): void {
		if (record.type === "@xstate.actor") {
			this.actors.delete(record.sessionId);
			this.actors.set(record.sessionId, { actor: record });
			if (this.actors.size > this.limit) this.actors.delete(this.actors.keys().next().value as string);
			return;
		}
		if (record.type !== "@xstate.snapshot") return;
		if (record.snapshot.status !== "active") {
			this.actors.delete(record.sessionId);
			return;
		}
		const live = this.actors.get(record.sessionId);
		if (live) live.snapshot = record;
		const children = record.snapshot.children;
		if (!children) return;
		for (const [sessionId, child] of this.actors) {
			if (child.actor.parentId === record.sessionId && !children.includes(child.actor.actorId)) this.actors.delete(sessionId);
		}
	}

	/**
	 * Forgets an actor and the actors under it, as an inspector does when it detaches: it no
	 * longer hears whether they end, and an agent detached and then disposed would otherwise be
	 * handed to every page as alive, one more for each conversation a gateway inspected.
	 */
	forget(sessionId: string): void {
		const gone = new Set([sessionId]);
		// Until no more are found: an actor announced again (attached again) comes after its children.
		for (let found = 0; found !== gone.size; ) {
			found = gone.size;
			for (const { actor } of this.actors.values()) if (actor.parentId !== undefined && gone.has(actor.parentId)) gone.add(actor.sessionId);
		}
		for (const id of gone) this.actors.delete(id);
	}

	/**
	 * The records of the live actors older than `seq` (their creation, and their latest snapshot
	 * if that is older too), in `seq` order: what a history starting at `seq` lacks.
	 */
	before(seq: number): InspectionRecord[] {
		const records: InspectionRecord[] = [];
		for (const { actor, snapshot } of this.actors.values()) {
			if (actor.seq >= seq) continue;
			records.push(actor);
			if (snapshot && snapshot.seq < seq) records.push(snapshot);
		}
		return records.sort((a, b) => a.seq - b.seq);
	}
}
