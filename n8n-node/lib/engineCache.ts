// One cache of engines, by chain configuration, for every node of the package in this process.
// Building an engine validates its configuration and allocates in WASM, so it is built once and
// reused across items, executions and nodes. Bounded, least recently used: a workflow whose chain
// is an expression per item cannot grow memory without bound. An evicted engine is not freed
// here (an item or a supplied chat model may still hold it): wasm-bindgen's FinalizationRegistry
// frees it once nothing references it.
import type { INode } from 'n8n-workflow';
import { loadEngine, type ChainConfig, type Engine } from './engine';

/** Distinct configurations kept (README: "Engine decisions"). */
export const ENGINE_CACHE_SIZE = 64;

const cache = new Map<string, Engine>();

/** The engine for `config`; a configuration the engine refuses is `invalid(error)`'s to throw. */
export function engineFor(
	node: INode,
	config: ChainConfig,
	invalid: (error: Error) => Error,
): Engine {
	const key = JSON.stringify(config);
	let engine = cache.get(key);
	if (engine) {
		cache.delete(key); // re-inserted below: the most recently used is last
	} else {
		try {
			engine = new (loadEngine(node).Engine)(config);
		} catch (error) {
			throw invalid(error as Error);
		}
		if (cache.size >= ENGINE_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
	}
	cache.set(key, engine);
	return engine;
}

/** How many engines the cache holds (tests). */
export function cachedEngines(): number {
	return cache.size;
}
