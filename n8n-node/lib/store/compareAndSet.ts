// Every row write of the package goes through this one loop (an item's poll and outcome, Check
// Provider, Report Outcome): decide on the rows read, write them with compare-and-set, and on a
// lost race ask the engine what next: read again and decide again, give the shared store up,
// drop a record's write, or defer the item. The bound and what happens at it are the engine's.
import type { Engine, RowWrites, WriteCounts } from '../engine';
import { sleep } from 'n8n-workflow';
import { type FailoverStore, StoreUnavailable } from './failover';

/** An engine answer that may carry rows to write (`Polled`, `Recorded`, `Checked`, `Reported`). */
export interface Decided {
	writes?: RowWrites | null;
}

export interface Committed<T> {
	value: T;
	/** The engine's warning when it dropped this write (the item says it in its run data). */
	dropped?: string;
}

/** One item's (or one guard call's) writes: the races they lost, for its run data, and what the
 * committed ones add to the counters (the engine's `RowWrites.counts`, index = provider). */
export interface RaceTally {
	lost: number;
	committed: { provider: number; counts: WriteCounts }[];
}

export const newTally = (): RaceTally => ({ lost: 0, committed: [] });

/**
 * `decide(again)`: read the rows and ask the engine; `again` is false on the first round (a
 * caller may hand over an answer it already has) and true after a lost race. Provider `p`'s rows
 * are written under `keys[p]`. `needsCommit`: the answer cannot be acted on unless its write
 * commits (a lease, a probe, a ticket), unlike a recorded outcome.
 */
export async function compareAndSet<T extends Decided>(
	engine: Engine,
	store: FailoverStore,
	keys: string[],
	needsCommit: boolean,
	tally: RaceTally,
	decide: (again: boolean) => Promise<T>,
): Promise<Committed<T>> {
	for (let inRow = 0, again = false; ; again = true) {
		const value = await decide(again);
		const w = value.writes;
		if (!w) return { value };
		if (await store.write(keys[w.provider], w.rows, w.event)) {
			if (w.counts) tally.committed.push({ provider: w.provider, counts: w.counts });
			return { value };
		}
		tally.lost++;
		const verdict = engine.raceLost(++inRow, store.degraded !== undefined, needsCommit);
		switch (verdict.kind) {
			case 'retry':
				// The engine's jittered wait: writers that collided do not collide again at once.
				if (verdict.after_ms > 0) await sleep(verdict.after_ms);
				break;
			case 'fall_back': // throws StoreUnavailable when the store fails closed
				await store.fallBack(verdict.cause, async () => undefined);
				inRow = 0;
				break;
			case 'defer':
				throw new StoreUnavailable(verdict.reason, verdict.cause);
			case 'drop_write':
				return { value, dropped: verdict.warning };
		}
	}
}
