// In-memory store: shared by every execution in this n8n process, not across queue-mode workers.
import type { ProviderView, Writes } from '../engine';
import { KINDS, rowsOf } from './rowCodec';
import type { Snapshot, StateStore } from './types';

type Rows = Record<string, { version: number }>;

/** The rows of this process, keyed by scope and provider. */
const processRows = new Map<string, Rows>();
const processCounters = new Map<string, Record<string, number>>();

export class MemoryStore implements StateStore {
	constructor(
		private readonly scope: string,
		private readonly rows: Map<string, Rows> = processRows,
	) {}

	private key(provider: string) {
		return `${this.scope}\u0000${provider}`;
	}

	async read(keys: string[]): Promise<Snapshot> {
		return {
			now: Date.now(),
			views: keys.map((k) => ({ ...(this.rows.get(this.key(k)) ?? {}) }) as ProviderView),
		};
	}

	async write(keys: string[], writes: Writes): Promise<boolean> {
		const key = this.key(keys[writes.provider]);
		const current = this.rows.get(key) ?? {};
		const rows = rowsOf(writes);
		if (rows.some((r) => (current[r.kind]?.version ?? 0) !== r.expected)) return false;
		const updated = { ...current };
		for (const r of rows) updated[r.kind] = r.row;
		this.rows.set(key, updated);
		return true;
	}

	async now(): Promise<number> {
		return Date.now();
	}

	async reset(key: string): Promise<void> {
		this.rows.delete(this.key(key));
		processCounters.delete(this.key(key));
	}

	async addCounters(deltas: Record<string, Record<string, number>>): Promise<void> {
		for (const [provider, d] of Object.entries(deltas)) {
			const c = processCounters.get(this.key(provider)) ?? {};
			for (const [name, v] of Object.entries(d)) c[name] = (c[name] ?? 0) + v;
			processCounters.set(this.key(provider), c);
		}
	}

	async readCounters(keys: string[]): Promise<Record<string, Record<string, number>>> {
		return Object.fromEntries(
			keys.map((k) => [k, { ...(processCounters.get(this.key(k)) ?? {}) }]),
		);
	}
}

export { KINDS };
