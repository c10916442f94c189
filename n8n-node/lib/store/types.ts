// A state store is policy-free: it hands the engine the row texts it holds and writes back the
// texts the engine returns, atomically, comparing versions only (compare-and-set). It never
// reads a row's fields. Time is the store's clock, so workers agree.
import type { ReadAhead, RowWrite } from '../engine';

export interface Snapshot {
	/** The store's clock, ms since the epoch. */
	now: number;
	/** `ROW_KINDS.length` row texts per key, in key order; '' for a row not written yet. */
	rows: string[];
}

export interface StateStore {
	/** One round trip: the row texts of these providers and the store's time. */
	/** `granted` false: a read the engine's grant to rows already read may not serve (a hedge's
	 * decision, within the item the grant was given by: the grant is the next item's). */
	read(keys: string[], granted?: boolean): Promise<Snapshot>;
	/** Write `rows` of provider `key` (a row naming its own `key` under that: a Fair Share Key's
	 * quota row) iff each stored version still equals its `expected`; with
	 * `event` (the engine's text of the transition these rows make), append it to the scope's
	 * events in the same atomic step, so it exists iff the transition committed. */
	write(key: string, rows: RowWrite[], event?: string | null): Promise<boolean>;
	/** The engine's grant to the rows of these keys (`Polled.read_ahead`): the last read serves the
	 * next item, or a new one begins while this item's call is out (a shared store that reads
	 * ahead: `readAhead.ts`); absent where a read costs no round trip. */
	readAhead?(keys: string[], grant: ReadAhead): void;
	/** The store's clock alone. */
	now(): Promise<number>;
	/** Forget a provider's rows and counters (Reset Provider). */
	reset(key: string): Promise<void>;
	/** Add to providers' counters (one round trip for a whole execution). */
	addCounters(deltas: Record<string, Record<string, number>>): Promise<void>;
	readCounters(keys: string[]): Promise<Record<string, Record<string, number>>>;
}
