// A state store is policy-free: it hands the engine the row texts it holds and writes back the
// texts the engine returns, atomically, comparing versions only (compare-and-set). It never
// reads a row's fields. Time is the store's clock, so workers agree.
import type { RowWrite } from '../engine';

export interface Snapshot {
	/** The store's clock, ms since the epoch. */
	now: number;
	/** `ROW_KINDS.length` row texts per key, in key order; '' for a row not written yet. */
	rows: string[];
}

export interface StateStore {
	/** One round trip: the row texts of these providers and the store's time. */
	read(keys: string[]): Promise<Snapshot>;
	/** Write `rows` of provider `key` iff each stored version still equals its `expected`; with
	 * `event` (the engine's text of the transition these rows make), append it to the scope's
	 * events in the same atomic step, so it exists iff the transition committed. */
	write(key: string, rows: RowWrite[], event?: string | null): Promise<boolean>;
	/** Begin reading these rows for the next item while this one's call is out (a shared store
	 * that reads ahead: `readAhead.ts`), to serve for `servesMs` after it is read (the engine's
	 * `read_ahead_ms`); absent where a read costs no round trip. */
	readAhead?(keys: string[], servesMs: number): void;
	/** The store's clock alone. */
	now(): Promise<number>;
	/** Forget a provider's rows and counters (Reset Provider). */
	reset(key: string): Promise<void>;
	/** Add to providers' counters (one round trip for a whole execution). */
	addCounters(deltas: Record<string, Record<string, number>>): Promise<void>;
	readCounters(keys: string[]): Promise<Record<string, Record<string, number>>>;
}
