// Report Outcome, one item: the guarded call's outcome recorded with the same engine decision as
// Call Chain, the ticket's leases released. Order: the engine validates the ticket against this
// chain and scope on fresh rows (pure), then the ticket is claimed in the store (delete-if-present:
// a second report of it claims nothing and counts nothing), then the rows are written through
// the one compare-and-set loop (on a lost race: read and report again; the claim stands).
import type { AttemptLog, Counters, Engine, Outcome, Ticket, Transition } from '../engine';
import { ROW_SEPARATOR } from '../engineConstants';
import type { FailoverStore } from '../store/failover';
import { compareAndSet, newTally, type RaceTally } from '../store/compareAndSet';
import type { TicketStore } from '../store/tickets';

export interface Reported {
	attempt: AttemptLog;
	transition: Transition | null;
	/** The engine's count of the reported call (its provider's share). */
	counters: Counters;
	/** What the report's write adds to the counters once committed (its transition). */
	committed: RaceTally['committed'];
	casRetries: number;
	/** The engine's warning when it dropped the write after losing every race. */
	dropped?: string;
	/** The engine read the outcome as a success: the item goes on to `success`. */
	served: boolean;
}

/** A ticket refused: by the engine (another chain or scope, expired, malformed) or by the store
 * (already reported, expired there, or never issued). Nothing was counted. */
export class TicketRefused extends Error {}

export async function reportItem(
	engine: Engine,
	store: FailoverStore,
	tickets: (store: FailoverStore) => TicketStore,
	names: string[],
	ticket: Ticket,
	ticketText: string,
	scope: string,
	outcome: Outcome,
): Promise<Reported> {
	const key = names[ticket.provider];
	const tally = newTally();
	let claimed = false;
	const done = await compareAndSet(engine, store, names, false, tally, async () => {
		const snap = await store.read(key === undefined ? [] : [key]);
		let r;
		try {
			r = engine.report(snap.now, ticket, scope, outcome, snap.rows.join(ROW_SEPARATOR));
		} catch (e) {
			if ((e as { code?: string }).code === 'invalid_ticket')
				throw new TicketRefused((e as Error).message);
			throw e;
		}
		if (!claimed) {
			if (!(await tickets(store).claim(ticket.lease, ticketText)))
				throw new TicketRefused(
					'it was already reported, or it expired, or it was not issued by a Check Provider node on this state store',
				);
			claimed = true;
		}
		return r;
	});
	const r = done.value;
	return {
		attempt: r.attempt,
		transition: r.writes && !done.dropped ? r.transition : null,
		counters: r.counters,
		committed: tally.committed,
		casRetries: tally.lost,
		dropped: done.dropped,
		served: r.served,
	};
}
