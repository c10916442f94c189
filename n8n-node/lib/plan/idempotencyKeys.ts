// Idempotency-Key per provider: stable across re-runs of the same item (a deferred item re-queued
// later sends the same key), different per provider. Which methods send it is the engine's rule
// (POST and PATCH), so every provider gets one.
import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

export interface KeyRule {
	add: boolean;
	/** The *Idempotency Key* parameter; empty: the item's JSON. */
	base: string;
}

export function idempotencyKeys(
	providers: { name: string }[],
	rule: KeyRule,
	item: IDataObject,
): (string | null)[] {
	if (!rule.add) return providers.map(() => null);
	const basis = rule.base !== '' ? rule.base : JSON.stringify(item);
	return providers.map((r) =>
		createHash('sha256').update(`${basis}:${r.name}`).digest('hex').slice(0, 32),
	);
}
