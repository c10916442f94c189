// Loads the WASM policy engine lazily, on the first execute(): n8n loads every node module at
// start-up in every process, and a failure there would disable the whole package. A load
// failure here becomes a clear NodeOperationError on the node instead.
import { INode, NodeOperationError } from 'n8n-workflow';
import type * as Wasm from '../../pkg/engine';

export type EngineModule = typeof Wasm;
export type * from '../../pkg/engine';

let loaded: EngineModule | undefined;

/** The engine module; throws a plain Error when it cannot be loaded (`loadEngine` says it as the
 * node's error). Stores ask it only after the node loaded it for the item's engine. */
export function engineModule(): EngineModule {
	// dist/engine/engine.js: wasm-bindgen's glue with the .wasm bytes inside it
	// (scripts/embed-engine.mjs), so loading needs no fs, path or __dirname.
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	return (loaded ??= require('../engine/engine.js') as EngineModule);
}

export function loadEngine(node: INode): EngineModule {
	try {
		return engineModule();
	} catch (error) {
		throw new NodeOperationError(node, 'The resilience engine (WebAssembly) could not be loaded', {
			description: `Reinstall the package: its dist/engine/engine.js is missing or broken (${(error as Error).message})`,
		});
	}
}
