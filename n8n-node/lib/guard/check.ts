// Check Provider, one item: which provider of the chain may be called now, without calling
// anything. The engine decides (breaker, cooldown, probe lease, rate gate, in-flight lease) from
// the rows read at the store's time; this writes what it returns with compare-and-set (on a lost
// race: read and check again, as runItem does for poll) and records a Go's ticket with its time
// to live, so Report Outcome can claim it once.
import type { Counters, Decision, Engine, Transition } from '../engine';
import { ROW_SEPARATOR } from '../engineConstants';
import type { FailoverStore } from '../store/failover';
import type { TicketStore } from '../store/tickets';
import { ticketText } from './pairing';

/** Lost compare-and-set races tolerated before giving up on the shared store (as runItem). */
const MAX_RACES = 20;

export interface Checked {
	decision: Decision;
	/** The ticket as recorded in the store (Go only): Report presents exactly this text. */
	ticketText?: string;
	transition: (Transition & { provider: number }) | null;
	skipped: { provider: number; reason: string; until_ms: number }[];
	/** The engine's count of this check, by provider index (the committed attempt's only). */
	counters: Counters[];
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
	for (let races = 0, lost = 0; ;) {
		const snap = await store.read(names);
		const c = engine.check(snap.now, snap.rows.join(ROW_SEPARATOR), lease, scope);
		if (c.writes && !(await store.write(names[c.writes.provider], c.writes.rows))) {
			lost++;
			if (++races > MAX_RACES)
				await store.fallBack(
					`${MAX_RACES + 1} compare-and-set races lost in a row`,
					async () => undefined,
				);
			continue; // nothing committed: read again and check again
		}
		const transition =
			c.writes && c.transition ? { ...c.transition, provider: c.writes.provider } : null;
		const result: Checked = {
			decision: c.decision,
			transition,
			skipped: c.skipped,
			counters: c.counters,
			casRetries: lost,
		};
		if (c.decision.kind === 'go') {
			const t = c.decision.ticket;
			result.ticketText = ticketText(t);
			await tickets(store).put(t.lease, result.ticketText, c.decision.ticket_ttl_ms);
		}
		return result;
	}
}
