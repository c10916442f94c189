// The names an item's poll reads rows under: each provider's, then its key's where the chain has
// Key Quotas (the engine's `keyRow()`, asked once per engine: the names are its configuration's).
import type { Engine } from './engine';

const known = new WeakMap<Engine, string[]>();

export function rowKeys(engine: Engine, requests: { name: string }[]): string[] {
	let keys = known.get(engine);
	if (keys === undefined) {
		const keyRow = engine.keyRow();
		keys = requests.map((r) => r.name).concat(keyRow === undefined ? [] : [keyRow]);
		known.set(engine, keys);
	}
	return keys;
}
