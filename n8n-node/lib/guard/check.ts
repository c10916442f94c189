// Check Provider, one item: which provider of the chain may be called now, without calling
// anything. The engine decides (breaker, cooldown, probe lease, rate gate, in-flight lease) from
// the rows read at the store's time; this writes what it returns through the one compare-and-set
// loop (on a lost race: read and check again) and records a Go's ticket with its time
// to live, so Report Outcome can claim it once.
import type { Counters, Decision, Engine, Transition } from '../engine';
import { ROW_SEPARATOR } from '../engineConstants';
import type { FailoverStore } from '../store/failover';
import { compareAndSet, newTally, type RaceTally } from '../store/compareAndSet';
import type { TicketStore } from '../store/tickets';
import { ticketText } from './pairing';

export interface Checked {
	decision: Decision;
	/** The ticket as recorded in the store (Go only): Report presents exactly this text. */
	ticketText?: string;
	transition: (Transition & { provider: number }) | null;
	skipped: { provider: number; reason: string; until_ms?: number }[];
	/** The engine's count of this check, by provider index (the committed attempt's only). */
	counters: Counters[];
	/** What the check's committed write adds to the counters (its transition). */
	committed: RaceTally['committed'];
	casRetries: number;
}

export async function checkItem(
	engine: Engine,
	store: FailoverStore,
	/** The tickets beside the item's store, under its fail-open/closed policy. */
	tickets: (store: FailoverStore) => TicketStore,
	names: string[],
	lease: string,
	scope: string,
): Promise<Checked> {
	const tally = newTally();
	const { value: c } = await compareAndSet(engine, store, names, true, tally, async () => {
		const snap = await store.read(names);
		return engine.check(snap.now, snap.rows.join(ROW_SEPARATOR), lease, scope);
	});
	const transition =
		c.writes && c.transition ? { ...c.transition, provider: c.writes.provider } : null;
	const result: Checked = {
		decision: c.decision,
		transition,
		skipped: c.skipped,
		counters: c.counters,
		committed: tally.committed,
		casRetries: tally.lost,
	};
	if (c.decision.kind === 'go') {
		const t = c.decision.ticket;
		result.ticketText = ticketText(t);
		await tickets(store).put(t.lease, result.ticketText, c.decision.ticket_ttl_ms);
	}
	return result;
}
